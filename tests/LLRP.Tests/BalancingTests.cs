using System.Net;
using System.Net.Sockets;
using LLRP.Balancing;
using LLRP.Tests.Infrastructure;

namespace LLRP.Tests;

/// <summary>
/// loadBalancing: each policy's spread across recording downstreams, for every variant. Downstream i answers with its
/// own body ("d0", "d1", ...), so a response also says where its request went.
/// </summary>
public sealed class BalancingTests
{
    public static TheoryData<string> Variant => Variants.Each();

    private static void NameReplies(BalancedProxy p)
    {
        for (var i = 0; i < p.Downstreams.Length; i++)
        {
            var body = $"d{i}";
            p.Downstreams[i].Responder = _ => DownstreamReply.Ok(body);
        }
    }

    /// <summary>The downstreams' indexes in FirstAlphabetical's order: by address, case-insensitive.</summary>
    private static int[] AlphabeticalOrder(BalancedProxy p) =>
        [.. Enumerable.Range(0, p.Downstreams.Length).OrderBy(i => $"http://127.0.0.1:{p.Downstreams[i].Port}", StringComparer.OrdinalIgnoreCase)];

    [Theory, MemberData(nameof(Variant))]
    public async Task RoundRobin_spreads_300_requests_100_each_over_three(string variant)
    {
        await using var p = await BalancedProxy.StartAsync(variant, 3, "--loadBalancing", "roundrobin");
        NameReplies(p);
        await using var client = await p.ConnectAsync();
        for (var i = 0; i < 300; i++)
        {
            await client.SendAsync("GET /rr HTTP/1.1\r\nHost: example.com\r\n\r\n");
            var r = await client.ReadResponseAsync();
            Assert.True(r?.Status == 200, $"request {i}: {r}");
        }
        Assert.Equal([100, 100, 100], p.Counts());
    }

    [Theory, MemberData(nameof(Variant))]
    public async Task ConnectionRoundRobin_keeps_each_connection_on_one_downstream(string variant)
    {
        await using var p = await BalancedProxy.StartAsync(variant, 3);
        NameReplies(p);
        var seen = new List<string>();
        for (var c = 0; c < 3; c++)
        {
            await using var client = await p.ConnectAsync();
            var bodies = new HashSet<string>();
            for (var i = 0; i < 5; i++)
            {
                await client.SendAsync("GET /crr HTTP/1.1\r\nHost: example.com\r\n\r\n");
                bodies.Add((await client.ReadResponseAsync())!.BodyText);
            }
            Assert.Single(bodies);
            seen.Add(bodies.Single());
        }
        Assert.Equal(3, seen.Distinct().Count());
        Assert.Equal([5, 5, 5], p.Counts());
    }

    [Theory, MemberData(nameof(Variant))]
    public async Task Random_reaches_every_downstream(string variant)
    {
        await using var p = await BalancedProxy.StartAsync(variant, 3, "--loadBalancing", "Random");
        NameReplies(p);
        await using var client = await p.ConnectAsync();
        for (var i = 0; i < 300; i++)
        {
            await client.SendAsync("GET /random HTTP/1.1\r\nHost: example.com\r\n\r\n");
            Assert.Equal(200, (await client.ReadResponseAsync())?.Status);
        }
        var counts = p.Counts();
        Assert.Equal(300, counts.Sum());
        // 100 expected each, standard deviation about 8: below 40 is beyond 7 deviations.
        Assert.All(counts, count => Assert.InRange(count, 40, 160));
    }

    [Theory, MemberData(nameof(Variant))]
    public async Task FirstAlphabetical_sends_everything_to_the_first_address_and_fails_over_to_the_next(string variant)
    {
        await using var p = await BalancedProxy.StartAsync(variant, 3, "--loadBalancing", "FIRSTALPHABETICAL");
        NameReplies(p);
        var order = AlphabeticalOrder(p);
        for (var i = 0; i < 20; i++)
        {
            Assert.Equal(200, await p.GetAsync());
        }
        Assert.Equal(20, p.Counts()[order[0]]);

        await p.KillAsync(order[0]);
        for (var i = 0; i < 20; i++)
        {
            // The first connect to the dead one fails before anything is sent: retried on the next, never lost.
            Assert.Equal(200, await p.GetAsync());
        }
        Assert.Equal(20, p.Counts()[order[1]]);
        Assert.Equal(0, p.Counts()[order[2]]);
    }

    /// <summary>
    /// A downstream that accepts connections and closes them without answering fails at the transport level, as one
    /// that refuses them does: the request it took gets 502, and passive health takes it out, so the next requests go
    /// to the next downstream and it gets none of them.
    /// </summary>
    [Theory, MemberData(nameof(Variant))]
    public async Task A_downstream_that_closes_unanswered_is_taken_out(string variant)
    {
        await using var p = await BalancedProxy.StartAsync(variant, 3, "--loadBalancing", "FirstAlphabetical");
        NameReplies(p);
        var order = AlphabeticalOrder(p);
        p.Downstreams[order[0]].Responder = _ => DownstreamReply.CloseWithoutResponse;
        Assert.Equal(502, await p.GetAsync());
        var reached = p.Counts()[order[0]];
        for (var i = 0; i < 5; i++)
        {
            Assert.Equal(200, await p.GetAsync());
        }
        Assert.Equal(reached, p.Counts()[order[0]]);
        Assert.Equal(5, p.Counts()[order[1]]);
    }

    public static TheoryData<string, string> IdempotentRequest => Variants.Cross(new[]
    {
        "GET /pooled HTTP/1.1\r\nHost: example.com\r\n\r\n",
        // A small body: llhttp read it whole before sending, so the second downstream gets it again.
        "PUT /pooled HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\n\r\nhello",
    });

    /// <summary>
    /// The downstream closes a reused connection without answering and refuses the reconnect, as one that is going away
    /// does when a request takes its idle connection before the proxy saw it close: the client's idempotent request does
    /// not fail there but goes once to the next downstream (the reconnect opened no connection, so nothing went on it).
    /// </summary>
    [Theory, MemberData(nameof(IdempotentRequest))]
    public async Task A_reused_connection_closed_unanswered_whose_reconnect_is_refused_goes_to_the_next_downstream(string variant, string request)
    {
        await using var p = await BalancedProxy.StartAsync(variant, 3, "--loadBalancing", "FirstAlphabetical");
        NameReplies(p);
        var order = AlphabeticalOrder(p);
        var first = p.Downstreams[order[0]];
        await using var client = await p.ConnectAsync();
        await client.SendAsync(request);
        Assert.Equal($"d{order[0]}", (await client.ReadResponseAsync())?.BodyText);

        first.Responder = _ =>
        {
            first.StopAccepting();
            return DownstreamReply.CloseWithoutResponse;
        };
        await client.SendAsync(request);
        var response = await client.ReadResponseAsync();
        Assert.Equal(2, p.Counts()[order[0]]);
        Assert.Equal(0, p.Counts()[order[2]]);
        if (first.Forwarded[1].Body.Length > 0 && !Variants.Get(variant).ResendsSmallBodies)
        {
            // HttpClient sent the body from the client's stream and cannot send it again.
            Assert.Equal(502, response?.Status);
            Assert.Equal(0, p.Counts()[order[1]]);
            return;
        }
        Assert.True(response is { Status: 200 } && response.BodyText == $"d{order[1]}", $"{response}");
        var retried = Assert.Single(p.Downstreams[order[1]].Forwarded);
        Assert.Equal(first.Forwarded[1].Body, retried.Body);
    }

    public static TheoryData<string, string> LoadAware => Variants.Cross(new[] { "LeastRequests", "PowerOfTwoChoices" });

    /// <summary>
    /// Downstream 0 never answers: each request it gets stays in flight. The others answer at once, so the
    /// load-aware policies see them idle and send downstream 0 at most the one request it holds.
    /// </summary>
    [Theory, MemberData(nameof(LoadAware))]
    public async Task Load_aware_policies_avoid_the_busy_downstream(string variant, string policy)
    {
        await using var p = await BalancedProxy.StartAsync(variant, 3, "--loadBalancing", policy);
        NameReplies(p);
        p.Downstreams[0].Responder = _ => DownstreamReply.Never;
        var held = new List<RawClient>();
        try
        {
            for (var i = 0; i < 30; i++)
            {
                var client = await p.ConnectAsync();
                await client.SendAsync("GET /busy HTTP/1.1\r\nHost: example.com\r\n\r\n");
                Assert.True(await p.Downstreams[0].WaitUntilAsync(_ => p.Counts().Sum() == i + 1), $"request {i} did not arrive: {string.Join('/', p.Counts())}");
                if (p.Downstreams[0].Forwarded.Count(r => r.Target == "/busy") > held.Count)
                {
                    held.Add(client);
                    continue;
                }
                // Answered, so the exchange has ended and its downstream is idle again before the next pick.
                Assert.Equal(200, (await client.ReadResponseAsync())?.Status);
                await client.DisposeAsync();
            }
            var counts = p.Counts();
            Assert.True(counts[0] <= 1, $"the busy downstream got {counts[0]} of 30 ({string.Join('/', counts)})");
            if (policy == "LeastRequests")
            {
                // Everything idle at the first request: the first in configured order takes it.
                Assert.Equal(1, counts[0]);
            }
        }
        finally
        {
            foreach (var client in held)
            {
                await client.DisposeAsync();
            }
        }
    }

    /// <summary>Choosing a downstream and counting its requests in flight allocate nothing, whatever the policy.</summary>
    [Theory]
    [InlineData(LoadBalancing.ConnectionRoundRobin)]
    [InlineData(LoadBalancing.PowerOfTwoChoices)]
    [InlineData(LoadBalancing.FirstAlphabetical)]
    [InlineData(LoadBalancing.Random)]
    [InlineData(LoadBalancing.RoundRobin)]
    [InlineData(LoadBalancing.LeastRequests)]
    public void Choosing_allocates_nothing(LoadBalancing policy)
    {
        using var set = new DownstreamSet(new ProxyOptions
        {
            Downstreams = [new Uri("http://127.0.0.1:1"), new Uri("http://127.0.0.1:2"), new Uri("http://127.0.0.1:3")],
            LoadBalancing = policy,
        });
        var choice = new DownstreamChoice(set);
        for (var i = 0; i < 100; i++)
        {
            choice.Release(choice.Acquire());
        }
        var before = GC.GetAllocatedBytesForCurrentThread();
        for (var i = 0; i < 10_000; i++)
        {
            choice.Release(choice.Acquire());
        }
        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
    }
}

/// <summary>
/// Passive health: a downstream that fails at the transport level is taken out for passiveHealthReactivationPeriod;
/// what was never sent is retried elsewhere once; with every downstream out the answer is 503.
/// </summary>
public sealed class PassiveHealthTests
{
    public static TheoryData<string, string> Policies => Variants.Cross(new[] { "RoundRobin", "ConnectionRoundRobin", "PowerOfTwoChoices" });

    /// <summary>
    /// Eight clients send requests one after another while one of three downstreams is killed: the requests in
    /// flight on it at that moment may fail (at most one per client), none after; then a listener on its port sees no
    /// connection for as long as the proxy keeps it out. The listener starts only once every client has finished ten
    /// requests begun after the kill: a request that chose the downstream before its first failure took it out may
    /// open its connection some milliseconds later (HttpClient connects on the thread pool), and must meet a closed
    /// port, not a listener that never answers.
    /// </summary>
    [Theory, MemberData(nameof(Policies))]
    public async Task A_downstream_killed_under_load_costs_at_most_its_requests_in_flight_and_gets_none_after(string variant, string policy)
    {
        const int Clients = 8;
        await using var p = await BalancedProxy.StartAsync(variant, 3, "--loadBalancing", policy);
        var port = p.Downstreams[1].Port;
        using var stop = new CancellationTokenSource();
        var killed = false;
        var failuresBefore = 0;
        var failuresAfter = 0;
        var successes = 0;
        var endedSinceKill = new int[Clients];

        async Task LoadAsync(int client)
        {
            using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(30) };
            while (!stop.IsCancellationRequested)
            {
                var startedAfterKill = Volatile.Read(ref killed);
                bool ok;
                try
                {
                    using var response = await http.GetAsync(new Uri(p.Url, "/load"));
                    ok = response.StatusCode == HttpStatusCode.OK && await response.Content.ReadAsStringAsync() == "ok";
                }
                catch (HttpRequestException)
                {
                    ok = false;
                }
                // Classified when it ended: a request that started before the kill may still fail because of it.
                Interlocked.Increment(ref ok ? ref successes : ref Volatile.Read(ref killed) ? ref failuresAfter : ref failuresBefore);
                if (startedAfterKill)
                {
                    Interlocked.Increment(ref endedSinceKill[client]);
                }
            }
        }

        var load = Enumerable.Range(0, Clients).Select(client => Task.Run(() => LoadAsync(client))).ToArray();
        Assert.True(await p.Downstreams[1].WaitUntilAsync(d => d.Forwarded.Count >= 50), "the load did not reach downstream 1");
        Volatile.Write(ref killed, true);
        await p.KillAsync(1);
        // Every client finishes ten requests begun after the kill (so none chosen before the take-out is still open).
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        bool Settled() => Enumerable.Range(0, Clients).All(c => Volatile.Read(ref endedSinceKill[c]) >= 10);
        while (!Settled() && DateTime.UtcNow < deadline)
        {
            await Task.Delay(10);
        }
        var settled = Settled();

        // The dead one's port listens again, but it stays out for the reactivation period (60 s by default).
        using var revived = new TcpListener(IPAddress.Loopback, port);
        revived.Start();
        var before = Volatile.Read(ref successes);
        while (Volatile.Read(ref successes) < before + 10 * Clients && DateTime.UtcNow < deadline)
        {
            await Task.Delay(10);
        }
        var reconnected = revived.Pending();
        await stop.CancelAsync();
        await Task.WhenAll(load);

        Assert.True(settled, $"the load stalled after the kill: {string.Join('/', endedSinceKill)} requests per client");
        Assert.True(Volatile.Read(ref successes) >= before + 10 * Clients, $"the load stalled: {successes} successes");
        Assert.Equal(0, failuresBefore);
        // A request already on its way to the killed downstream may fail; one client has at most one in flight.
        Assert.True(failuresAfter <= Clients, $"{failuresAfter} requests failed after the kill (at most {Clients} were in flight)");
        Assert.False(reconnected, "the proxy connected to the downstream it had taken out");
    }

    [Theory, MemberData(nameof(BalancingTests.Variant), MemberType = typeof(BalancingTests))]
    public async Task Every_downstream_out_is_503(string variant)
    {
        await using var p = await BalancedProxy.StartUnreachableAsync(variant, 2, "--loadBalancing", "RoundRobin");
        // The first request finds both refusing (the second try too): the last failure is its answer.
        Assert.Equal(502, await p.GetAsync());
        // Both are out now: nothing is tried.
        Assert.Equal(503, await p.GetAsync());
    }

    [Theory, MemberData(nameof(BalancingTests.Variant), MemberType = typeof(BalancingTests))]
    public async Task A_lone_downstream_is_never_taken_out(string variant)
    {
        await using var p = await BalancedProxy.StartUnreachableAsync(variant, 1, "--loadBalancing", "RoundRobin");
        Assert.Equal(502, await p.GetAsync());
        Assert.Equal(502, await p.GetAsync());
    }
}

/// <summary>Active health: healthCheckPath probed every healthCheckInterval; failing downstreams out, recovered ones back.</summary>
public sealed class ActiveHealthTests
{
    [Theory, MemberData(nameof(BalancingTests.Variant), MemberType = typeof(BalancingTests))]
    public async Task A_failing_downstream_is_taken_out_and_comes_back_when_it_recovers(string variant)
    {
        await using var p = await BalancedProxy.StartAsync(variant, 2,
            "--loadBalancing", "RoundRobin", "--healthCheckPath", "/health", "--healthCheckInterval", "0.2", "--healthCheckTimeout", "2",
            "--healthCheckFall", "2", "--healthCheckRise", "2");
        var failing = false;
        p.Downstreams[0].Responder = r => r.Target == "/health" && Volatile.Read(ref failing)
            ? DownstreamReply.Raw("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
            : DownstreamReply.Ok();
        Assert.True(await p.Downstreams[0].WaitUntilAsync(d => d.Forwarded.Count(r => r.Target == "/health") >= 2), "no health checks arrived");

        Volatile.Write(ref failing, true);
        // Out within interval × fall (0.4 s), asserted with a generous bound: some 10 requests in a row all reach downstream 1.
        Assert.True(await EventuallyAsync(async () =>
        {
            var before = p.Counts()[0];
            for (var i = 0; i < 10; i++)
            {
                Assert.Equal(200, await p.GetAsync());
            }
            return p.Counts()[0] == before;
        }), "downstream 0 kept receiving requests while failing its health checks");

        Volatile.Write(ref failing, false);
        Assert.True(await EventuallyAsync(async () =>
        {
            var before = p.Counts()[0];
            for (var i = 0; i < 10; i++)
            {
                Assert.Equal(200, await p.GetAsync());
            }
            return p.Counts()[0] > before;
        }), "downstream 0 did not come back after passing its health checks");
    }

    [Theory, MemberData(nameof(BalancingTests.Variant), MemberType = typeof(BalancingTests))]
    public async Task Every_downstream_failing_its_checks_is_503(string variant)
    {
        await using var p = await BalancedProxy.StartAsync(variant, 2,
            "--loadBalancing", "PowerOfTwoChoices", "--healthCheckPath", "/health", "--healthCheckInterval", "0.2", "--healthCheckFall", "1");
        foreach (var d in p.Downstreams)
        {
            d.Responder = r => r.Target == "/health" ? DownstreamReply.Raw("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n") : DownstreamReply.Ok();
        }
        Assert.True(await EventuallyAsync(async () => await p.GetAsync() == 503), "never 503 with every downstream failing");
    }

    private static async Task<bool> EventuallyAsync(Func<Task<bool>> condition)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(20);
        while (DateTime.UtcNow < deadline)
        {
            if (await condition())
            {
                return true;
            }
            await Task.Delay(100);
        }
        return false;
    }
}
