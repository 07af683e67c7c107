namespace LLRP.Runner.Tests;

/// <summary>run-local --dry-run on a 2-CPU machine without crank: the plan it prints (load, topology, estimate, results)
/// follows the options; an option it refuses is one line naming the problem and exit status 2.</summary>
[Collection("Console")]
public sealed class RunLocalDryRunTests
{
    [Fact]
    public void TheDefaultPlanHasEveryScenarioInThreeRotatedRounds()
    {
        var (code, output) = ConsoleCapture.RunLocal("--dry-run");
        Assert.Equal(0, code);
        const string all = "direct nginx haproxy llrp-llhttp llrp-httpclient llrp-httpclientwithcontext llrp-yarp httpclientproxy yarp";
        Assert.Contains($"  scenarios:  {all}\n  load:       wrk -t 1 -c 64, path /, http to the proxy, http to the origin, proxy threads 1\n" +
            $"  round 1:    {all} \n  round 2:    direct yarp httpclientproxy llrp-yarp llrp-httpclientwithcontext llrp-httpclient llrp-llhttp haproxy nginx \n" +
            "  round 3:    haproxy llrp-llhttp llrp-httpclient llrp-httpclientwithcontext llrp-yarp httpclientproxy yarp direct nginx \n" +
            "  topology:   proxy alone on CPU 1, load + origin on CPU 0; origin nginx (crank/nginx/origin.conf)\n", output, StringComparison.Ordinal);
        Assert.Contains("  expected time ~28 min, at most ~119 min: 9 scenario(s) x 3 round(s); a run is 20s warm-up (6 .NET: until the JIT is quiet, " +
            "typically 51s, at most 90s) + 15s measured + ~6s start/stop; at most 2 retries per unsteady run; then the report (~1 min)\n", output, StringComparison.Ordinal);
        Assert.EndsWith("  results:    artifacts/crank/<date>-<time>, then report.md and PNG charts (analysis/Report)\n", output, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("--dry-run --pin --origin downstream --connections 256 --load-threads 2 --proxy-threads 2 --response-size 1024",
        "  load:       wrk -t 2 -c 256, path /?s=1024, http to the proxy, http to the origin, proxy threads 2\n",
        "  topology:   load on CPU 0, proxy + origin on CPU 1; origin Downstream (Kestrel)\n")]
    [InlineData("--dry-run --shared --no-report --steady-retries 0 yarp llrp-yarp",
        "at most 0 retries per unsteady run\n  results:    artifacts/crank/<date>-<time>\n",
        "  topology:   nothing pinned; origin Downstream (Kestrel)\n")]
    [InlineData("--dry-run --request-body-size 1024 --request-body-framing chunked llrp-llhttp",
        "1 scenario(s) x 3 round(s)",
        "origin Downstream (Kestrel) (Downstream: the nginx origin answers GET and HEAD only, and this run sends bodies)\n")]
    [InlineData("--dry-run --path /foo --server-scheme https --downstream-scheme https nginx",
        "  load:       wrk -t 1 -c 64, path /foo, https to the proxy, https to the origin, proxy threads 1\n",
        "origin Downstream (Kestrel) (Downstream: the nginx origin serves / and /?s=0|10|1024|65536 only, not /foo)\n")]
    [InlineData("--dry-run --load fixedrate --rate 1000 --round-offset 2 --rounds 2 direct nginx haproxy",
        "  load:       fixed rate 1000/s -c 64, path /, http to the proxy, http to the origin, proxy threads 1\n",
        "  round 1:    haproxy direct nginx \n  round 2:    haproxy nginx direct \n")]
    [InlineData("--dry-run --rounds 1 --duration 3 --warmup 2 --warmup-max 0 direct nginx llrp-llhttp",
        "3 scenario(s) x 1 round(s); a run is 2s warm-up + 3s measured + ~6s start/stop;", "expected time ~1 min, at most ~2 min")]
    [InlineData("--dry-run --warmup 30 --warmup-max 40 --json-dir /tmp/x --headers browser",
        "a run is 30s warm-up (6 .NET: until the JIT is quiet, typically 34s, at most 70s)",
        "  results:    /tmp/x, then report.md and PNG charts (analysis/Report)\n")]
    [InlineData("--dry-run --rounds 2 --load h2load --server-scheme https caddy h2o",
        "  load:       h2load -t 1 -m 100 -c 2, protocols http1,h2, path /, https to the proxy, http to the origin, proxy threads 1\n" +
        "  round 1:    caddy h2o \n  round 2:    caddy h2o \n", "2 scenario(s) x 2 round(s)")]
    [InlineData("--dry-run --rounds 3 --duration 3 caddy h2o nginx haproxy",
        "  scenarios:  caddy h2o nginx haproxy\n", "  round 2:    caddy haproxy nginx h2o \n")]
    public void ThePlanFollowsTheOptions(string args, string line, string other)
    {
        var (code, output) = ConsoleCapture.RunLocal(args.Split(' '));
        Assert.Equal(0, code);
        Assert.Contains(line, output, StringComparison.Ordinal);
        Assert.Contains(other, output, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("--dry-run --rounds 0", "run-local: --rounds needs a whole number >= 1, got '0' (see --help)")]
    [InlineData("--threads 2", "run-local: --threads is ambiguous now: --load-threads T for wrk's threads, --proxy-threads N for the proxies' (see --help)")]
    [InlineData("--bogus", "run-local: unknown option --bogus (see --help)")]
    [InlineData("--dry-run foo", "run-local: unknown scenario 'foo' (direct nginx haproxy llrp-llhttp llrp-httpclient llrp-httpclientwithcontext llrp-yarp httpclientproxy yarp llrp-kestrel-h1 caddy h2o) (see --help)")]
    [InlineData("--origin nginx --request-body-size 10", "run-local: --request-body-size needs the Downstream origin: --origin nginx answers GET and HEAD only (crank/nginx/origin.conf) (see --help)")]
    [InlineData("--dry-run --rate 5", "run-local: --rate is for --load fixedrate or h2load (see --help)")]
    [InlineData("--dry-run --load fixedrate", "run-local: --load fixedrate needs --rate R (requests/s, >= 1) (see --help)")]
    [InlineData("--pin --pin-proxy", "run-local: --pin and --pin-proxy exclude each other (see --help)")]
    [InlineData("--path foo", "run-local: --path must start with / (see --help)")]
    [InlineData("--response-size 10 --path /x", "run-local: --response-size and --path exclude each other (--response-size N is --path '/?s=N') (see --help)")]
    [InlineData("--steady-jit-share x", "run-local: --steady-jit-share needs a number such as 1 or 0.5, got 'x' (see --help)")]
    [InlineData("--variable foo=1", "run-local: --variable foo: only serverAddress, serverListenAddress, downstreamAddress, downstreamListenAddress and maxErrors (see --help)")]
    [InlineData("--agents load=a", "run-local: --agents needs a URL for application")]
    [InlineData("--headers xx", "run-local: --headers must be plaintext, browser, handshake or none, not 'xx' (see --help)")]
    public void ARefusedOptionIsOneLineAndExit2(string args, string message)
    {
        var (code, output) = ConsoleCapture.RunLocal(args.Split(' '));
        Assert.Equal(2, code);
        Assert.Equal(message + "\n", output);
    }
}

/// <summary>analysis/sweep.sh --dry-run: the points, rounds and run length it plans, its estimate against the budget
/// (shorter measured runs, then a warning, when it does not fit), and its refusals.</summary>
[Collection("Console")]
public sealed class SweepDryRunTests
{
    private const string Dotnet = "yarp llrp-llhttp llrp-httpclient llrp-httpclientwithcontext llrp-yarp httpclientproxy";

    [Fact]
    public void TheDefaultSweepIsTwoConnectionCountsAndAPgoPair()
    {
        var (code, output) = ConsoleCapture.Sweep("--dry-run", "--out", "/tmp/sw");
        Assert.Equal(0, code);
        Assert.Equal(
            "plan: 4 point(s) x 3 round(s), 30 run(s) per round, 20s warm-up + 15s measured per run\n" +
            $"  c64-s10: -c 64, path /: direct nginx haproxy {Dotnet}\n  c256-s10: -c 256, path /: direct nginx haproxy {Dotnet}\n" +
            $"  c64-s10-pgo: -c 64, path /, --pgo: {Dotnet}\n  c64-s10-nopgo: -c 64, path /, --nopgo: {Dotnet}\n" +
            "estimate: ~84 min of a 180 min budget (with the typical adaptive warm-up and retries; at most ~332 min if every .NET run " +
            "needed the 60s cap and every run all 3 attempts); results: /tmp/sw\n",
            Unstamped(output));
    }

    [Theory]
    [InlineData("--quick", "plan: 3 point(s) x 1 round(s), 27 run(s) per round, 1s warm-up + 2s measured per run", "  c64-s1024: -c 64, path /?s=1024: ")]
    [InlineData("--no-pgo --rounds 2 --duration 5 --warmup 3 --warmup-max 0 direct nginx llrp-llhttp",
        "plan: 2 point(s) x 2 round(s), 6 run(s) per round, 3s warm-up + 5s measured per run", "  c256-s10: -c 256, path /: direct nginx llrp-llhttp\nestimate: ~5 min")]
    [InlineData("--pgo-connections 64,256 --steady-retries 0 --no-report yarp llrp-llhttp",
        "plan: 6 point(s) x 3 round(s), 12 run(s) per round", "  c256-s10-nopgo: -c 256, path /, --nopgo: yarp llrp-llhttp\n")]
    [InlineData("--budget-minutes 10", "plan: 4 point(s) x 3 round(s), 30 run(s) per round, 20s warm-up + 10s measured per run",
        "WARNING: the plan does not fit the budget even with 20s + 10s runs: the last rounds will be cut")]
    public void ThePlanFollowsTheOptions(string args, string plan, string part)
    {
        var (code, output) = ConsoleCapture.Sweep(["--dry-run", "--out", "/tmp/sw", .. args.Split(' ')]);
        Assert.Equal(0, code);
        Assert.StartsWith(plan, Unstamped(output), StringComparison.Ordinal);
        Assert.Contains(part, Unstamped(output), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("--rounds x", "sweep: --rounds needs a whole number >= 1, got 'x' (see --help)")]
    [InlineData("--budget-minutes 0", "sweep: --budget-minutes needs a whole number >= 1, got '0' (see --help)")]
    [InlineData("--bogus", "sweep: unknown option --bogus (see --help)")]
    [InlineData("--connections 1,,2", "sweep: --connections needs a comma-separated list of whole numbers, got '1,,2' (see --help)")]
    [InlineData("--sizes x", "sweep: --sizes needs a comma-separated list of whole numbers, got 'x' (see --help)")]
    [InlineData("--ports 1", "sweep: --ports needs P,Q (see --help)")]
    [InlineData("--origin apache", "sweep: --origin must be downstream or nginx, not 'apache' (see --help)")]
    [InlineData("--pin --pin-proxy", "sweep: --pin and --pin-proxy exclude each other (see --help)")]
    [InlineData("--pgo --no-pgo", "sweep: --pgo and --no-pgo exclude each other (see --help)")]
    public void ARefusedOptionIsOneLineAndExit2(string args, string message)
    {
        var (code, output) = ConsoleCapture.Sweep(args.Split(' '));
        Assert.Equal(2, code);
        Assert.Equal(message + "\n", output);
    }

    [Fact]
    public void OptionsReachThePlanAndRunLocal()
    {
        var o = Sweep.Parse(["--headers", "browser", "--request-body-size", "5", "--ports", "9000,9001", "--sizes", "", "--pin-proxy", "--no-pgo", "yarp"]);
        Assert.Equal(["--headers", "browser", "--request-body-size", "5"], o.MatrixArgs);
        Assert.Equal((9000, 9001, "none", "--pin-proxy", false), (o.ProxyPort, o.OriginPort, o.Sizes, o.Pin, o.Pgo));
        Assert.Equal(["yarp"], o.Scenarios);
        var defaults = Sweep.Parse([]);
        Assert.Equal((18080, 18081, 64, null, null), (defaults.ProxyPort, defaults.OriginPort, defaults.BaseConnections, defaults.Rounds, defaults.Pgo));
        Assert.Empty(defaults.MatrixArgs);
    }

    private static string Unstamped(string output) => output.Replace("[sweep HH:MM:SS +0s] ", "", StringComparison.Ordinal);
}
