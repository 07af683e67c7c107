namespace LLRP.Runner.Tests;

/// <summary>run-local's HTTP/2 options: --load h2load, --streams, --protocols, --front-end and the llrp-kestrel-h1
/// scenario (crank/README.md, "HTTP/2").</summary>
public sealed class H2LoadOptionsTests
{
    [Theory]
    [InlineData("--streams 10", "--streams is for --load h2load (wrk and the fixed-rate load speak HTTP/1.1)")]
    [InlineData("--load h2load --streams 0", "--streams needs a whole number >= 1, got '0'")]
    [InlineData("--protocols h3", "--protocols must be http1, h2 or http1,h2, not 'h3'")]
    [InlineData("--protocols", "Required argument missing for option: '--protocols'.")]
    [InlineData("--load h2load --protocols http1,h2",
        "--protocols http1,h2 needs --server-scheme https (ALPN chooses); on http choose http1 or h2 (prior-knowledge h2c)")]
    [InlineData("--load h2load --server-scheme https --protocols http1",
        "--load h2load speaks HTTP/2: --protocols http1 leaves the proxy nothing it can answer")]
    [InlineData("--protocols h2", "--protocols h2 on http is prior-knowledge h2c only, and --load wrk speaks HTTP/1.1: use --load h2load")]
    [InlineData("--load h2load --headers handshake", "--headers handshake (Connection: close) has no HTTP/2 meaning; --load h2load refuses it")]
    [InlineData("--load h2load --request-body-size 10 --request-body-framing chunked",
        "--load h2load sends bodies in DATA frames; chunked framing is wrk's")]
    [InlineData("--load h2load direct nginx", "--load h2load has no direct scenario: the origin speaks HTTP/1.1")]
    [InlineData("--front-end nginx", "--front-end must be raw or kestrel, not 'nginx'")]
    public void RefusedWithOneLine(string line, string message)
    {
        var e = Assert.Throws<UsageException>(() => OptionParser.Parse(line.Split(' ')));
        Assert.Equal(message, e.Message);
    }

    [Theory]
    [InlineData("--load h2load --server-scheme https", "http1,h2")]
    [InlineData("--load h2load", "h2")]
    [InlineData("--load h2load --server-scheme https --protocols h2", "h2")]
    [InlineData("--server-scheme https --protocols h2,http1", "http1,h2")]
    [InlineData("--server-scheme https --protocols h2", "h2")]
    [InlineData("--protocols http1", "http1")]
    [InlineData("--load fixedrate --rate 5", "")]
    public void ProtocolsResolveAsTheLibraryDoes(string line, string expected) =>
        Assert.Equal(expected, OptionParser.Parse(line.Split(' ')).Protocols);

    [Fact]
    public void H2loadDropsDirectFromTheDefaultScenarios()
    {
        var o = OptionParser.Parse(["--load", "h2load"]);
        Assert.Equal(Options.AllScenarios.Where(s => s != "direct"), o.Scenarios);
        Assert.DoesNotContain("llrp-kestrel-h1", o.Scenarios);
        Assert.Equal(100, o.Streams);
    }

    [Fact]
    public void KestrelFrontEndScenarioRunsOnlyWhenNamed()
    {
        Assert.DoesNotContain("llrp-kestrel-h1", OptionParser.Parse([]).Scenarios);
        Assert.Equal(["llrp-llhttp", "llrp-kestrel-h1"], OptionParser.Parse(["llrp-llhttp", "llrp-kestrel-h1"]).Scenarios);
    }

    [Fact]
    public void H2loadConnectionsDefaultToTheCores()
    {
        var four = new Plan(OptionParser.Parse(["--load", "h2load"]), new Machine(4, null, null));
        Assert.Equal(4, four.O.Connections);
        var given = new Plan(OptionParser.Parse(["--load", "h2load", "--connections", "8"]), new Machine(4, null, null));
        Assert.Equal(8, given.O.Connections);
        var wrk = new Plan(OptionParser.Parse([]), new Machine(4, null, null));
        Assert.Equal(64, wrk.O.Connections);
        var e = Assert.Throws<UsageException>(() => new Plan(OptionParser.Parse(["--load", "h2load", "--load-threads", "3"]), new Machine(2, null, null)));
        Assert.Equal("h2load needs connections >= threads", e.Message);
    }

    [Fact]
    public void ThePeersAreServersRunByTheirJobsNotDotnet()
    {
        foreach (var s in new[] { "nginx", "haproxy", "caddy", "h2o" })
        {
            Assert.True(Peers.Is(s));
            Assert.False(Plan.IsDotnet(s));
        }
        Assert.False(Peers.Is("direct"));
        Assert.True(Plan.IsDotnet("llrp-llhttp"));
        Assert.Equal("CADDY_THREADS", Peers.Of("caddy")!.ThreadsVariable);
        Assert.Equal("H2O_THREADS", Peers.Of("h2o")!.ThreadsVariable);
        // Named only: not in the default run.
        Assert.DoesNotContain("caddy", Options.AllScenarios);
        Assert.Contains("h2o", Options.NamedScenarios);
    }

    [Fact]
    public void EachKindOfProxyIsToldItsOwnWay()
    {
        Assert.Equal("PROTOCOLS=h2|", Pair(Protocols.ProxyArgs("nginx", null, "h2", "", "--frontEnd")));
        Assert.Equal("PROTOCOLS=http1,h2|", Pair(Protocols.ProxyArgs("haproxy", null, "http1,h2", "kestrel", "--frontEnd")));
        Assert.Equal("|--protocols http1,h2 --frontEnd kestrel", Pair(Protocols.ProxyArgs("dotnet", "llrp", "http1,h2", "kestrel", "--frontEnd")));
        Assert.Equal("|--Kestrel:EndpointDefaults:Protocols=Http2", Pair(Protocols.ProxyArgs("dotnet", "yarp", "h2", "kestrel", "--frontEnd")));
        Assert.Equal("|--Kestrel:EndpointDefaults:Protocols=Http1AndHttp2", Pair(Protocols.ProxyArgs("dotnet", "httpclientproxy", "http1,h2", "", "--frontEnd")));
        Assert.Equal("|--Kestrel:EndpointDefaults:Protocols=Http1", Pair(Protocols.ProxyArgs("dotnet", "yarp", "http1", "", "--frontEnd")));
        Assert.Equal("|", Pair(Protocols.ProxyArgs("haproxy", null, "", "", "--frontEnd")));
        // The peers Caddy and h2o take PROTOCOLS as nginx and HAProxy do (their jobs map it to their own settings).
        Assert.Equal("PROTOCOLS=h2|", Pair(Protocols.ProxyArgs("caddy", null, "h2", "kestrel", "--frontEnd")));
        Assert.Equal("PROTOCOLS=http1,h2|", Pair(Protocols.ProxyArgs("h2o", null, "http1,h2", "", "--frontEnd")));
        Assert.Equal("|--frontEnd kestrel", Pair(Protocols.ProxyArgs("dotnet", "llrp", "", "kestrel", "--frontEnd")));
    }

    [Fact]
    public void TheFirstRequestSpeaksWhatTheProxySpeaks()
    {
        Assert.Equal(["--http2-prior-knowledge"], Protocols.Curl("h2", "http"));
        Assert.Equal(["--http2"], Protocols.Curl("http1,h2", "https"));
        Assert.Equal(["--http2"], Protocols.Curl("h2", "https"));
        Assert.Empty(Protocols.Curl("http1", "http"));
        Assert.Empty(Protocols.Curl("", "https"));
    }

    /// <summary>The runner's name for LLRP's front-end option is one LLRP declares (src/LLRP/CommandLine.cs).</summary>
    [Fact]
    public void FrontEndOptionIsLlrpOwn() =>
        Assert.Contains($"new(\"{Protocols.FrontEndOption[2..]}\", ",
            File.ReadAllText(Path.Combine(Checkout.Root(), "src", "LLRP", "CommandLine.cs")));

    /// <summary>"ENV|ARGS", each joined with spaces.</summary>
    [Fact]
    public void TheRunLineSaysWhatEachLoadOffered()
    {
        static string LineOf(string results) => RunSummary.Line(System.Text.Json.Nodes.JsonNode.Parse(
            """{"jobResults":{"jobs":{"load":{"results":""" + results + """},"application":{"results":{}}}}}""")!, "proxy");
        Assert.Contains("p99.9 3 ms, ", LineOf("""{"http/latency/99.9":3}"""), StringComparison.Ordinal);
        Assert.Contains("p99.9 3 ms (offered 500 req/s, missed 2), ",
            LineOf("""{"http/latency/99.9":3,"fixedrate/rate":500,"fixedrate/missed":2}"""), StringComparison.Ordinal);
        Assert.Contains("p99.9 3 ms (offered 4000 req/s, sent 3998 req/s), ",
            LineOf("""{"http/latency/99.9":3,"h2load/rate":4000,"h2load/sent":3998.4}"""), StringComparison.Ordinal);
        Assert.DoesNotContain("p99.9", LineOf("""{"http/latency/99":3}"""), StringComparison.Ordinal);
    }

    private static string Pair((string[] Env, string[] Args) p) => string.Join(' ', p.Env) + "|" + string.Join(' ', p.Args);
}

/// <summary>--dry-run of an h2load plan: the load line names h2load's shape and the proxies' protocols.</summary>
[Collection("Console")]
public sealed class H2LoadDryRunTests
{
    [Fact]
    public void OpenLoopOverTlsToThreeProxies()
    {
        var (code, output) = ConsoleCapture.RunLocal("--dry-run", "--load", "h2load", "--server-scheme", "https", "--streams", "32", "--rate", "4000",
            "--rounds", "2", "nginx", "llrp-llhttp", "llrp-kestrel-h1");
        Assert.Equal(0, code);
        Assert.Contains("  scenarios:  nginx llrp-llhttp llrp-kestrel-h1\n", output, StringComparison.Ordinal);
        Assert.Contains("  load:       h2load -t 1 -m 32 at 4000/s -c 2, protocols http1,h2, path /, https to the proxy, http to the origin, proxy threads 1\n",
            output, StringComparison.Ordinal);
        Assert.Contains("  round 2:    nginx llrp-kestrel-h1 llrp-llhttp \n", output, StringComparison.Ordinal);
    }

    [Fact]
    public void ClosedLoopH2cWithTheKestrelFrontEnd()
    {
        var (code, output) = ConsoleCapture.RunLocal("--dry-run", "--load", "h2load", "--front-end", "kestrel", "--connections", "4", "--rounds", "1");
        Assert.Equal(0, code);
        Assert.Contains("  scenarios:  nginx haproxy llrp-llhttp llrp-httpclient llrp-httpclientwithcontext llrp-yarp httpclientproxy yarp\n",
            output, StringComparison.Ordinal);
        Assert.Contains("  load:       h2load -t 1 -m 100 -c 4, protocols h2, LLRP front end kestrel, path /, http to the proxy", output, StringComparison.Ordinal);
    }

    [Fact]
    public void ARefusalIsOneLineAndExit2()
    {
        var (code, output) = ConsoleCapture.RunLocal("--dry-run", "--load", "h2load", "--protocols", "http1,h2");
        Assert.Equal(2, code);
        Assert.Equal("run-local: --protocols http1,h2 needs --server-scheme https (ALPN chooses); on http choose http1 or h2 (prior-knowledge h2c) (see --help)\n", output);
    }
}
