using System.Globalization;

namespace LLRP.Runner.Tests;

public sealed class RoundOrderTests
{
    [Fact]
    public void FourItemsRotateAndReverse()
    {
        string[] items = ["A", "B", "C", "D"];
        Assert.Equal(new[] { "A", "B", "C", "D" }, Rounds.Order(1, items));
        Assert.Equal(new[] { "A", "D", "C", "B" }, Rounds.Order(2, items));
        Assert.Equal(new[] { "C", "D", "A", "B" }, Rounds.Order(3, items));
        Assert.Equal(new[] { "C", "B", "A", "D" }, Rounds.Order(4, items));
        Assert.Equal(Rounds.Order(1, items), Rounds.Order(5, items));
    }

    [Fact]
    public void NoItemAlwaysFirstOrLast()
    {
        string[] items = ["a", "b", "c", "d", "e"];
        var orders = Enumerable.Range(1, 4).Select(r => Rounds.Order(r, items)).ToList();
        Assert.All(orders, o => Assert.Equal(items.Order(), o.Order()));
        Assert.True(orders.Select(o => o[0]).Distinct().Count() > 1);
        Assert.True(orders.Select(o => o[^1]).Distinct().Count() > 1);
    }

    [Fact]
    public void OneItemAndNoItem()
    {
        Assert.Equal(new[] { "x" }, Rounds.Order(2, new[] { "x" }));
        Assert.Empty(Rounds.Order(3, Array.Empty<string>()));
    }
}

public sealed class OptionParsingTests
{
    [Theory]
    [InlineData("--rounds x", "--rounds needs a whole number >= 1, got 'x'")]
    [InlineData("--rounds 0", "--rounds needs a whole number >= 1, got '0'")]
    [InlineData("--rounds", "Required argument missing for option: '--rounds'.")]
    [InlineData("--duration -1", "--duration needs a whole number >= 1, got '-1'")]
    [InlineData("--warmup 1.5", "--warmup needs a whole number, got '1.5'")]
    [InlineData("--frobnicate", "unknown option --frobnicate")]
    [InlineData("nginx squid", "unknown scenario 'squid' (direct nginx haproxy llrp-llhttp llrp-httpclient llrp-httpclientwithcontext llrp-yarp httpclientproxy yarp llrp-kestrel-h1 caddy h2o)")]
    [InlineData("--threads 2", "--threads is ambiguous now: --load-threads T for wrk's threads, --proxy-threads N for the proxies'")]
    [InlineData("--pin --pin-proxy", "--pin and --pin-proxy exclude each other")]
    [InlineData("--pgo --nopgo", "--pgo and --nopgo exclude each other")]
    [InlineData("--steady-jit-share x", "--steady-jit-share needs a number such as 1 or 0.5, got 'x'")]
    [InlineData("--origin apache", "--origin must be downstream or nginx, not 'apache'")]
    [InlineData("--variable foo=1", "--variable foo: only serverAddress, serverListenAddress, downstreamAddress, downstreamListenAddress and maxErrors")]
    [InlineData("--load h3", "--load must be wrk, fixedrate, h2load or websocket, not 'h3'")]
    [InlineData("--request-body-framing gzip", "--request-body-framing must be content-length or chunked, not 'gzip'")]
    [InlineData("--app-env X", "--app-env needs K=V")]
    [InlineData("--variable maxErrors=x", "--variable maxErrors needs a whole number, got 'x'")]
    [InlineData("--netns load=a,proxy=b", "--netns: unknown role 'proxy' (load, application, downstream)")]
    [InlineData("--agents load=", "--agents: 'load=' needs ROLE=VALUE")]
    [InlineData("--load-threads 8 --connections 4", "wrk needs connections >= threads")]
    [InlineData("--load fixedrate --rate 10 --request-body-size 5 --request-body-framing chunked",
        "--load fixedrate sends bodies with Content-Length only (h2load); chunked is wrk's")]
    public void BadOptionIsOneClearMessage(string line, string message)
    {
        var e = Assert.Throws<UsageException>(() => OptionParser.Parse(line.Split(' ')));
        Assert.Equal(message, e.Message);
        Assert.True(e.SeeHelp);
    }

    [Fact]
    public void DefaultsAreTheDocumentedOnes()
    {
        var o = OptionParser.Parse([]);
        Assert.Equal((3, 15, 20, 64, 1, 1), (o.Rounds, o.Duration, o.Warmup, o.Connections, o.LoadThreads, o.ProxyThreads));
        Assert.Equal((60, 2, 15, "5", 2), (o.WarmupMax, o.WarmJit, o.SteadyTolerance, o.SteadyJitShare, o.SteadyRetries));
        Assert.Equal(Options.AllScenarios, o.Scenarios);
        Assert.False(o.ExplicitScenarios);
    }

    [Fact]
    public void ResponseSizeIsThePath()
    {
        var o = OptionParser.Parse(["--response-size", "1024", "nginx", "direct"]);
        Assert.Equal("/?s=1024", o.Path);
        Assert.Equal(new[] { "nginx", "direct" }, o.Scenarios);
        Assert.True(o.ExplicitScenarios);
    }

    [Fact]
    public void GivenValuesReachTheOptions()
    {
        var o = OptionParser.Parse(["--rounds", "2", "--app-env", "a=1", "--app-env", "b=2", "--variable", "maxErrors=3", "--pin", "--nopgo",
            "--no-report", "--no-install", "--steady-jit-share", "0.5", "--json-dir", "out", "--agents", "load=u1,application=u2,downstream=u3", "yarp"]);
        Assert.Equal((2, "load", "nopgo", false, false, "0.5", "out"), (o.Rounds, o.Pin, o.Pgo, o.Report, o.Install, o.SteadyJitShare, o.JsonDir));
        Assert.Equal(["a=1", "b=2"], o.AppEnv);
        Assert.Equal("3", o.GivenVariables["maxErrors"]);
        Assert.Equal("u2", o.Agents["application"]);
        Assert.Equal(["yarp"], o.Scenarios);
    }

    /// <summary>crank/smoke.sh gives --connections twice (its common options, then the h2load run's own).</summary>
    [Fact]
    public void ARepeatedOptionTakesItsLastValue()
    {
        var o = OptionParser.Parse(["--connections", "16", "--load", "h2load", "--connections", "2", "--path", "/a", "nginx", "--path", "/b"]);
        Assert.Equal((2, "/b", true), (o.Connections, o.Path, o.ConnectionsGiven));
        Assert.Equal(["nginx"], o.Scenarios);
    }

    [Fact]
    public void HelpIsAskedFor()
    {
        Assert.True(OptionParser.Parse(["--help"]).Help);
        Assert.True(OptionParser.Parse(["-h"]).Help);
        Assert.False(OptionParser.Parse([]).Help);
    }
}

public sealed class PlanTests
{
    private static Plan PlanOf(params string[] args) => new(OptionParser.Parse(args), new Machine(2, null, null));

    [Fact]
    public void DefaultTopologyIsTheHeadlines()
    {
        var p = PlanOf();
        Assert.Equal(("proxy", "nginx"), (p.Pin, p.Origin));
        Assert.Equal("application=cpu1 load,downstream=cpu0", p.PinningShort);
    }

    [Fact]
    public void OneCpuOrCrankFallsBackToTheSharedTopology()
    {
        var one = new Plan(OptionParser.Parse([]), new Machine(1, null, null));
        Assert.Equal("nothing pinned; origin Downstream (Kestrel) (the default where --pin-proxy --origin nginx cannot run: 1 CPU)", one.TopologyText);
        var crank = new Plan(OptionParser.Parse([]), new Machine(4, "/x/crank", "/x/crank-agent"));
        Assert.Equal("crank", crank.Mode);
        Assert.EndsWith("cannot run: crank)", crank.TopologyText, StringComparison.Ordinal);
        var fallback = new Plan(OptionParser.Parse(["--fallback"]), new Machine(4, "/x/crank", "/x/crank-agent"));
        Assert.Equal("fallback", fallback.Mode);
    }

    [Fact]
    public void EstimateCountsAdaptiveWarmupsAndRetries()
    {
        // 1 fixed run (20 + 15 + 6 = 41 s) and 1 .NET run (51 + 15 + 6 = 72 s) per round, 2 rounds: 226 s -> 4 min;
        // at most (20+15+6 + 90+15+6) x 2 rounds x 3 attempts = 912 s -> 16 min.
        var p = PlanOf("--rounds", "2", "nginx", "yarp");
        Assert.StartsWith("expected time ~4 min, at most ~16 min: 2 scenario(s) x 2 round(s); a run is 20s warm-up (1 .NET: until the JIT is quiet, typically 51s, at most 90s)",
            p.Estimate(p.O.Scenarios), StringComparison.Ordinal);
        var fixedWarmup = PlanOf("--warmup", "30", "--warmup-max", "30", "--no-report", "--steady-retries", "0", "yarp");
        Assert.Equal(0, fixedWarmup.O.WarmupMax);
        Assert.Equal("expected time ~3 min, at most ~3 min: 1 scenario(s) x 3 round(s); a run is 30s warm-up + 15s measured + ~6s start/stop; at most 0 retries per unsteady run",
            fixedWarmup.Estimate(fixedWarmup.O.Scenarios));
    }

    [Fact]
    public void DryRunPrintsEachRoundsOrder()
    {
        var text = PlanOf("--rounds", "2", "--round-offset", "1", "--no-report", "direct", "nginx", "haproxy").DryRun();
        Assert.Contains("  round 1:    direct haproxy nginx \n  round 2:    haproxy direct nginx \n", text, StringComparison.Ordinal);
        Assert.EndsWith("  results:    artifacts/crank/<date>-<time>\n", text, StringComparison.Ordinal);
    }
}

public sealed class SteadinessTests
{
    [Theory]
    [InlineData(10.0, 11.0, null, true)]
    [InlineData(10.0, 12.0, null, false)]
    [InlineData(12.0, 10.0, null, false)]
    [InlineData(10.0, 10.5, 4.9, true)]
    [InlineData(10.0, 10.5, 5.1, false)]
    public void HalvesWithinToleranceAndAQuietJit(double first, double second, double? jit, bool steady)
    {
        Assert.Equal(steady, Steadiness.Decide(first, second, 15, jit, 5).Steady);
    }

    [Fact]
    public void ChangeIsRelativeToTheMean()
    {
        Assert.Equal(20.0, Steadiness.Decide(9, 11, 15, null, 5).Change, 9);
    }

    [Theory]
    [InlineData(0.0, 1, 2, true)]
    [InlineData(0.0, 3, 2, false)]
    [InlineData(1.0, 1, 2, false)]
    [InlineData(null, 1, 2, false)]
    [InlineData(0.0, 1, 0, false)]
    public void RetryOnlyAnUnsteadyRunWithAttemptsLeft(double? steadyOk, int attempt, int retries, bool retry)
    {
        Assert.Equal(retry, Steadiness.Retry(steadyOk, attempt, retries));
    }

    /// <summary>A proxy sampled for 10 s at 100 ticks/s: 0.5 s of CPU per second, 1000 requests a second (100 bytes
    /// each); the second half costs <paramref name="secondHalfTicks"/> ticks a second.</summary>
    private static List<string> Samples(int secondHalfTicks)
    {
        var lines = new List<string>();
        long cpu = 1000, bytes = 0;
        for (var i = 0; i <= 10; i++)
        {
            var phase = i == 0 ? "measure-start" : i == 10 ? "measure-end" : "tick";
            var port = i == 10 ? 0 : bytes;
            lines.Add(string.Create(CultureInfo.InvariantCulture, $"{phase} application {1_000_000_000L * (i + 1)} {cpu} 0 20480 30720 12 0 0 {port}"));
            cpu += i < 5 ? 50 : secondHalfTicks;
            bytes += 100_000;
        }
        return lines;
    }

    [Fact]
    public void WindowFiguresFromTheSamples()
    {
        var rows = Window.Figures("application", Samples(50), 10_000, 100, 2, 15, 1.0, 5).ToDictionary(r => r.Name, r => r.Value);
        Assert.Equal(10, rows["proc/window"], 9);
        Assert.Equal(5000, rows["proc/cpu/time"], 6);
        Assert.Equal(500, rows["proc/cpu/per-request"], 6);
        Assert.Equal(50, rows["benchmarks/cpu/raw"], 6);
        Assert.Equal(25, rows["benchmarks/cpu"], 6);
        Assert.Equal(20, rows["benchmarks/working-set"], 6);
        Assert.Equal(1, rows["steady/ok"]);
        Assert.Equal(1, rows["steady/jit-ok"]);
    }

    [Fact]
    public void AProxyGettingCheaperIsNotSteady()
    {
        var rows = Window.Figures("application", Samples(30), 8_000, 100, 2, 15, null, 5).ToDictionary(r => r.Name, r => r.Value);
        Assert.Equal(0, rows["steady/cpu-ok"]);
        Assert.Equal(0, rows["steady/ok"]);
        Assert.True(rows["steady/change"] < -15);
        Assert.False(rows.ContainsKey("steady/jit-share"));
    }

    [Fact]
    public void NoWindowWithoutItsEnd()
    {
        Assert.Empty(Window.Figures("application", Samples(50).Take(5), 1000, 100, 2, 15, null, 5));
        Assert.Empty(Window.Figures("downstream", Samples(50), 1000, 100, 2, 15, null, 5));
    }
}

[Collection("Console")]
public sealed class CommandLineTests
{
    [Theory]
    [InlineData("--bogus")]
    [InlineData("--rounds 0")]
    [InlineData("nope")]
    public void BadUsageIsOneLineAndExitTwo(string line)
    {
        var (code, output) = ConsoleCapture.RunLocal(line.Split(' '));
        Assert.Equal(2, code);
        Assert.Single(output.TrimEnd('\n').Split('\n'));
        Assert.StartsWith("run-local: ", output, StringComparison.Ordinal);
    }

    [Fact]
    public void HelpExitsZero()
    {
        var (code, output) = ConsoleCapture.RunLocal("--help");
        Assert.Equal(0, code);
        // The generated help: every option the parser knows, with its default.
        Assert.Contains("crank/run-local.sh [<SCENARIO>...] [options]", output, StringComparison.Ordinal);
        Assert.Matches(@"--rounds <N> +interleaved rounds.*\[default: 3\]", output);
        Assert.DoesNotMatch(@"(?m)^ +--threads ", output);
    }

    [Fact]
    public void OrderSubcommandPrintsOneItemPerLine()
    {
        var stdout = Console.Out;
        var captured = new StringWriter();
        Console.SetOut(captured);
        try
        {
            Assert.Equal(0, Program.Main(["order", "2", "A", "B", "C", "D"]));
            Assert.Equal(2, Program.Main(["order", "0", "A"]));
        }
        finally
        {
            Console.SetOut(stdout);
        }
        Assert.Equal("A\nD\nC\nB\n", captured.ToString());
    }

    [Theory]
    [InlineData("a b", "'a b'")]
    [InlineData("/?s=1", "'/?s=1'")]
    [InlineData("x=y", "x=y")]
    [InlineData("", "''")]
    [InlineData("a,b", "a,b")]
    [InlineData("it's", "'it'\\''s'")]
    public void CommandLineWordsQuotedOnlyWhenAShellWouldReadThemSpecially(string word, string quoted) => Assert.Equal(quoted, ShellWord.Quote(word));
}
