using LLRP.Tests.Infrastructure;

namespace LLRP.Tests;

/// <summary>Request line and request-target: RFC 9112 §2.2, §2.3, §3, §3.2.</summary>
public sealed class RequestLineTests(DefaultProxies farm) : IClassFixture<DefaultProxies>
{
    private const string Host = "Host: example.com\r\n";

    public static TheoryData<string> Variant => Variants.Each();

    [Theory, MemberData(nameof(Variant))]
    public async Task Forwards_origin_form_get(string variant)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.ForwardedAsync(p, $"GET /a/b?c=d&e=%20f HTTP/1.1\r\n{Host}Accept: */*\r\n\r\n");
    }

    [Theory, MemberData(nameof(Variant))]
    public async Task Answers_with_http11_status_line(string variant)
    {
        var p = await farm.GetAsync(variant);
        await using var c = await p.ConnectAsync();
        await c.SendAsync($"GET / HTTP/1.1\r\n{Host}\r\n");
        var r = await c.ReadResponseAsync();
        Assert.True(r is not null && r.StatusLine.StartsWith("HTTP/1.1 200 ", StringComparison.Ordinal), $"status line: {r}");
        Assert.True(r.Violations.Count == 0, string.Join("; ", r.Violations));
    }

    // RFC 9112 §2.2: a server SHOULD ignore at least one empty line (CRLF) received prior to the request-line.
    public static TheoryData<string, string> LeadingEmptyLines => Variants.Cross(["\r\n", "\r\n\r\n"]);

    [Theory, MemberData(nameof(LeadingEmptyLines))]
    public async Task Ignores_empty_lines_before_request_line(string variant, string prefix)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.ForwardedAsync(p, $"{prefix}GET /lead HTTP/1.1\r\n{Host}\r\n");
    }

    // RFC 9112 §3.2.2: a proxy MUST ignore the received Host and use the target's authority.
    public static TheoryData<string, string, string> AbsoluteForms => Variants.Cross(new[]
    {
        ("http://target.example/p?q=1", "/p?q=1"),
        ("http://target.example:8080/p", "/p"),
        ("http://target.example", "/"),
    });

    [Theory, MemberData(nameof(AbsoluteForms))]
    public async Task Absolute_form_becomes_origin_form_with_its_authority_as_host(string variant, string target, string originForm)
    {
        var p = await farm.GetAsync(variant);
        var raw = $"GET {target} HTTP/1.1\r\nHost: other.example\r\n\r\n";
        var forwarded = await Verdict.ForwardedAsync(p, raw);
        Assert.Equal($"GET {originForm} HTTP/1.1", forwarded.RequestLine);
    }

    // RFC 9112 §3.2.4: asterisk-form is only for OPTIONS.
    [Theory, MemberData(nameof(Variant))]
    public async Task Forwards_options_asterisk(string variant)
    {
        var p = await farm.GetAsync(variant);
        if (!Variants.Get(variant).SupportsAsteriskForm)
        {
            // Known difference: HttpRequestMessage needs an absolute URI, so asterisk-form is answered 501 and not forwarded.
            await Verdict.RejectedAsync(p, $"OPTIONS * HTTP/1.1\r\n{Host}\r\n\r\n", [501]);
            return;
        }
        await Verdict.ForwardedAsync(p, $"OPTIONS * HTTP/1.1\r\n{Host}\r\n");
    }

    // RFC 9110 §9.3.6: no tunnelling, CONNECT is answered 405 (contract) and nothing is forwarded.
    [Theory, MemberData(nameof(Variant))]
    public async Task Rejects_connect_with_405(string variant)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", [405], expectClose: false);
    }

    // RFC 9112 §3: request-line = method SP request-target SP HTTP-version; invalid lines SHOULD get 400.
    public static TheoryData<string, string> MalformedRequestLines => Variants.Cross(new[]
    {
        "GET  / HTTP/1.1",          // two SP
        "GET /  HTTP/1.1",          // two SP before the version
        "GET\t/\tHTTP/1.1",         // HTAB separators
        "GET / HTTP/1.1 ",          // trailing SP
        " GET / HTTP/1.1",          // leading SP
        "GET HTTP/1.1",             // no target
        "GET /",                    // no version (HTTP/0.9 style)
        "/ HTTP/1.1",               // no method
        "G=T / HTTP/1.1",           // method not a token
        "G\u0000T / HTTP/1.1",        // NUL in the method
        "GE(T / HTTP/1.1",          // separator in the method
        "GET * HTTP/1.1",           // asterisk-form with GET
        "GET /a#frag HTTP/1.1",     // fragment (RFC 9112 §3.2)
        "GET /a\u0000b HTTP/1.1",     // NUL in the target
        "GET /a\u0001b HTTP/1.1",     // CTL in the target
        "GET /a\u007fb HTTP/1.1",     // DEL in the target
        "GET /a b HTTP/1.1",        // raw SP in the target
        "GET a/b HTTP/1.1",         // neither origin-form nor absolute-form
    });

    [Theory, MemberData(nameof(MalformedRequestLines))]
    public async Task Rejects_malformed_request_line(string variant, string line)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, $"{line}\r\n{Host}\r\n", Verdict.BadRequest);
    }

    // RFC 9110 §15.6.6: a well-formed version the proxy does not implement is 505. RFC 9112 §2.3: HTTP-version =
    // "HTTP/" DIGIT "." DIGIT, case-sensitive; anything else is no version, so the request line is malformed (400).
    public static TheoryData<string, string, int[]> BadVersions => Variants.Cross(new[]
    {
        ("HTTP/2.0", new[] { 505 }),
        ("HTTP/3.0", new[] { 505 }),
        ("HTTP/1.2", new[] { 505 }),
        ("HTTP/0.9", new[] { 505 }),
        ("HTTP/1.32", new[] { 400 }),
        ("HTTP/1", new[] { 400 }),
        ("http/1.1", new[] { 400 }),
        ("HTTP/1.x", new[] { 400 }),
        ("HTTP/11", new[] { 400 }),
        ("HTTPS/1.1", new[] { 400 }),
    });

    [Theory, MemberData(nameof(BadVersions))]
    public async Task Rejects_unsupported_or_malformed_version(string variant, string version, int[] statuses)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, $"GET / {version}\r\n{Host}\r\n", statuses);
    }

    // RFC 9112 §2.2: bare LF — the contract rejects it with 400.
    public static TheoryData<string, string> BareLineFeeds => Variants.Cross(new[]
    {
        "GET / HTTP/1.1\nHost: example.com\n\n",
        "GET / HTTP/1.1\nHost: example.com\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: example.com\n\r\n",
        "GET / HTTP/1.1\r\nHost: example.com\r\n\n",
        "GET / HTTP/1.1\r\nHost: example.com\r\nX-A: 1\nX-B: 2\r\n\r\n",
    });

    [Theory, MemberData(nameof(BareLineFeeds))]
    public async Task Rejects_bare_lf_line_ends(string variant, string raw)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, raw, Verdict.BadRequest);
    }

    // RFC 9112 §2.2: a bare CR MUST be treated as invalid (or replaced with SP).
    public static TheoryData<string, string> BareCarriageReturns => Variants.Cross(new[]
    {
        "GET / HTTP/1.1\rHost: example.com\r\n\r\n",
        "GET /a\rb HTTP/1.1\r\nHost: example.com\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: example.com\r\nX-A: a\rb\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: example.com\r\nX-A: a\r\r\n\r\n",
    });

    [Theory, MemberData(nameof(BareCarriageReturns))]
    public async Task Rejects_bare_cr(string variant, string raw)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, raw, Verdict.BadRequest);
    }

    // RFC 9112 §3: "It is RECOMMENDED that all HTTP senders and recipients support... request-line lengths of 8000 octets."
    [Theory, MemberData(nameof(Variant))]
    public async Task Accepts_request_line_of_8000_octets(string variant)
    {
        var p = await farm.GetAsync(variant);
        var target = "/" + Wire.BodyText(8000 - "GET / HTTP/1.1".Length);
        await Verdict.ForwardedAsync(p, $"GET {target} HTTP/1.1\r\n{Host}\r\n");
    }

    // RFC 9110 §15.5.15: a request-target longer than the server is willing to interpret is 414 (default 8192).
    [Theory, MemberData(nameof(Variant))]
    public async Task Rejects_request_line_over_default_limit_with_414(string variant)
    {
        var p = await farm.GetAsync(variant);
        var target = "/" + Wire.BodyText(9000);
        await Verdict.RejectedAsync(p, $"GET {target} HTTP/1.1\r\n{Host}\r\n", [414]);
    }

    // RFC 9112 §3: a method longer than any the server implements SHOULD get 501; a 100 KB one gets it in every variant.
    [Theory, MemberData(nameof(Variant))]
    public async Task Rejects_method_longer_than_the_request_line_limit_with_501(string variant)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, $"{new string('A', 100_000)} / HTTP/1.1\r\n{Host}\r\n", [501]);
    }

    // RFC 9112 §3.2 / RFC 3986: percent-encoded octets are forwarded untouched (no decoding of %0D%0A etc.).
    public static TheoryData<string, string> EncodedTargets => Variants.Cross(new[]
    {
        "/path-%09-uri", "/path-%20-uri", "/path-%0D%0A-uri", "/path-%00-uri", "/%2e%2e/x", "/a%2Fb?c=%26&d",
    });

    [Theory, MemberData(nameof(EncodedTargets))]
    public async Task Forwards_percent_encoded_target_unchanged(string variant, string target)
    {
        var p = await farm.GetAsync(variant);
        var forwarded = await Verdict.ForwardedAsync(p, $"GET {target} HTTP/1.1\r\n{Host}\r\n");
        Assert.Equal($"GET {target} HTTP/1.1", forwarded.RequestLine);
    }
}
