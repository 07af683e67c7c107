using LLRP.Tests.Infrastructure;

namespace LLRP.Tests;

/// <summary>
/// Relaying the downstream's response: RFC 9112 §6.3, §7; RFC 9110 §15.2.
/// </summary>
public sealed class ResponseTests(DefaultProxies farm) : IClassFixture<DefaultProxies>
{
    public static TheoryData<string> Variant => Variants.Each();

    private static async Task<(RawResponse Response, RawClient Client)> ExchangeAsync(ProxyUnderTest p, string raw, string method = "GET")
    {
        var c = await p.ConnectAsync();
        await c.SendAsync(raw);
        var r = await c.ReadResponseAsync(method);
        if (r is null)
        {
            await c.DisposeAsync();
            Assert.Fail($"the proxy closed without a response; {p.Downstream.Describe()}");
        }
        return (r, c);
    }

    private static string Req(string method = "GET", string version = "HTTP/1.1") => $"{method} /r HTTP/{version[5..]}\r\nHost: example.com\r\n\r\n";

    [Theory, MemberData(nameof(Variant))]
    public async Task Keeps_downstream_content_length(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Ok("hello world", "X-Origin: 1\r\n");
        var (r, c) = await ExchangeAsync(p, Req());
        await using var _ = c;
        Assert.True(r.Status == 200 && r.BodyText == "hello world" && r.Header("Content-Length") == "11" && !r.Chunked, $"{r}");
        Assert.Equal("1", r.Header("X-Origin"));
    }

    // RFC 9112 §7.1: a chunked downstream body reaches an HTTP/1.1 client chunked, bytes identical, trailers at most.
    public static TheoryData<string, bool> ChunkedResponses => Variants.Cross(new[] { false, true });

    [Theory, MemberData(nameof(ChunkedResponses))]
    public async Task Rechunks_chunked_response_for_http11_client(string variant, bool byteByByte)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
            with
        { ByteByByte = byteByByte };
        var (r, c) = await ExchangeAsync(p, Req());
        await using var _ = c;
        Assert.True(r.Status == 200 && r.Chunked && r.Complete && r.BodyText == "hello world", $"{r}");
        Assert.Null(r.Header("Content-Length"));
        Assert.Equal(200, (await c.PingAsync())?.Status);
    }

    // A body of several relay buffers (and a piece more) goes through in many reads and sends, each piece sharing its
    // buffer with the head or with its chunk framing: the client gets every byte, in order, framed as for any body.
    public static TheoryData<string, string> LargeBodyFramings => Variants.Cross(new[] { "content-length", "chunked", "close" });

    [Theory, MemberData(nameof(LargeBodyFramings))]
    public async Task Relays_a_body_of_several_relay_buffers_byte_for_byte(string variant, string framing)
    {
        var p = await farm.GetAsync(variant);
        var body = new byte[5 * LLRP.Http1.ResponseWriter.BodyBufferSize + 321];
        for (var i = 0; i < body.Length; i++)
        {
            body[i] = (byte)((i * 7) + (i / 251));
        }
        var wire = new List<byte>();
        wire.AddRange(Wire.Bytes(framing switch
        {
            "content-length" => $"HTTP/1.1 200 OK\r\nContent-Length: {body.Length}\r\n\r\n",
            "chunked" => "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
            _ => "HTTP/1.1 200 OK\r\n\r\n",
        }));
        if (framing == "chunked")
        {
            // Chunks of 10,000 bytes: their edges fall anywhere in the relay's pieces.
            foreach (var chunk in body.Chunk(10_000))
            {
                wire.AddRange(Wire.Bytes($"{chunk.Length:X}\r\n"));
                wire.AddRange(chunk);
                wire.AddRange(Wire.Bytes("\r\n"));
            }
            wire.AddRange(Wire.Bytes("0\r\n\r\n"));
        }
        else
        {
            wire.AddRange(body);
        }
        p.Downstream.Responder = _ => new DownstreamReply { Bytes = [.. wire], CloseAfter = framing == "close" };

        var (r, c) = await ExchangeAsync(p, Req());
        await using var _ = c;
        Assert.True(r.Status == 200 && r.Complete && r.Chunked == (framing != "content-length"), $"{r}");
        Assert.True(body.AsSpan().SequenceEqual(r.Body), $"{r.Body.Length} bytes arrived of {body.Length}, or different ones");
        Assert.Equal(200, (await c.PingAsync())?.Status);
    }

    // RFC 9112 §6.3 (8): a close-delimited body is chunked to an HTTP/1.1 client, which stays connected.
    public static TheoryData<string, string> CloseDelimited => Variants.Cross(new[]
    {
        "HTTP/1.1 200 OK\r\nX-A: 1\r\n\r\nuntil the end",
        "HTTP/1.0 200 OK\r\nX-A: 1\r\n\r\nuntil the end",
    });

    [Theory, MemberData(nameof(CloseDelimited))]
    public async Task Chunks_close_delimited_response_for_http11_client(string variant, string response)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Raw(response, closeAfter: true);
        var (r, c) = await ExchangeAsync(p, Req());
        await using var _ = c;
        Assert.True(r.Status == 200 && r.Chunked && r.Complete && r.BodyText == "until the end", $"expected a chunked, complete body: {r}");
        Assert.Equal(200, (await c.PingAsync())?.Status);
    }

    // RFC 9112 §7: HTTP/1.0 clients never get chunked; close-delimited (then close) or Content-Length.
    public static TheoryData<string, string> ResponsesFor10 => Variants.Cross(new[]
    {
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world",
    });

    [Theory, MemberData(nameof(ResponsesFor10))]
    public async Task Never_chunks_for_http10_client(string variant, string response)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Raw(response);
        var (r, c) = await ExchangeAsync(p, Req(version: "HTTP/1.0"));
        await using var _ = c;
        Assert.True(r.Status == 200 && !r.Chunked && r.Header("Transfer-Encoding") is null && r.BodyText == "hello world", $"{r}");
        Assert.Equal(Ending.Closed, await c.WaitForEndAsync());
    }

    // RFC 9112 §6.3 (1): no body for HEAD, 204, 304 whatever CL/TE say; the client
    // connection stays in sync (the ping proves no stray bytes were sent).
    public static TheoryData<string, string, string> Bodiless => Variants.Cross(new[]
    {
        ("HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n"),
        ("HEAD", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
        ("GET", "HTTP/1.1 204 No Content\r\n\r\n"),
        ("GET", "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\nETag: \"x\"\r\n\r\n"),
        ("GET", "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n"),
    });

    [Theory, MemberData(nameof(Bodiless))]
    public async Task Sends_no_body_for_head_204_304(string variant, string method, string response)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Raw(response);
        var (r, c) = await ExchangeAsync(p, Req(method), method);
        await using var _ = c;
        var expectedStatus = int.Parse(response.Split(' ')[1], System.Globalization.CultureInfo.InvariantCulture);
        Assert.True(r.Status == expectedStatus, $"{r}");
        if (method == "HEAD" && response.Contains("Content-Length: 10", StringComparison.Ordinal))
        {
            Assert.True(r.Header("Content-Length") == "10", $"HEAD must keep the downstream's Content-Length: {r}");
        }
        if (expectedStatus == 204)
        {
            Assert.True(r.Header("Content-Length") is null && r.Header("Transfer-Encoding") is null, $"RFC 9110 §8.6: no framing fields on 204: {r}");
        }
        var ping = await c.PingAsync();
        Assert.True(ping?.Status == 200 && ping.BodyText == "ok", $"the connection is out of sync after a {expectedStatus} to {method}: {ping?.ToString() ?? "closed"}");
    }

    // RFC 9110 §15.2: 1xx interim responses go to HTTP/1.1 clients, never to HTTP/1.0 clients.
    [Theory, MemberData(nameof(Variant))]
    public async Task Relays_103_early_hints_to_http11_client(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Raw("HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        var (r, c) = await ExchangeAsync(p, Req());
        await using var _ = c;
        Assert.True(r.Status == 200 && r.BodyText == "ok", $"{r}");
        if (!Variants.Get(variant).RelaysInterim)
        {
            // Known difference: HttpClient consumes interim responses itself and never surfaces them.
            Assert.True(r.Interim.Count == 0, $"{r}");
            return;
        }
        Assert.True(r.Interim.Count == 1 && r.Interim[0].Status == 103 && r.Interim[0].Header("Link") == "</s.css>; rel=preload",
            $"expected the 103 relayed before the 200: {r}");
    }

    [Theory, MemberData(nameof(Variant))]
    public async Task Never_relays_1xx_to_http10_client(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Raw("HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        var (r, c) = await ExchangeAsync(p, Req(version: "HTTP/1.0"));
        await using var _ = c;
        Assert.True(r.Status == 200 && r.BodyText == "ok" && r.Interim.Count == 0, $"{r}");
    }

    // RFC 9110 §15.6.3: a malformed downstream response is a 502.
    public static TheoryData<string, string> MalformedResponses => Variants.Cross(new[]
    {
        "HTTP/1.1 abc OK\r\nContent-Length: 2\r\n\r\nok",
        "HTTP/1.1 20 OK\r\nContent-Length: 2\r\n\r\nok",
        "FOO\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nok",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok",
        "HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\nok",
        "HTTP/1.1 200 OK\r\nNoColon\r\nContent-Length: 2\r\n\r\nok",
    });

    [Theory, MemberData(nameof(MalformedResponses))]
    public async Task Answers_502_for_malformed_downstream_response(string variant, string response)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Raw(response, closeAfter: true);
        var (r, c) = await ExchangeAsync(p, Req());
        await using var _ = c;
        Assert.True(r.Status == 502, $"downstream sent '{Wire.Show(response)}', client got {r}");
    }

    // RFC 9110 §15.2.2, §7.8: a server sends 101 only to a request with Upgrade, and the proxy forwards none (h2c
    // included: "Upgrade: h2c" is hop-by-hop and dropped), so any 101 is unsolicited: a 502, and the downstream's next
    // bytes never reach the client as a body or as a tunnel.
    public static TheoryData<string, string> UnsolicitedSwitches => Variants.Cross(new[]
    {
        "GET /r HTTP/1.1\r\nHost: example.com\r\n\r\n",
        "GET /r HTTP/1.1\r\nHost: example.com\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n",
    });

    [Theory, MemberData(nameof(UnsolicitedSwitches))]
    public async Task Answers_502_for_a_101_the_request_did_not_ask_for(string variant, string request)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Raw("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\ntunnelled bytes", closeAfter: true);
        var (r, c) = await ExchangeAsync(p, request);
        await using var _ = c;
        Assert.True(r.Status == 502 && !r.BodyText.Contains("tunnelled", StringComparison.Ordinal), $"client got {r}");
        var forwarded = Assert.Single(await p.Downstream.WaitForForwardedAsync(1));
        Assert.Empty(forwarded.Values("Upgrade"));
    }

    // RFC 9112 §5.1: "A proxy MUST remove any such whitespace from a response message before forwarding it" (or reject: 502).
    [Theory, MemberData(nameof(Variant))]
    public async Task Removes_or_rejects_whitespace_before_colon_in_downstream_response(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Raw("HTTP/1.1 200 OK\r\nX-Bad : 1\r\nContent-Length: 2\r\n\r\nok", closeAfter: true);
        var (r, c) = await ExchangeAsync(p, Req());
        await using var _ = c;
        Assert.True(r.Violations.Count == 0, $"malformed field reached the client: {string.Join("; ", r.Violations)}");
        Assert.True(r.Status == 502 || (r.Status == 200 && r.Header("X-Bad") == "1"), $"expected 502 or the whitespace removed, got {r}");
    }

    // RFC 9110 §5.5: NUL in a field value MUST be rejected (502) or replaced with SP before forwarding.
    [Theory, MemberData(nameof(Variant))]
    public async Task Rejects_or_replaces_nul_in_downstream_field_value(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Raw("HTTP/1.1 200 OK\r\nX-Bad: a\u0000b\r\nContent-Length: 2\r\n\r\nok", closeAfter: true);
        var (r, c) = await ExchangeAsync(p, Req());
        await using var _ = c;
        Assert.True(r.Status == 502 || (r.Status == 200 && r.Header("X-Bad") == "a b"), $"expected 502 or NUL replaced by SP, got {r}");
    }

    // RFC 9112 §5.2: obs-fold in a response is replaced by one or more SP (or the response rejected: 502).
    [Theory, MemberData(nameof(Variant))]
    public async Task Rejects_or_unfolds_obs_fold_in_downstream_response(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Raw("HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\nContent-Length: 2\r\n\r\nok", closeAfter: true);
        var (r, c) = await ExchangeAsync(p, Req());
        await using var _ = c;
        Assert.True(r.Violations.Count == 0, $"the fold reached the client: {string.Join("; ", r.Violations)}");
        Assert.True(r.Status == 502 || (r.Status == 200 && System.Text.RegularExpressions.Regex.IsMatch(r.Header("X-Folded") ?? "", "^a[ \\t]+b$")), $"expected 502 or the fold replaced by SP, got {r}");
    }

    // A downstream that closes without answering is a 502.
    [Theory, MemberData(nameof(Variant))]
    public async Task Answers_502_when_downstream_closes_without_response(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.CloseWithoutResponse;
        var (r, c) = await ExchangeAsync(p, "POST /r HTTP/1.1\r\nHost: example.com\r\nContent-Length: 2\r\n\r\nhi", "POST");
        await using var _ = c;
        Assert.True(r.Status == 502, $"{r}");
    }

    // A body cut short after the response started aborts the client connection — the
    // client must never see a truncated body as complete.
    public static TheoryData<string, string> CutShort => Variants.Cross(new[]
    {
        "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
    });

    [Theory, MemberData(nameof(CutShort))]
    public async Task Aborts_client_when_downstream_body_is_cut_short(string variant, string response)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Raw(response, closeAfter: true);
        await using var c = await p.ConnectAsync();
        await c.SendAsync(Req());
        var r = await c.ReadResponseAsync();
        if (r is null || r.Status == 502)
        {
            // Aborted before the head was relayed, or detected in time for a 502: never a truncated body either way.
            return;
        }
        Assert.True(!r.Complete, $"the client received a truncated body as a complete message: {r}");
        Assert.Equal(Ending.Closed, await c.WaitForEndAsync());
    }

    // RFC 9110 §15: an unusual but valid status passes through with its body.
    [Theory, MemberData(nameof(Variant))]
    public async Task Relays_uncommon_status_with_body(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Raw("HTTP/1.1 418 I'm a teapot\r\nContent-Length: 3\r\n\r\ntea");
        var (r, c) = await ExchangeAsync(p, Req());
        await using var _ = c;
        Assert.True(r.Status == 418 && r.BodyText == "tea" && r.Version == "HTTP/1.1", $"{r}");
    }

    // RFC 9110 §6.6.1: Date and Server from the downstream are kept.
    [Theory, MemberData(nameof(Variant))]
    public async Task Keeps_origin_date_and_server(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Ok(extraHeaders: "Date: Wed, 21 Oct 2015 07:28:00 GMT\r\nServer: downstream/1.0\r\n");
        var (r, c) = await ExchangeAsync(p, Req());
        await using var _ = c;
        Assert.Equal("Wed, 21 Oct 2015 07:28:00 GMT", r.Header("Date"));
        Assert.Equal("downstream/1.0", r.Header("Server"));
    }
}
