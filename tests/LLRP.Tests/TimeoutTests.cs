using LLRP.Tests.Infrastructure;

namespace LLRP.Tests;

/// <summary>
/// The client's timeouts, each short in a proxy of its own while the others keep their defaults: a test sees the
/// timeout it is about and no other, however late a loaded machine runs the proxy's reads. Only behaviour is asserted
/// (what happens once a timeout fires), never how long it took; every wait is capped.
/// </summary>
public sealed class RequestHeadTimeoutTests(SlowHeadProxies farm) : IClassFixture<SlowHeadProxies>
{
    public static TheoryData<string> Variant => Variants.Each();

    // Slowloris: an unfinished head gets 408 and the connection closed (requestHeadersTimeout).
    [Theory, MemberData(nameof(Variant))]
    public async Task Answers_408_and_closes_when_request_head_is_incomplete(string variant)
    {
        var p = await farm.GetAsync(variant);
        await using var c = await p.ConnectAsync();
        await c.SendAsync("GET / HTTP/1.1\r\nHost: example.com\r\nX-Slow: ");
        var r = await c.ReadResponseAsync();
        Assert.True(r?.Status == 408, $"expected 408, got {r?.ToString() ?? "a closed connection without a response"}");
        Assert.Equal(Ending.Closed, await c.WaitForEndAsync());
        await Verdict.NothingForwardedAsync(p, false, "slow head");
    }

    // A head trickled byte by byte must not reset the header deadline with each byte (slowloris).
    [Theory, MemberData(nameof(Variant))]
    public async Task Answers_408_when_request_head_is_trickled(string variant)
    {
        var p = await farm.GetAsync(variant);
        await using var c = await p.ConnectAsync();
        using var stop = new CancellationTokenSource();
        var trickle = Task.Run(async () =>
        {
            var headers = "GET / HTTP/1.1\r\nHost: example.com\r\n" + string.Concat(Enumerable.Repeat("X-Slow: 1\r\n", 10_000));
            foreach (var ch in headers)
            {
                if (stop.IsCancellationRequested || c.SendFailed)
                {
                    return;
                }
                await c.SendAsync(ch.ToString());
                await Task.Delay(50, CancellationToken.None);
            }
        });
        try
        {
            var r = await c.ReadResponseAsync();
            Assert.True(r?.Status == 408, $"expected 408, got {r?.ToString() ?? "a closed connection without a response"}");
        }
        finally
        {
            await stop.CancelAsync();
            await trickle;
        }
    }

}

public sealed class KeepAliveTimeoutTests(IdleProxies farm) : IClassFixture<IdleProxies>
{
    public static TheoryData<string> Variant => Variants.Each();

    // An idle keep-alive connection is closed (keepAliveTimeout), without a response.
    [Theory, MemberData(nameof(Variant))]
    public async Task Closes_idle_keep_alive_connection(string variant)
    {
        var p = await farm.GetAsync(variant);
        await using var c = await p.ConnectAsync();
        await c.SendAsync("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n");
        Assert.Equal(200, (await c.ReadResponseAsync())?.Status);
        var ending = await c.WaitForEndAsync();
        Assert.True(ending == Ending.Closed, $"idle connection: {ending} '{Wire.Show(c.ExtraBytes)}'");
    }

    // A connection that never sends anything is closed too.
    [Theory, MemberData(nameof(Variant))]
    public async Task Closes_connection_that_sends_nothing(string variant)
    {
        var p = await farm.GetAsync(variant);
        await using var c = await p.ConnectAsync();
        var ending = await c.WaitForEndAsync();
        Assert.True(ending == Ending.Closed || (ending == Ending.ExtraBytes && Wire.Text(c.ExtraBytes).StartsWith("HTTP/1.1 408", StringComparison.Ordinal)),
            $"silent connection: {ending} '{Wire.Show(c.ExtraBytes)}'");
    }

}

public sealed class DownstreamTimeoutTests(SlowDownstreamProxies farm) : IClassFixture<SlowDownstreamProxies>
{
    public static TheoryData<string> Variant => Variants.Each();

    // RFC 9110 §15.6.5: no downstream response within downstreamResponseTimeout is 504.
    [Theory, MemberData(nameof(Variant))]
    public async Task Answers_504_when_downstream_does_not_answer(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Never;
        await using var c = await p.ConnectAsync();
        await c.SendAsync("GET /never HTTP/1.1\r\nHost: example.com\r\n\r\n");
        var r = await c.ReadResponseAsync();
        Assert.True(r?.Status == 504, $"expected 504, got {r?.ToString() ?? "a closed connection"}");
    }

    // The 504 comes from the deadline, not from anything sooner (a connect or read timeout of the variant's client).
    [Theory, MemberData(nameof(Variant))]
    public async Task Answers_504_no_sooner_than_downstreamResponseTimeout(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Never;
        await using var c = await p.ConnectAsync();
        var clock = System.Diagnostics.Stopwatch.StartNew();
        await c.SendAsync("GET /never HTTP/1.1\r\nHost: example.com\r\n\r\n");
        var r = await c.ReadResponseAsync();
        var elapsed = clock.Elapsed;
        Assert.True(r?.Status == 504, $"expected 504, got {r?.ToString() ?? "a closed connection"}");
        // Only the lower bound is asserted: how soon after the deadline the answer leaves depends on the machine's
        // load, not on the proxy. When the deadline falls is ExchangeFailureTests' deadline test, with no clock.
        var timeout = TimeSpan.FromSeconds(SlowDownstreamProxies.DownstreamResponseTimeoutSeconds);
        Assert.True(elapsed >= timeout - TimeSpan.FromMilliseconds(100), $"504 after {elapsed.TotalMilliseconds:F0} ms, before the {timeout.TotalSeconds} s timeout");
    }

    // After a 504 the downstream connection that never answered must not be reused for the next request.
    [Theory, MemberData(nameof(Variant))]
    public async Task Does_not_reuse_upstream_connection_after_504(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = r => r.Target == "/never" ? DownstreamReply.Never : DownstreamReply.Ok(r.Target);
        await using var c = await p.ConnectAsync();
        await c.SendAsync("GET /never HTTP/1.1\r\nHost: example.com\r\n\r\n");
        var first = await c.ReadResponseAsync();
        Assert.True(first?.Status == 504, $"expected 504, got {first?.ToString() ?? "closed"}");
        await using var c2 = await p.ConnectAsync();
        await c2.SendAsync("GET /next HTTP/1.1\r\nHost: example.com\r\n\r\n");
        var second = await c2.ReadResponseAsync();
        Assert.True(second?.Status == 200 && second.BodyText == "/next", $"{second}");
    }
}

/// <summary>A downstream that refuses connections is a 502.</summary>
public sealed class UnreachableDownstreamTests(UnreachableDownstreamProxies farm) : IClassFixture<UnreachableDownstreamProxies>
{
    public static TheoryData<string> Variant => Variants.Each();

    public static TheoryData<string, string> Requests => Variants.Cross(new[]
    {
        "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\n\r\nhello",
        "POST / HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    });

    [Theory, MemberData(nameof(Requests))]
    public async Task Answers_502_when_downstream_refuses_connections(string variant, string raw)
    {
        var p = await farm.GetAsync(variant);
        await using var c = await p.ConnectAsync();
        await c.SendAsync(raw);
        var r = await c.ReadResponseAsync(raw[..raw.IndexOf(' ', StringComparison.Ordinal)]);
        Assert.True(r?.Status == 502, $"expected 502, got {r?.ToString() ?? "a closed connection"}");
    }
}
