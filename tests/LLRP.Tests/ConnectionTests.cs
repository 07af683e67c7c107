using LLRP.Tests.Infrastructure;

namespace LLRP.Tests;

/// <summary>Persistence and pipelining: RFC 9112 §9.3, §9.6.</summary>
public sealed class ConnectionTests(DefaultProxies farm) : IClassFixture<DefaultProxies>
{
    public static TheoryData<string> Variant => Variants.Each();

    private static DownstreamReply EchoTarget(RecordedRequest r) => DownstreamReply.Ok(r.Target);

    [Theory, MemberData(nameof(Variant))]
    public async Task Keeps_http11_client_connection_alive(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = EchoTarget;
        await using var c = await p.ConnectAsync();
        for (var i = 0; i < 3; i++)
        {
            await c.SendAsync($"GET /k{i} HTTP/1.1\r\nHost: example.com\r\n\r\n");
            var r = await c.ReadResponseAsync();
            Assert.True(r?.Status == 200 && r.BodyText == $"/k{i}", $"request {i}: {r?.ToString() ?? "connection closed"}");
        }
    }

    // A client that closes its connection while the downstream has not answered yet takes the exchange with it: the
    // proxy gives up on the downstream request (closing that connection) instead of waiting downstreamResponseTimeout
    // (100 s here) for an answer nobody will read.
    [Theory, MemberData(nameof(Variant))]
    public async Task Client_that_leaves_before_the_response_ends_the_downstream_exchange(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.NeverWatchingClose;
        await using (var c = await p.ConnectAsync())
        {
            await c.SendAsync("GET /leaving HTTP/1.1\r\nHost: example.com\r\n\r\n");
            Assert.Single(await p.Downstream.WaitForForwardedAsync(1));
        }
        Assert.True(await p.Downstream.WaitUntilAsync(d => d.HeldConnectionsClosed == 1),
            $"the downstream connection of the abandoned exchange is still open; {p.Downstream.Describe()}");
    }

    // RFC 9112 §9.6: a server that receives "close" MUST initiate closure after the response to that request.
    [Theory, MemberData(nameof(Variant))]
    public async Task Closes_after_client_connection_close(string variant)
    {
        var p = await farm.GetAsync(variant);
        await using var c = await p.ConnectAsync();
        await c.SendAsync("GET / HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n");
        var r = await c.ReadResponseAsync();
        Assert.True(r?.Status == 200, $"{r}");
        Assert.Equal(Ending.Closed, await c.WaitForEndAsync());
        var forwarded = await p.Downstream.WaitForForwardedAsync(1);
        Assert.True(forwarded.Count == 1 && forwarded[0].Values("Connection").All(v => !v.Contains("close", StringComparison.OrdinalIgnoreCase)),
            $"the client's close must not reach the downstream leg (RFC 9112 §9.3 persistence is per connection): {p.Downstream.Describe()}");
    }

    // RFC 9112 §9.3: HTTP/1.0 without keep-alive is not persistent; the response must not be chunked (RFC 9112 §7).
    [Theory, MemberData(nameof(Variant))]
    public async Task Closes_http10_connection_after_response(string variant)
    {
        var p = await farm.GetAsync(variant);
        await using var c = await p.ConnectAsync();
        await c.SendAsync("GET / HTTP/1.0\r\nHost: example.com\r\n\r\n");
        var r = await c.ReadResponseAsync();
        Assert.True(r?.Status == 200 && r.BodyText == "ok" && !r.Chunked, $"{r}");
        Assert.Equal(Ending.Closed, await c.WaitForEndAsync());
    }

    // Client and downstream persistence are independent — a downstream close is not relayed.
    [Theory, MemberData(nameof(Variant))]
    public async Task Downstream_close_does_not_close_client_connection(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Raw("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", closeAfter: true);
        await using var c = await p.ConnectAsync();
        for (var i = 0; i < 3; i++)
        {
            await c.SendAsync($"GET /c{i} HTTP/1.1\r\nHost: example.com\r\n\r\n");
            var r = await c.ReadResponseAsync();
            Assert.True(r?.Status == 200 && r.BodyText == "ok", $"request {i} after a downstream close: {r?.ToString() ?? "connection closed"}");
        }
        Assert.Equal(3, (await p.Downstream.WaitForForwardedAsync(3)).Count);
    }

    // Downstream connections are reused across requests.
    [Theory, MemberData(nameof(Variant))]
    public async Task Reuses_upstream_connections(string variant)
    {
        var p = await farm.GetAsync(variant);
        await using var c = await p.ConnectAsync();
        await c.SendAsync("GET /warm HTTP/1.1\r\nHost: example.com\r\n\r\n");
        Assert.Equal(200, (await c.ReadResponseAsync())?.Status);
        var before = p.Downstream.AcceptedConnections;
        for (var i = 0; i < 5; i++)
        {
            await c.SendAsync($"GET /reuse{i} HTTP/1.1\r\nHost: example.com\r\n\r\n");
            Assert.Equal(200, (await c.ReadResponseAsync())?.Status);
        }
        Assert.True(p.Downstream.AcceptedConnections == before, $"{p.Downstream.AcceptedConnections - before} new downstream connections for 5 sequential requests");
    }

    // RFC 9112 §9.3.2: pipelined requests are answered in order.
    public static TheoryData<string, string> Pipelines => Variants.Cross(new[]
    {
        "GET /p1 HTTP/1.1\r\nHost: example.com\r\n\r\nGET /p2 HTTP/1.1\r\nHost: example.com\r\n\r\nGET /p3 HTTP/1.1\r\nHost: example.com\r\n\r\n",
        "POST /p1 HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\n\r\nhelloGET /p2 HTTP/1.1\r\nHost: example.com\r\n\r\nPOST /p3 HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        "GET /p1 HTTP/1.1\r\nHost: example.com\r\nContent-Length: 0\r\n\r\nGET /p2 HTTP/1.1\r\nHost: example.com\r\n\r\n",
        "POST /p1 HTTP/1.1\r\nHost: example.com\r\n\r\nGET /p2 HTTP/1.1\r\nHost: example.com\r\n\r\n",
        "GET /p1 HTTP/1.1\r\nHost: example.com\r\n\r\n\r\nGET /p2 HTTP/1.1\r\nHost: example.com\r\n\r\n",
    });

    [Theory, MemberData(nameof(Pipelines))]
    public async Task Answers_pipelined_requests_in_order(string variant, string raw)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = EchoTarget;
        var count = raw.Split(" /p").Length - 1;
        await using var c = await p.ConnectAsync();
        await c.SendAsync(raw);
        for (var i = 1; i <= count; i++)
        {
            var r = await c.ReadResponseAsync();
            Assert.True(r?.Status == 200 && r.BodyText == $"/p{i}", $"response {i} of {count}: {r?.ToString() ?? "connection closed"}");
        }
        var forwarded = await p.Downstream.WaitForForwardedAsync(count);
        Assert.Equal(Enumerable.Range(1, count).Select(i => $"/p{i}"), forwarded.Select(f => f.Target));
        Assert.All(forwarded, f => Assert.Empty(f.Violations));
    }

    // A request smuggled inside a body is body, not a request — exactly one downstream request.
    [Theory, MemberData(nameof(Variant))]
    public async Task Body_that_looks_like_a_request_stays_body(string variant)
    {
        var p = await farm.GetAsync(variant);
        var inner = "GET /smuggled HTTP/1.1\r\nHost: example.com\r\n\r\n";
        var raw = $"POST /outer HTTP/1.1\r\nHost: example.com\r\nContent-Length: {inner.Length}\r\n\r\n{inner}";
        var forwarded = await Verdict.ForwardedAsync(p, raw);
        Assert.Equal(inner, Wire.Text(forwarded.Body));
        await p.CanaryAsync();
        Assert.DoesNotContain(p.Downstream.Requests, r => r.Target == "/smuggled");
    }

    // After a rejected request nothing on that connection is processed, even a valid pipelined request.
    [Theory, MemberData(nameof(Variant))]
    public async Task Stops_reading_after_rejecting_a_pipelined_request(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = EchoTarget;
        await using var c = await p.ConnectAsync();
        await c.SendAsync("GET /p1 HTTP/1.1\r\nHost: example.com\r\n\r\n" +
            "POST /bad HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" +
            "GET /after HTTP/1.1\r\nHost: example.com\r\n\r\n");
        var first = await c.ReadResponseAsync();
        Assert.True(first?.Status == 200 && first.BodyText == "/p1", $"{first}");
        var second = await c.ReadResponseAsync("POST");
        Assert.True(second?.Status == 400, $"expected 400 for CL+TE, got {second?.ToString() ?? "closed"}");
        Assert.Equal(Ending.Closed, await c.WaitForEndAsync());
        await p.CanaryAsync();
        Assert.Equal(["/p1"], p.Downstream.Forwarded.Select(f => f.Target));
    }
}
