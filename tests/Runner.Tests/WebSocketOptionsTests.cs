namespace LLRP.Runner.Tests;

/// <summary>run-local's --load websocket (crank/README.md, "WebSocket"): its options, its scenarios, its origin and its
/// plan.</summary>
public sealed class WebSocketOptionsTests
{
    [Theory]
    [InlineData("--message-size 64", "--message-size is for --load websocket")]
    [InlineData("--load websocket --message-size 1048577", "--message-size must be 0 to 1048576 bytes")]
    [InlineData("--load websocket --message-size x", "--message-size needs a whole number, got 'x'")]
    [InlineData("--load websocket --response-size 10",
        "--load websocket sends messages, not requests: --message-size N sets their size (not --response-size or --request-body-size)")]
    [InlineData("--load websocket --request-body-size 10",
        "--load websocket sends messages, not requests: --message-size N sets their size (not --response-size or --request-body-size)")]
    [InlineData("--load websocket --headers browser", "--headers is for the HTTP loads: --load websocket sends the WebSocket handshake's fields only")]
    [InlineData("--load websocket --origin nginx", "--load websocket needs the Downstream origin (its /ws echo): --origin nginx has none")]
    [InlineData("--load websocket --rate 100", "--rate is for --load fixedrate or h2load")]
    [InlineData("--load websocket --streams 10", "--streams is for --load h2load (wrk and the fixed-rate load speak HTTP/1.1)")]
    [InlineData("--load websocket nginx httpclientproxy",
        "--load websocket has no httpclientproxy scenario: its proxy does not tunnel an upgrade (runs: direct nginx haproxy llrp-llhttp llrp-httpclient llrp-httpclientwithcontext llrp-yarp yarp caddy)")]
    [InlineData("--load websocket llrp-kestrel-h1",
        "--load websocket has no llrp-kestrel-h1 scenario: its proxy does not tunnel an upgrade (runs: direct nginx haproxy llrp-llhttp llrp-httpclient llrp-httpclientwithcontext llrp-yarp yarp caddy)")]
    [InlineData("--load websocket --protocols h2", "--protocols h2 on http is prior-knowledge h2c only, and --load websocket speaks HTTP/1.1: use --load h2load")]
    [InlineData("--load ws", "--load must be wrk, fixedrate, h2load or websocket, not 'ws'")]
    public void RefusedWithOneLine(string line, string message)
    {
        var e = Assert.Throws<UsageException>(() => OptionParser.Parse(line.Split(' ')));
        Assert.Equal(message, e.Message);
    }

    [Fact]
    public void TheDefaultsAreTheEchoPathAndTheScenariosThatTunnel()
    {
        var o = OptionParser.Parse(["--load", "websocket"]);
        Assert.Equal("/ws", o.Path);
        Assert.Equal(32, o.MessageSize);
        Assert.Equal(64, o.Connections);
        Assert.Equal("", o.Protocols);
        // Every default scenario but HttpClientProxy, which does not tunnel; Caddy only when named, as with wrk.
        Assert.Equal(Options.AllScenarios.Where(s => s != "httpclientproxy"), o.Scenarios);

        var given = OptionParser.Parse(["--load", "websocket", "--message-size", "0", "--path", "/other", "--connections", "200", "caddy", "llrp-llhttp"]);
        Assert.Equal(("/other", 0, 200), (given.Path, given.MessageSize, given.Connections));
        Assert.Equal(["caddy", "llrp-llhttp"], given.Scenarios);
        // Other loads keep their path.
        Assert.Equal("/", OptionParser.Parse([]).Path);
    }

    [Fact]
    public void TheOriginIsDownstreamAndTheLoadSaysWhatItSends()
    {
        var plan = new Plan(OptionParser.Parse(["--load", "websocket", "--message-size", "100"]), new Machine(2, null, null));
        Assert.Equal("downstream", plan.Origin);
        Assert.Equal("proxy", plan.Pin);
        Assert.Equal("proxy alone on CPU 1, load + origin on CPU 0; origin Downstream (Kestrel) (Downstream: the nginx origin has no WebSocket echo)",
            plan.TopologyText);
        Assert.Equal("websocket echo of 100-byte messages -c 64", plan.LoadText);
    }

    [Theory]
    [InlineData("http://127.0.0.1:8080/ws", "ws://127.0.0.1:8080/ws")]
    [InlineData("https://10.0.0.2:8080/ws", "wss://10.0.0.2:8080/ws")]
    [InlineData("ws://a/ws", "ws://a/ws")]
    public void TheJobGetsAWebSocketUrl(string url, string expected) => Assert.Equal(expected, RunLocal.WebSocketUrl(url));

    [Fact]
    public void EveryWebSocketScenarioIsInBenchmarksYml()
    {
        var yml = File.ReadAllText(Path.Combine(Checkout.Root(), "benchmarks.yml"));
        foreach (var s in Options.WebSocketScenarios)
        {
            Assert.Contains($"\n  websocket-{s}:\n", yml, StringComparison.Ordinal);
        }
        Assert.Contains("\n  websocket:\n", yml, StringComparison.Ordinal);
    }
}

/// <summary>run-local --load websocket --dry-run: the plan names the load and the scenarios.</summary>
[Collection("Console")]
public sealed class WebSocketDryRunTests
{
    [Fact]
    public void ThePlanNamesTheEchoAndItsScenarios()
    {
        var (code, output) = ConsoleCapture.RunLocal("--dry-run", "--load", "websocket", "--rounds", "1", "llrp-llhttp", "yarp", "nginx", "haproxy", "caddy");
        Assert.Equal(0, code);
        Assert.Contains("  scenarios:  llrp-llhttp yarp nginx haproxy caddy\n" +
            "  load:       websocket echo of 32-byte messages -c 64, path /ws, http to the proxy, http to the origin, proxy threads 1\n", output, StringComparison.Ordinal);
        Assert.Contains("origin Downstream (Kestrel) (Downstream: the nginx origin has no WebSocket echo)\n", output, StringComparison.Ordinal);
    }
}
