using LLRP.Tests.Infrastructure;

namespace LLRP.Tests;

/// <summary>Request body framing: RFC 9112 §6, §7.</summary>
public sealed class RequestBodyTests(DefaultProxies farm) : IClassFixture<DefaultProxies>
{
    public static TheoryData<string> Variant => Variants.Each();

    private static string Post(string fields, string body = "") =>
        $"POST /upload HTTP/1.1\r\nHost: example.com\r\n{fields}\r\n{body}";

    // RFC 9112 §6.2: Content-Length framing is forwarded as the same length and identical bytes.
    public static TheoryData<string, int> Lengths => Variants.Cross(new[] { 0, 1, 5, 4096, 100_000, 1_000_000 });

    [Theory, MemberData(nameof(Lengths))]
    public async Task Forwards_content_length_body(string variant, int length)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.ForwardedAsync(p, Post($"Content-Length: {length}\r\nContent-Type: application/octet-stream\r\n", Wire.BodyText(length)));
    }

    // RFC 9112 §6.3 (7): a request without Content-Length or Transfer-Encoding has no body; what follows is the next request.
    [Theory, MemberData(nameof(Variant))]
    public async Task Request_without_framing_has_no_body(string variant)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.ForwardedAsync(p, Post(""));
    }

    // RFC 9110 §8.6 / RFC 9112 §6.3 (5): leading zeros are digits; OWS is not part of the value.
    public static TheoryData<string, string> EquivalentLengths => Variants.Cross(new[] { "005", "  5  ", "\t5" });

    [Theory, MemberData(nameof(EquivalentLengths))]
    public async Task Accepts_content_length_with_leading_zeros_or_ows(string variant, string value)
    {
        var p = await farm.GetAsync(variant);
        var forwarded = await Verdict.ForwardedAsync(p, Post($"Content-Length: {value}\r\n", "hello"));
        Assert.Equal("hello", Wire.Text(forwarded.Body));
    }

    // RFC 9110 §8.6, RFC 9112 §6.3 (5): differing or invalid Content-Length is unrecoverable → 400 + close.
    public static TheoryData<string, string> BadLengths => Variants.Cross(new[]
    {
        "Content-Length: 5\r\nContent-Length: 6\r\n",
        // Identical duplicates MAY be collapsed; the proxy takes the strict reading (nginx's) and refuses them.
        "Content-Length: 5\r\nContent-Length: 5\r\n",
        "Content-Length: 5, 6\r\n",
        "Content-Length: 5,5\r\n",
        "Content-Length: +5\r\n",
        "Content-Length: -1\r\n",
        "Content-Length: 0x10\r\n",
        "Content-Length: 5 5\r\n",
        "Content-Length: 1_0\r\n",
        "Content-Length: 5.0\r\n",
        "Content-Length:\r\n",
        "Content-Length: abc\r\n",
        "Content-Length: 5;\r\n",
        "Content-Length: \"5\"\r\n",
        "Content-Length: 99999999999999999999\r\n",
        "Content-Length: 18446744073709551616\r\n",
        "Content-Length: 5\u0000\r\n",
    });

    [Theory, MemberData(nameof(BadLengths))]
    public async Task Rejects_invalid_or_differing_content_length(string variant, string fields)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, Post(fields, "hello"), Verdict.BadRequest, method: "POST");
    }

    // RFC 9112 §6.1: "A server MAY reject a request that contains both Content-Length and Transfer-Encoding... Regardless,
    // the server MUST close the connection after responding." The contract rejects: 400 + close.
    public static TheoryData<string, string> ContentLengthAndTransferEncoding => Variants.Cross(new[]
    {
        "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
        "Content-Length: 0\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: chunked\r\nContent-Length: 100\r\n",
    });

    [Theory, MemberData(nameof(ContentLengthAndTransferEncoding))]
    public async Task Rejects_content_length_with_transfer_encoding(string variant, string fields)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, Post(fields, "5\r\nhello\r\n0\r\n\r\n"), Verdict.BadRequest, method: "POST");
    }

    // RFC 9112 §6.3 (4): "If a Transfer-Encoding header field is present in a request and the chunked transfer coding is
    // not the final encoding, the message body length cannot be determined reliably; the server MUST respond with the 400
    // (Bad Request) status code and then close the connection."
    public static TheoryData<string, string> NotFinalChunked => Variants.Cross(new[]
    {
        "Transfer-Encoding: gzip\r\n",
        "Transfer-Encoding: chunked, gzip\r\n",
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n",
        "Transfer-Encoding: deflate\r\n",
    });

    [Theory, MemberData(nameof(NotFinalChunked))]
    public async Task Rejects_transfer_encoding_not_ending_in_chunked(string variant, string fields)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, Post(fields, "5\r\nhello\r\n0\r\n\r\n"), Verdict.BadRequest, method: "POST");
    }

    // RFC 9112 §6.1: a transfer coding the server does not understand SHOULD get 501; never fall back to CL.
    public static TheoryData<string, string> UnknownCodings => Variants.Cross(new[]
    {
        "Transfer-Encoding: identity\r\n",
        "Transfer-Encoding: xchunked\r\n",
        "Transfer-Encoding: chunk\r\n",
        "Transfer-Encoding: gzip, chunked\r\n",
        "Transfer-Encoding: identity, chunked\r\n",
        "Transfer-Encoding: cow, chunked\r\n",
    });

    [Theory, MemberData(nameof(UnknownCodings))]
    public async Task Rejects_unsupported_transfer_coding(string variant, string fields)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, Post(fields, "5\r\nhello\r\n0\r\n\r\n"), [400, 501], method: "POST");
    }

    // RFC 9112 §6.1: "A sender MUST NOT apply the chunked transfer coding more than once".
    public static TheoryData<string, string> ChunkedTwice => Variants.Cross(new[]
    {
        "Transfer-Encoding: chunked, chunked\r\n",
        "Transfer-Encoding: chunked,chunked\r\n",
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
    });

    [Theory, MemberData(nameof(ChunkedTwice))]
    public async Task Rejects_chunked_applied_twice(string variant, string fields)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, Post(fields, "5\r\nhello\r\n0\r\n\r\n"), Verdict.BadRequest, method: "POST");
    }

    // RFC 9112 §7: transfer-coding names are case-insensitive; OWS around list members is allowed.
    public static TheoryData<string, string> ChunkedSpellings => Variants.Cross(new[]
    {
        "Transfer-Encoding: chunked\r\n",
        "Transfer-Encoding: Chunked\r\n",
        "Transfer-Encoding: CHUNKED\r\n",
        "Transfer-Encoding: chunked \r\n",
        "Transfer-Encoding:\tchunked\r\n",
    });

    [Theory, MemberData(nameof(ChunkedSpellings))]
    public async Task Accepts_chunked_spellings(string variant, string fields)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.ForwardedAsync(p, Post(fields, "5\r\nhello\r\n0\r\n\r\n"));
    }

    // CTLs around "chunked" are not OWS; "chunked" takes no parameters (RFC 9112 §7: SHOULD be an error).
    public static TheoryData<string, string> ObfuscatedChunked => Variants.Cross(new[]
    {
        "Transfer-Encoding: \u000bchunked\r\n",
        "Transfer-Encoding: \u000cchunked\r\n",
        "Transfer-Encoding: chunked\u0000\r\n",
        "Transfer-Encoding: \u0001chunked\r\n",
        "Transfer-Encoding: chunked;x=y\r\n",
        "Transfer-Encoding: \"chunked\"\r\n",
    });

    [Theory, MemberData(nameof(ObfuscatedChunked))]
    public async Task Rejects_obfuscated_chunked(string variant, string fields)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, Post(fields, "5\r\nhello\r\n0\r\n\r\n"), [400, 501], method: "POST");
    }

    // RFC 9110 §5.6.1: empty list elements MAY be ignored — then forward canonical chunked — or the request rejected.
    public static TheoryData<string, string> EmptyListElements => Variants.Cross(new[]
    {
        "Transfer-Encoding: ,chunked\r\n",
        "Transfer-Encoding: chunked,\r\n",
    });

    [Theory, MemberData(nameof(EmptyListElements))]
    public async Task Ignores_or_rejects_empty_list_elements_in_transfer_encoding(string variant, string fields)
    {
        var p = await farm.GetAsync(variant);
        var raw = Post(fields, "5\r\nhello\r\n0\r\n\r\n");
        await using var c = await p.ConnectAsync();
        await c.SendAsync(raw);
        var r = await c.ReadResponseAsync("POST");
        Assert.True(r is not null, "closed without a response");
        if (r.Status == 200)
        {
            var forwarded = await p.Downstream.WaitForForwardedAsync(1);
            Assert.Single(forwarded);
            ExpectedForward.FromClientRequest(raw).AssertMatches(forwarded[0], p.Variant);
        }
        else
        {
            Assert.True(r.Status == 400, $"expected 200 (forwarded canonically) or 400, got {r}");
            Assert.Equal(Ending.Closed, await c.WaitForEndAsync());
            await Verdict.NothingForwardedAsync(p, false, raw);
        }
    }

    // RFC 9112 §6.1: "A server that receives a request message with a transfer coding it does not understand..." and
    // "MUST treat the message as if the framing is faulty... and close" for Transfer-Encoding in HTTP/1.0.
    [Theory, MemberData(nameof(Variant))]
    public async Task Rejects_transfer_encoding_in_http10(string variant)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, "POST / HTTP/1.0\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
            Verdict.BadRequest, method: "POST");
    }

    // RFC 9112 §7.1: chunked bodies are de-chunked and re-chunked; extensions are not forwarded (CVE-2025-55315 class).
    public static TheoryData<string, string> ValidChunkedBodies => Variants.Cross(new[]
    {
        "5\r\nhello\r\n0\r\n\r\n",
        "0\r\n\r\n",
        "005\r\nhello\r\n0\r\n\r\n",
        "A\r\n0123456789\r\n0\r\n\r\n",
        "a\r\n0123456789\r\n000\r\n\r\n",
        "1\r\nh\r\n1\r\ne\r\n3\r\nllo\r\n0\r\n\r\n",
        "5;ext=1\r\nhello\r\n0\r\n\r\n",
        "5;ext=\"quoted; value\"\r\nhello\r\n0;last\r\n\r\n",
        "5;a;b=c\r\nhello\r\n0\r\n\r\n",
        // RFC 9112 §7.1.1: BWS may precede ';' and surround '='.
        "5 ;ext\r\nhello\r\n0\r\n\r\n",
        "5\t; a = b ;c\r\nhello\r\n0\r\n\r\n",
    });

    [Theory, MemberData(nameof(ValidChunkedBodies))]
    public async Task Forwards_chunked_body_dechunked_identical(string variant, string body)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.ForwardedAsync(p, Post("Transfer-Encoding: chunked\r\n", body));
    }

    [Theory, MemberData(nameof(Variant))]
    public async Task Forwards_large_chunked_body(string variant)
    {
        var p = await farm.GetAsync(variant);
        var data = Wire.BodyText(300_000);
        var chunks = string.Concat(Enumerable.Range(0, 30).Select(i => $"2710\r\n{data.Substring(i * 10_000, 10_000)}\r\n"));
        await Verdict.ForwardedAsync(p, Post("Transfer-Encoding: chunked\r\n", chunks + "0\r\n\r\n"));
    }

    // RFC 9112 §7.1: chunk-size = 1*HEXDIG, overflow anticipated; §7.1.1 chunk-ext = token / quoted-string; chunk data
    // is followed by exactly CRLF. The head may already be downstream: the proxy must then abort it.
    public static TheoryData<string, string> BadChunkedBodies => Variants.Cross(new[]
    {
        "0x5\r\nhello\r\n0\r\n\r\n",
        "+5\r\nhello\r\n0\r\n\r\n",
        "-5\r\nhello\r\n0\r\n\r\n",
        " 5\r\nhello\r\n0\r\n\r\n",
        "5_0\r\nhello\r\n0\r\n\r\n",
        "\r\nhello\r\n0\r\n\r\n",
        "Z\r\nhello\r\n0\r\n\r\n",
        "10000000000000005\r\nhello\r\n0\r\n\r\n",
        "FFFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n",
        "5\nhello\r\n0\r\n\r\n",
        "5;a\nb\r\nhello\r\n0\r\n\r\n",
        "5;a\rb\r\nhello\r\n0\r\n\r\n",
        "5;a\u0000\r\nhello\r\n0\r\n\r\n",
        "5;a=\u0001\r\nhello\r\n0\r\n\r\n",
        "5;\r\nhello\r\n0\r\n\r\n",
        "5\r;\r\nhello\r\n0\r\n\r\n",
        "5;" + new string('a', 70_000) + "\r\nhello\r\n0\r\n\r\n",
        "5\r\nhelloXX\r\n0\r\n\r\n",
        "5\r\nhello\n0\r\n\r\n",
        "5\r\nhello0\r\n\r\n",
        "5\r\nhello\r\n0\n\r\n",
        "5\r\nhello\r\n0\r\n\n",
        "5\r\nhello\r\n0\r\nX-T: 1\n\r\n",
        "3\r\nhello\r\n0\r\n\r\n",
        // RFC 9112 §7.1: chunk = chunk-size [ chunk-ext ] CRLF, and §7.1.1 puts BWS only before a chunk-ext's ';':
        // whitespace before CRLF is not in the grammar (and recipients disagree on it).
        "5 \r\nhello\r\n0\r\n\r\n",
        "5\t\r\nhello\r\n0\r\n\r\n",
        "5;a=b \r\nhello\r\n0\r\n\r\n",
        "5\r\nhello\r\n0 \r\n\r\n",
    });

    [Theory, MemberData(nameof(BadChunkedBodies))]
    public async Task Rejects_malformed_chunked_body(string variant, string body)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, Post("Transfer-Encoding: chunked\r\n", body), Verdict.BadRequest, bodyError: true, method: "POST");
    }

    // RFC 9110 §6.5: trailers are dropped unless the client sent "TE: trailers"; they never merge into the header section
    //.
    public static TheoryData<string, string> Trailers => Variants.Cross(new[]
    {
        "X-Trailer: 1\r\n",
        "Content-Length: 100\r\n",
        "Transfer-Encoding: chunked\r\n",
        "Host: evil.example\r\n",
        "Authorization: Basic ZXZpbDpldmls\r\n",
        "X-A: 1\r\nX-B: 2\r\n",
    });

    [Theory, MemberData(nameof(Trailers))]
    public async Task Drops_request_trailers(string variant, string trailers)
    {
        var p = await farm.GetAsync(variant);
        var raw = Post("Transfer-Encoding: chunked\r\n", $"5\r\nhello\r\n0\r\n{trailers}\r\n");
        var expected = ExpectedForward.FromClientRequest(raw);
        await Verdict.ForwardedAsync(p, raw, expected);
    }

    // RFC 9110 §9.3.1: GET with a body is Ambiguous in the desync-guardian corpus; the project rejects it,
    // and must never drop the body while keeping the connection (which would desync the next request).
    [Theory, MemberData(nameof(Variant))]
    public async Task Rejects_get_with_content_length_body(string variant)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, "GET / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\n\r\nhello", Verdict.AnyRejection);
    }

    // (Acceptable in the corpus) GET with Content-Length: 0 is forwarded.
    [Theory, MemberData(nameof(Variant))]
    public async Task Forwards_get_with_zero_content_length(string variant)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.ForwardedAsync(p, "GET /zero HTTP/1.1\r\nHost: example.com\r\nContent-Length: 0\r\n\r\n");
    }

    // RFC 9112 §6.3: a client that goes away mid-body aborts the downstream request; nothing complete is
    // forwarded, and the half-fed downstream connection is never reused (the next request would be read as body bytes).
    [Theory, MemberData(nameof(Variant))]
    public async Task Aborts_upstream_when_client_leaves_mid_body(string variant)
    {
        var p = await farm.GetAsync(variant);
        await using (var c = await p.ConnectAsync())
        {
            await c.SendAsync(Post("Content-Length: 100\r\n", "only ten b"));
            // Give the proxy the head and part of the body, then vanish without a response.
            await p.Downstream.WaitUntilAsync(o => o.InFlight.Count > 0, TimeSpan.FromSeconds(2));
        }
        await Verdict.NothingForwardedAsync(p, partialAllowed: true, "client left mid-body");
        // The downstream connection that carried the partial request must not carry the next one.
        for (var i = 0; i < 3; i++)
        {
            await Verdict.ForwardedAsync(p, $"POST /after{i} HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\n\r\nhello");
            p.Downstream.Reset();
        }
    }

    // RFC 9110 §10.1.1: the proxy answers 100 Continue itself when it starts reading the body and does not forward
    // Expect (contract).
    [Theory, MemberData(nameof(Variant))]
    public async Task Answers_expect_100_continue_and_forwards_body(string variant)
    {
        var p = await farm.GetAsync(variant);
        var head = "POST /expect HTTP/1.1\r\nHost: example.com\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n";
        await using var c = await p.ConnectAsync();
        await c.SendAsync(head);
        // The client waits for 100 before sending the body: a proxy that never sends it fails here (bounded).
        var interim = await ReadInterimAsync(c);
        Assert.True(interim == 100, $"expected '100 Continue' before the body, got {interim?.ToString() ?? "a closed connection"}");
        await c.SendAsync("hello");
        var r = await c.ReadResponseAsync("POST");
        Assert.True(r?.Status == 200, $"final response: {r}");
        var forwarded = await p.Downstream.WaitForForwardedAsync(1);
        Assert.Single(forwarded);
        ExpectedForward.FromClientRequest(head + "hello").AssertMatches(forwarded[0], p.Variant);
    }

    // A client that sends the body at once anyway (RFC 9110 §10.1.1 allows it) still gets exactly one final response.
    [Theory, MemberData(nameof(Variant))]
    public async Task Expect_100_continue_with_body_sent_at_once(string variant)
    {
        var p = await farm.GetAsync(variant);
        var raw = "POST /expect HTTP/1.1\r\nHost: example.com\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello";
        await Verdict.ForwardedAsync(p, raw, method: "POST");
    }

    private static async Task<int?> ReadInterimAsync(RawClient c) => (await c.ReadOneHeadAsync())?.Status;
}
