namespace LLRP.Tests.Infrastructure;

/// <summary>The three assertions every case makes: the client's status, whether its connection closed, what the downstream got.</summary>
public static class Verdict
{
    public static readonly int[] BadRequest = [400];

    /// <summary>Any rejection a proxy may give instead of forwarding: 4xx, 501 or 505 (never 5xx for a client fault).</summary>
    public static readonly int[] AnyRejection =
        [.. Enumerable.Range(400, 100).Where(s => s is not (408 or 429)), 501, 505];

    /// <summary>
    /// Sends <paramref name="raw"/> on a new connection and asserts: a response with one of <paramref name="statuses"/>,
    /// the connection closed after it (when <paramref name="expectClose"/>), and nothing forwarded. With
    /// <paramref name="bodyError"/> the proxy may already have streamed the head downstream, but must then abort that
    /// downstream request: a partial request is allowed, a complete one is not.
    /// </summary>
    public static async Task RejectedAsync(ProxyUnderTest proxy, string raw, int[] statuses, bool bodyError = false,
        bool expectClose = true, string method = "GET")
    {
        var request = $"request '{Wire.Show(raw, 300)}'";
        await using (var client = await proxy.ConnectAsync())
        {
            await client.SendAsync(raw);
            var response = await client.ReadResponseAsync(method);
            if (response is null)
            {
                await proxy.CanaryAsync();
                Assert.Fail($"{request}: expected {Statuses(statuses)}, but the proxy closed the connection without a response; {proxy.Downstream.Describe()}");
            }
            if (!statuses.Contains(response.Status))
            {
                await proxy.CanaryAsync();
                Assert.Fail($"{request}: expected {Statuses(statuses)}, got {response}; {proxy.Downstream.Describe()}");
            }
            if (expectClose)
            {
                var ending = await client.WaitForEndAsync();
                Assert.True(ending == Ending.Closed,
                    $"{request}: got {response.Status} as expected, but the client connection was not closed after it ({ending} '{Wire.Show(client.ExtraBytes)}')");
            }
        }
        await NothingForwardedAsync(proxy, bodyError, request);
    }

    /// <summary>Asserts (after a canary) that no complete request reached the downstream.</summary>
    public static async Task NothingForwardedAsync(ProxyUnderTest proxy, bool partialAllowed, string what)
    {
        await proxy.CanaryAsync();
        var forwarded = proxy.Downstream.Forwarded;
        Assert.True(forwarded.Count == 0, $"{what}: nothing may be forwarded, but {proxy.Downstream.Describe()}");
        if (partialAllowed)
        {
            var aborted = await proxy.Downstream.WaitUntilAsync(o => o.InFlight.Count == 0);
            Assert.True(aborted, $"{what}: the proxy started the request downstream and never aborted it; {proxy.Downstream.Describe()}");
        }
        else
        {
            Assert.True(proxy.Downstream.Partials.Count == 0 && proxy.Downstream.InFlight.Count == 0,
                $"{what}: nothing may be forwarded, but the downstream received part of a request; {proxy.Downstream.Describe()}");
        }
    }

    /// <summary>
    /// Sends <paramref name="raw"/> on a new connection and asserts a 200 from the (default) downstream, the forwarded
    /// request equal to <paramref name="expected"/> (by default: the contract's model of <paramref name="raw"/>), and
    /// the client connection still usable afterwards when <paramref name="keepAlive"/>.
    /// </summary>
    public static async Task<RecordedRequest> ForwardedAsync(ProxyUnderTest proxy, string raw, ExpectedForward? expected = null,
        bool keepAlive = true, string method = "GET")
    {
        expected ??= ExpectedForward.FromClientRequest(raw);
        await using var client = await proxy.ConnectAsync();
        await client.SendAsync(raw);
        var response = await client.ReadResponseAsync(method);
        var request = $"request '{Wire.Show(raw, 300)}'";
        Assert.True(response is not null, $"{request}: expected it forwarded, but the proxy closed without a response; {proxy.Downstream.Describe()}");
        Assert.True(response.Status == 200 && (method == "HEAD" || response.BodyText == "ok"),
            $"{request}: expected it forwarded (200 'ok' from the downstream), got {response}; {proxy.Downstream.Describe()}");
        var forwarded = await proxy.Downstream.WaitForForwardedAsync(1);
        Assert.True(forwarded.Count == 1, $"{request}: expected exactly one forwarded request; {proxy.Downstream.Describe()}");
        expected.AssertMatches(forwarded[0], proxy.Variant);
        if (keepAlive)
        {
            var ping = await client.PingAsync();
            Assert.True(ping?.Status == 200, $"{request}: the connection was not usable for a second request after the first: {ping?.ToString() ?? "closed"}");
        }
        return forwarded[0];
    }

    public static string Statuses(int[] statuses) =>
        statuses.Length > 20 ? "a 4xx/501/505 rejection" : string.Join(" or ", statuses);
}
