using LLRP.Tests.Infrastructure;

namespace LLRP.Tests;

/// <summary>Hop-by-hop fields, Via and X-Forwarded-For: RFC 9110 §7.6.1, §7.6.3.</summary>
public sealed class HeaderPolicyTests(DefaultProxies farm) : IClassFixture<DefaultProxies>
{
    public static TheoryData<string> Variant => Variants.Each();

    private static string Get(string fields) => $"GET /policy HTTP/1.1\r\nHost: example.com\r\n{fields}X-End: 1\r\n\r\n";

    // RFC 9110 §7.6.1: a proxy MUST remove Connection, every field it names, and Keep-Alive, Proxy-Connection, TE,
    // Transfer-Encoding, Upgrade; the contract also removes Expect. The model drops them; the assertion checks the rest.
    public static TheoryData<string, string> HopByHop => Variants.Cross(new[]
    {
        "Connection: keep-alive\r\n",
        "Connection: keep-alive, X-Secret\r\nX-Secret: 1\r\n",
        "Connection: X-A\r\nConnection: X-B\r\nX-A: 1\r\nX-B: 2\r\n",
        "Connection: X-SECRET\r\nx-secret: 1\r\n",
        "Connection: x-a,x-b , x-c\r\nX-A: 1\r\nX-B: 2\r\nX-C: 3\r\n",
        "Keep-Alive: timeout=5\r\n",
        "Proxy-Connection: keep-alive\r\n",
        "TE: trailers\r\n",
        "TE: gzip;q=0.5\r\n",
        "Upgrade: websocket\r\n",
        "Connection: close, Keep-Alive\r\nKeep-Alive: timeout=5\r\n",
    });

    [Theory, MemberData(nameof(HopByHop))]
    public async Task Removes_hop_by_hop_and_connection_nominated_request_fields(string variant, string fields)
    {
        var p = await farm.GetAsync(variant);
        var raw = Get(fields);
        await Verdict.ForwardedAsync(p, raw, keepAlive: !fields.Contains("close", StringComparison.Ordinal));
    }

    // Connection cannot nominate the proxy's own framing or Host away — they are regenerated.
    public static TheoryData<string, string> NominatedFraming => Variants.Cross(new[]
    {
        "POST /n HTTP/1.1\r\nHost: example.com\r\nConnection: Content-Length\r\nContent-Length: 5\r\n\r\nhello",
        "POST /n HTTP/1.1\r\nHost: example.com\r\nConnection: Transfer-Encoding\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        "GET /n HTTP/1.1\r\nHost: example.com\r\nConnection: Host\r\n\r\n",
        "GET /n HTTP/1.1\r\nHost: example.com\r\nConnection: Via, X-Forwarded-For\r\n\r\n",
    });

    [Theory, MemberData(nameof(NominatedFraming))]
    public async Task Connection_cannot_remove_framing_host_or_proxy_fields(string variant, string raw)
    {
        var p = await farm.GetAsync(variant);
        var expected = ExpectedForward.FromClientRequest(raw);
        expected.Host = "example.com";
        await Verdict.ForwardedAsync(p, raw, expected);
    }

    // RFC 9110 §7.6.3: a proxy MUST send Via, appending to an existing one.
    public static TheoryData<string, string> Vias => Variants.Cross(new[]
    {
        "",
        "Via: 1.0 fred\r\n",
        "Via: 1.0 fred, 1.1 p.example (Apache/1.1)\r\n",
        "Via: 1.0 a\r\nVia: 1.1 b\r\n",
    });

    [Theory, MemberData(nameof(Vias))]
    public async Task Adds_via(string variant, string fields)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.ForwardedAsync(p, Get(fields));
    }

    // Contract: X-Forwarded-For gets the client address appended.
    public static TheoryData<string, string> ForwardedFors => Variants.Cross(new[]
    {
        "",
        "X-Forwarded-For: 1.1.1.1\r\n",
        "X-Forwarded-For: 1.1.1.1, 2.2.2.2\r\n",
        "X-Forwarded-For: 1.1.1.1\r\nX-Forwarded-For: 2.2.2.2\r\n",
    });

    [Theory, MemberData(nameof(ForwardedFors))]
    public async Task Appends_client_address_to_x_forwarded_for(string variant, string fields)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.ForwardedAsync(p, Get(fields));
    }

    // RFC 9110 §7.6.1, response direction: the same list plus fields named by the downstream's Connection are removed.
    [Theory, MemberData(nameof(Variant))]
    public async Task Removes_hop_by_hop_response_fields(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Raw(
            "HTTP/1.1 200 OK\r\nConnection: X-Secret, keep-alive\r\nX-Secret: 1\r\nKeep-Alive: timeout=5\r\n" +
            "Proxy-Connection: keep-alive\r\nUpgrade: foo\r\nTE: trailers\r\nX-Kept: yes\r\nContent-Length: 2\r\n\r\nok");
        await using var c = await p.ConnectAsync();
        await c.SendAsync("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n");
        var r = await c.ReadResponseAsync();
        Assert.True(r?.Status == 200 && r.BodyText == "ok", $"{r}");
        foreach (var name in new[] { "X-Secret", "Keep-Alive", "Proxy-Connection", "Upgrade", "TE" })
        {
            Assert.True(r.Header(name) is null, $"hop-by-hop response field {name} was relayed: {r}");
        }
        var connection = r.Header("Connection");
        Assert.True(connection is null || connection.Split(',').All(t => t.Trim() is "keep-alive" or "close"),
            $"the downstream's Connection value was relayed: '{connection}'");
        Assert.Equal("yes", r.Header("X-Kept"));
    }

    // RFC 9110 §5.3 / RFC 6265: Set-Cookie lines are never joined into one.
    [Theory, MemberData(nameof(Variant))]
    public async Task Relays_each_set_cookie_line(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Ok(extraHeaders: "Set-Cookie: a=1; Path=/\r\nSet-Cookie: b=2; Expires=Wed, 21 Oct 2015 07:28:00 GMT\r\n");
        await using var c = await p.ConnectAsync();
        await c.SendAsync("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n");
        var r = await c.ReadResponseAsync();
        Assert.True(r is not null, "closed");
        Assert.Equal(["a=1; Path=/", "b=2; Expires=Wed, 21 Oct 2015 07:28:00 GMT"], r.Values("Set-Cookie").ToArray());
    }
}
