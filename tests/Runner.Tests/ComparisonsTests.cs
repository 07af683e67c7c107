using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;

namespace LLRP.Runner.Tests;

/// <summary>The published comparisons (crank/run-local.sh scaling|sweep|ab|ramp|comparisons): refusals and --help on the
/// console, crank mode with a crank that does nothing (the estimate and each run's crank command line: the scenario and
/// the variables benchmarks.yml is given), and ComparisonsResults/ (three short fallback runs' result files,
/// comparisons.json and log) rebuilt and aggregated.</summary>
[Collection("Console")]
public sealed partial class ComparisonsRunTests
{
    private static string Dir(string name) => Path.Combine(AppContext.BaseDirectory, name);

    [Theory]
    [InlineData("", "comparisons: name a comparison: scaling, sweep, ab, ramp or comparisons (see --help)")]
    [InlineData("bogus", "comparisons: unknown comparison 'bogus' (scaling, sweep, ab, ramp, comparisons) (see --help)")]
    [InlineData("--rounds 2", "comparisons: name a comparison: scaling, sweep, ab, ramp or comparisons (see --help)")]
    [InlineData("ab --rounds 0", "comparisons: --rounds needs a whole number >= 1, got '0' (see --help)")]
    [InlineData("ab --rounds x", "comparisons: --rounds needs a whole number >= 1, got 'x' (see --help)")]
    [InlineData("ab --rounds", "comparisons: Required argument missing for option: '--rounds'. (see --help)")]
    [InlineData("ab --warmup -1", "comparisons: --warmup needs a whole number, got '-1' (see --help)")]
    [InlineData("ab --duration 0", "comparisons: --duration needs a whole number >= 1, got '0' (see --help)")]
    [InlineData("ab --proxies", "comparisons: Required argument missing for option: '--proxies'. (see --help)")]
    [InlineData("ab --policies", "comparisons: Required argument missing for option: '--policies'. (see --help)")]
    [InlineData("scaling --replicas 1,x", "comparisons: --replicas needs comma-separated whole numbers, got '1,x' (see --help)")]
    [InlineData("scaling --replicas 6", "comparisons: --replicas: 1 to 5 replicas, got 6 (see --help)")]
    [InlineData("scaling --replicas 0,2", "comparisons: --replicas: 1 to 5 replicas, got 0 (see --help)")]
    [InlineData("sweep --connections 10,", "comparisons: --connections needs comma-separated whole numbers, got '10,' (see --help)")]
    [InlineData("ab --ab-path foo", "comparisons: --ab-path must start with / (see --help)")]
    [InlineData("ab --ab-clients 0", "comparisons: --ab-clients needs a whole number >= 1, got '0' (see --help)")]
    [InlineData("ab --scaling-connections 0", "comparisons: --scaling-connections needs a whole number >= 1, got '0' (see --help)")]
    [InlineData("ramp --ramp-start x", "comparisons: --ramp-start needs a whole number >= 1, got 'x' (see --help)")]
    [InlineData("ramp --ramp-step 0", "comparisons: --ramp-step needs a whole number >= 1, got '0' (see --help)")]
    [InlineData("ramp --ramp-steps 0", "comparisons: --ramp-steps needs a whole number >= 1, got '0' (see --help)")]
    [InlineData("ramp --ramp-connections", "comparisons: Required argument missing for option: '--ramp-connections'. (see --help)")]
    [InlineData("ab --proxy-threads 0", "comparisons: --proxy-threads needs a whole number >= 1, got '0' (see --help)")]
    [InlineData("ab --proxy-port 0", "comparisons: --proxy-port needs a whole number >= 1, got '0' (see --help)")]
    [InlineData("ab --downstream-port x", "comparisons: --downstream-port needs a whole number >= 1, got 'x' (see --help)")]
    [InlineData("ab --json-dir", "comparisons: Required argument missing for option: '--json-dir'. (see --help)")]
    [InlineData("ab --frobnicate", "comparisons: unknown option --frobnicate (see --help)")]
    [InlineData("scaling --proxies direct", "comparisons: --proxies: direct runs in the ab and sweep comparisons only (see --help)")]
    [InlineData("comparisons --proxies direct", "comparisons: --proxies: direct runs in the ab and sweep comparisons only (see --help)")]
    [InlineData("ab --proxies nginx,squid", "comparisons: --proxies: unknown proxy 'squid' (llrp-llhttp, yarp, nginx, nginx-default, haproxy, direct) (see --help)")]
    [InlineData("scaling --policies Foo", "comparisons: --policies: unknown policy 'Foo' (ConnectionRoundRobin PowerOfTwoChoices FirstAlphabetical Random RoundRobin LeastRequests) (see --help)")]
    [InlineData("ab --policies roundrobin,Nope", "comparisons: --policies: unknown policy 'Nope' (ConnectionRoundRobin PowerOfTwoChoices FirstAlphabetical Random RoundRobin LeastRequests) (see --help)")]
    [InlineData("scaling --proxy-port 8082 --downstream-port 8081 --replicas 1,2,3", "comparisons: the replicas' ports 8081..8083 include the proxy's 8082 (see --help)")]
    [InlineData("sweep --proxy-port 8080 --downstream-port 8080", "comparisons: the replicas' ports 8080..8084 include the proxy's 8080 (see --help)")]
    public void ARefusalIsOneLineAndExit2(string args, string message)
    {
        var (code, output) = ConsoleCapture.Comparisons(Checkout.Root(), null, Runner.Comparisons.AgentPort,
            args.Split(' ', StringSplitOptions.RemoveEmptyEntries));
        Assert.Equal(2, code);
        Assert.Equal(message + "\n", output);
    }

    [Theory]
    [InlineData("--help")]
    [InlineData("-h")]
    [InlineData("ab --rounds 2 --help")]
    public void HelpIsTheHelpText(string args)
    {
        var (code, output) = ConsoleCapture.Comparisons(Checkout.Root(), null, Runner.Comparisons.AgentPort, args.Split(' '));
        Assert.Equal(0, code);
        Assert.Contains("crank/run-local.sh [<COMPARISON>] [options]", output, StringComparison.Ordinal);
        Assert.Matches(@"--ramp-start <R> +ramp: the first rate \(req/s\) \[default: 4000\]", output);
    }

    /// <summary>Crank mode, ab: one crank run per proxy, each with the comparison's scenario and its variables.</summary>
    [Fact]
    public void CrankModeRunsEachProxyWithItsScenarioAndVariables()
    {
        var (code, lines, root) = Crank("ab", "--ab-path", "/?s=1024", "--ab-clients", "50", "--proxy-port", "9601", "--downstream-port", "9611");
        Assert.Equal(0, code);
        Assert.Equal("mode: crank; 5 run(s) x 1 round(s); expected run time ~4 min", lines[1]);
        Assert.Equal($"ab.direct.n1.c50.r1: crank --config {root}/benchmarks.yml --scenario ab-direct --profile local --json {root}/out/ab.direct.n1.c50.r1.crank.json " +
            "--variable connections=50 --variable warmup=20 --variable duration=15 --variable serverPort=9601 --variable downstreamPort=9611 " +
            "--variable downstreams=1 --variable threads=1 --variable abPath=/?s=1024", lines[2]);
        Assert.Equal(["ab-direct", "ab-llrp-llhttp", "ab-yarp", "ab-nginx", "ab-haproxy"],
            lines.Where(l => l.Contains(" --scenario ", StringComparison.Ordinal)).Select(l => l.Split(' ')[5]));
        Assert.Equal("all runs succeeded", lines[^1]);
    }

    /// <summary>Crank mode, ramp: the ramp's variables reach benchmarks.yml.</summary>
    [Fact]
    public void CrankModeGivesTheRampItsSteps()
    {
        var (code, lines, _) = Crank("ramp", "--ramp-start", "1000", "--ramp-step", "500", "--ramp-steps", "3", "--ramp-connections", "20", "--duration", "4");
        Assert.Equal(0, code);
        Assert.Equal("mode: crank; 3 run(s) x 1 round(s); expected run time ~2 min", lines[1]);
        Assert.All(lines[2..^1], l => Assert.EndsWith(" --variable connections=20 --variable warmup=20 --variable duration=4 --variable serverPort=8080 " +
            "--variable downstreamPort=8081 --variable downstreams=1 --variable threads=1 --variable rampStart=1000 --variable rampStep=500 --variable rampSteps=3",
            l, StringComparison.Ordinal));
    }

    [Fact]
    public void NothingToRunIsARefusal()
    {
        var (code, lines, _) = Crank("scaling", "--proxies", "yarp", "--policies", "ConnectionRoundRobin");
        Assert.Equal(2, code);
        Assert.Equal(["comparisons: nothing to run (check --proxies and --policies) (see --help)"], lines);
    }

    /// <summary>The comparisons in crank mode on a 2-CPU machine, with a crank that exits 0 and writes nothing and a
    /// listener standing in for the agent: exit status, the log's lines without their stamps (a missing tool's warning
    /// left out), the folder it ran in.</summary>
    private static (int Code, string[] Lines, string Root) Crank(params string[] args)
    {
        var root = Directory.CreateTempSubdirectory("comparisons-").FullName;
        try
        {
            var crank = Path.Combine(root, "crank-stub");
            File.WriteAllText(crank, "#!/bin/sh\nexit 0\n");
            if (!OperatingSystem.IsWindows())
            {
                File.SetUnixFileMode(crank, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
            }
            using var agent = new TcpListener(IPAddress.Loopback, 0);
            agent.Start();
            var port = ((IPEndPoint)agent.LocalEndpoint).Port;
            var (code, output) = ConsoleCapture.Comparisons(root, new Machine(2, crank, null), port,
                [.. args, "--json-dir", Path.Combine(root, "out"), "--no-install"]);
            var lines = MissingTools().Replace(output, "").Replace("[comparisons HH:MM:SS] ", "", StringComparison.Ordinal).TrimEnd('\n').Split('\n');
            return (code, lines, root);
        }
        finally
        {
            Directory.Delete(root, recursive: true);
        }
    }

    public static TheoryData<string> ResultFolders() => ["ab", "ramp", "sweep"];

    /// <summary>comparisons.json from the result files: the rows (properties, ok, the load's results) in
    /// the same order, and run.json.</summary>
    [Theory]
    [MemberData(nameof(ResultFolders))]
    public void ComparisonsJsonFromTheResultFiles(string folder)
    {
        var dir = Path.Combine(Dir("ComparisonsResults"), folder);
        var expected = JsonNode.Parse(File.ReadAllText(Path.Combine(dir, "comparisons.json")));
        var actual = Runner.Comparisons.Aggregate(dir);
        Assert.True(JsonNode.DeepEquals(expected, actual), actual?.ToJsonString());
    }

    /// <summary>Each result file rebuilt from its load job and its run, and the line logged for it.</summary>
    [Theory]
    [MemberData(nameof(ResultFolders))]
    public void EachResultFileRebuiltFromItsLoadJobAndRun(string folder)
    {
        var dir = Path.Combine(Dir("ComparisonsResults"), folder);
        var log = File.ReadAllText(Path.Combine(dir, "run.log"));
        var files = Directory.GetFiles(dir, "*.r1.json");
        Assert.NotEmpty(files);
        foreach (var f in files)
        {
            var recorded = JsonNode.Parse(File.ReadAllText(f))!;
            var p = recorded["jobResults"]!["properties"]!;
            string S(string key) => p[key]!.GetValue<string>();
            var run = new ComparisonRun(S("comparison"), S("scenario"), S("loadBalancing"), int.Parse(S("downstreams"), CultureInfo.InvariantCulture),
                int.Parse(S("connections"), CultureInfo.InvariantCulture));
            var tag = run.Tag(int.Parse(S("round"), CultureInfo.InvariantCulture));
            Assert.Equal(Path.GetFileName(f), tag + ".json");
            var rebuilt = Runner.Comparisons.Result(recorded["jobResults"]!["jobs"]!["load"]!.DeepClone(), run, 1, S("mode"), S("loadExitCode"), S("commit"));
            Assert.True(JsonNode.DeepEquals(recorded, rebuilt), rebuilt.ToJsonString());
            Assert.Contains($"] {tag}: {Runner.Comparisons.Summary(recorded)}\n", log, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void ARunThatNeverStartedHasNoFigures()
    {
        var r = Runner.Comparisons.Result(new JsonObject(), new ComparisonRun("scaling", "yarp", "Random", 3, 200), 2, "fallback", "not-started", "abc");
        Assert.Equal(1, r["returnCode"]!.GetValue<int>());
        Assert.Equal("3", r["jobResults"]!["properties"]!["downstreams"]!.GetValue<string>());
        Assert.Equal("2", r["jobResults"]!["properties"]!["round"]!.GetValue<string>());
        Assert.Equal("0 rps, p90 ? ms, p95 ? ms", Runner.Comparisons.Summary(r));
    }

    [Theory]
    [InlineData("ab.nginx.n1.c200.r1.json", true)]
    [InlineData("scaling.yarp.Random.n3.c200.r12.json", true)]
    [InlineData("ab.nginx.n1.c200.r1.crank.json", false)]
    [InlineData("run.json", false)]
    [InlineData("comparisons.json", false)]
    [InlineData("ab.nginx.n1.c200.r1.samples", false)]
    public void ResultFilesAreTheTagged(string name, bool result) => Assert.Equal(result, Runner.Comparisons.IsResultFile(name));

    [GeneratedRegex(@"\[comparisons HH:MM:SS\] WARNING: missing [^\n]*and not installing them[^\n]*\n")]
    private static partial Regex MissingTools();
}

public sealed class ComparisonOptionTests
{
    [Theory]
    [InlineData("", "name a comparison: scaling, sweep, ab, ramp or comparisons")]
    [InlineData("scale", "unknown comparison 'scale' (scaling, sweep, ab, ramp, comparisons)")]
    [InlineData("ab --rounds 0", "--rounds needs a whole number >= 1, got '0'")]
    [InlineData("ab --rounds 99999999999", "--rounds needs a whole number >= 1, got '99999999999'")]
    [InlineData("ab --warmup x", "--warmup needs a whole number, got 'x'")]
    [InlineData("ab --duration", "Required argument missing for option: '--duration'.")]
    [InlineData("ab --proxies", "Required argument missing for option: '--proxies'.")]
    [InlineData("ab --policies", "Required argument missing for option: '--policies'.")]
    [InlineData("scaling --replicas 1,,2", "--replicas needs comma-separated whole numbers, got '1,,2'")]
    [InlineData("scaling --replicas 2,7", "--replicas: 1 to 5 replicas, got 7")]
    [InlineData("sweep --connections x", "--connections needs comma-separated whole numbers, got 'x'")]
    [InlineData("ab --scaling-connections 0", "--scaling-connections needs a whole number >= 1, got '0'")]
    [InlineData("ab --ab-clients x", "--ab-clients needs a whole number >= 1, got 'x'")]
    [InlineData("ab --ab-path index.html", "--ab-path must start with /")]
    [InlineData("ramp --ramp-start 0", "--ramp-start needs a whole number >= 1, got '0'")]
    [InlineData("ramp --ramp-step -5", "--ramp-step needs a whole number >= 1, got '-5'")]
    [InlineData("ramp --ramp-steps x", "--ramp-steps needs a whole number >= 1, got 'x'")]
    [InlineData("ramp --ramp-connections 0", "--ramp-connections needs a whole number >= 1, got '0'")]
    [InlineData("ab --proxy-threads 0", "--proxy-threads needs a whole number >= 1, got '0'")]
    [InlineData("ab --proxy-port x", "--proxy-port needs a whole number >= 1, got 'x'")]
    [InlineData("ab --downstream-port 0", "--downstream-port needs a whole number >= 1, got '0'")]
    [InlineData("ab --json-dir", "Required argument missing for option: '--json-dir'.")]
    [InlineData("ab --threads 2", "unknown option --threads")]
    [InlineData("ab nginx", "unexpected argument 'nginx'")]
    [InlineData("scaling --downstream-port 8079 --proxy-port 8080 --replicas 2", "the replicas' ports 8079..8080 include the proxy's 8080")]
    [InlineData("ramp --proxies direct", "--proxies: direct runs in the ab and sweep comparisons only")]
    [InlineData("ab --proxies nginx,,haproxy", "--proxies: unknown proxy '' (llrp-llhttp, yarp, nginx, nginx-default, haproxy, direct)")]
    [InlineData("ab --policies Fastest", "--policies: unknown policy 'Fastest' (ConnectionRoundRobin PowerOfTwoChoices FirstAlphabetical Random RoundRobin LeastRequests)")]
    [InlineData("comparisons --proxies yarp,squid,direct", "--proxies: unknown proxy 'squid' (llrp-llhttp, yarp, nginx, nginx-default, haproxy, direct)")]
    [InlineData("scaling --proxies yarp --policies ConnectionRoundRobin", "nothing to run (check --proxies and --policies)")]
    public void BadOptionIsOneClearMessage(string line, string message)
    {
        var e = Assert.Throws<UsageException>(() => ComparisonParser.Parse(line.Split(' ', StringSplitOptions.RemoveEmptyEntries)));
        Assert.Equal(message, e.Message);
    }

    [Fact]
    public void BadOptionIsOneLineAndExitTwo()
    {
        var (code, output) = ConsoleCapture.Comparisons(Checkout.Root(), null, Runner.Comparisons.AgentPort, "ab", "--rounds", "0");
        Assert.Equal(2, code);
        Assert.Equal("comparisons: --rounds needs a whole number >= 1, got '0' (see --help)\n", output);
    }

    [Fact]
    public void DefaultsAreTheDocumentedOnes()
    {
        var o = ComparisonParser.Parse(["comparisons"]);
        Assert.Equal(ComparisonOptions.Every, o.Comparisons);
        Assert.Equal((1, 20, 15, 10), (o.Rounds, o.Warmup, o.DurationOf("ab"), o.DurationOf("ramp")));
        Assert.Equal((200, 200, "/?s=26624"), (o.ScalingConnections, o.AbClients, o.AbPath));
        Assert.Equal((4000, 4000, 8, 100), (o.RampStart, o.RampStep, o.RampSteps, o.RampConnections));
        Assert.Equal((1, 8080, 8081), (o.ProxyThreads, o.ProxyPort, o.DownstreamPort));
        Assert.Equal(new[] { 1, 2, 3, 5 }, o.ReplicaCounts);
        Assert.True(o.UseCrank && o.Install && o.Report);
    }

    [Fact]
    public void HelpAnywhere()
    {
        Assert.True(ComparisonParser.Parse(["--help"]).Help);
        Assert.True(ComparisonParser.Parse(["ramp", "--rounds", "2", "-h", "--bogus"]).Help);
        Assert.True(ComparisonParser.Parse(["ramp", "--bogus", "-h"]).Help);
    }

    [Theory]
    [InlineData("--rounds", "2")]
    [InlineData("--warmup", "0")]
    [InlineData("--duration", "2")]
    [InlineData("--proxies", "nginx")]
    [InlineData("--policies", "Random")]
    [InlineData("--replicas", "2")]
    [InlineData("--connections", "2")]
    [InlineData("--scaling-connections", "2")]
    [InlineData("--ab-clients", "2")]
    [InlineData("--ab-path", "/x")]
    [InlineData("--ramp-start", "2")]
    [InlineData("--ramp-step", "2")]
    [InlineData("--ramp-steps", "2")]
    [InlineData("--ramp-connections", "2")]
    [InlineData("--proxy-threads", "2")]
    [InlineData("--proxy-port", "9000")]
    [InlineData("--downstream-port", "9001")]
    [InlineData("--json-dir", "out")]
    [InlineData("--fallback", null)]
    [InlineData("--no-install", null)]
    [InlineData("--no-report", null)]
    public void EveryOptionIsTaken(string option, string? value)
    {
        var o = ComparisonParser.Parse(value is null ? ["ab", option] : ["ab", option, value]);
        Assert.False(o.Help);
    }
}

public sealed class ComparisonPlanTests
{
    private static List<string> Tags(params string[] args) => [.. ComparisonParser.Parse(args).Runs().Select(r => r.Tag(1))];

    [Fact]
    public void EachComparisonRunsItsPublishedSet()
    {
        var all = ComparisonParser.Parse(["comparisons"]).Runs();
        // scaling: (6 LLRP + 5 YARP policies + nginx + HAProxy) x 4 replica counts; sweep: 5 proxies x 4 connection
        // counts; ab: direct and 4 proxies; ramp: 3 proxies (crank/README.md's table).
        Assert.Equal([52, 20, 5, 3], ComparisonOptions.Every.Select(c => all.Count(r => r.Comparison == c)));
        Assert.Equal(ComparisonOptions.Every, all.Select(r => r.Comparison).Distinct());
    }

    [Fact]
    public void ScalingRunsProxyThenPolicyThenReplicas()
    {
        Assert.Equal(
        [
            "scaling.llrp-llhttp.RoundRobin.n1.c200.r1", "scaling.llrp-llhttp.RoundRobin.n3.c200.r1",
            "scaling.yarp.RoundRobin.n1.c200.r1", "scaling.yarp.RoundRobin.n3.c200.r1",
            "scaling.nginx.n1.c200.r1", "scaling.nginx.n3.c200.r1", "scaling.haproxy.n1.c200.r1", "scaling.haproxy.n3.c200.r1",
        ], Tags("scaling", "--replicas", "1,3", "--policies", "roundrobin"));
    }

    [Fact]
    public void YarpRunsOnlyThePoliciesItHas()
    {
        Assert.Equal(["scaling.llrp-llhttp.ConnectionRoundRobin.n2.c200.r1", "scaling.llrp-llhttp.Random.n2.c200.r1", "scaling.yarp.Random.n2.c200.r1"],
            Tags("scaling", "--proxies", "llrp-llhttp,yarp", "--replicas", "2", "--policies", "ConnectionRoundRobin,Random"));
    }

    [Fact]
    public void SweepAbAndRamp()
    {
        Assert.Equal(["sweep.nginx.n1.c50.r1", "sweep.nginx.n1.c10.r1", "sweep.direct.n1.c50.r1", "sweep.direct.n1.c10.r1"],
            Tags("sweep", "--proxies", "nginx,direct", "--connections", "50,10"));
        Assert.Equal(["ab.direct.n1.c200.r1", "ab.llrp-llhttp.n1.c200.r1", "ab.yarp.n1.c200.r1", "ab.nginx.n1.c200.r1", "ab.haproxy.n1.c200.r1"], Tags("ab"));
        Assert.Equal(["ramp.llrp-llhttp.n1.c40.r1", "ramp.nginx.n1.c40.r1", "ramp.haproxy.n1.c40.r1"], Tags("ramp", "--ramp-connections", "40"));
    }

    [Fact]
    public void ATrailingCommaEndsTheListAsInBash()
    {
        Assert.Equal(["nginx"], ComparisonParser.Fields("nginx,"));
        Assert.Equal(["", "nginx"], ComparisonParser.Fields(",nginx"));
        Assert.Equal([""], ComparisonParser.Fields(","));
        Assert.Empty(ComparisonParser.Fields(""));
    }

    [Theory]
    // The minutes of the "expected run time" line for these command lines.
    [InlineData("ab --warmup 2 --duration 3 --proxies llrp-llhttp,nginx", 1)]
    [InlineData("comparisons", 61)]
    [InlineData("scaling --replicas 1,3 --policies RoundRobin,leastrequests --rounds 2 --scaling-connections 100 --proxy-threads 2", 18)]
    [InlineData("ramp --ramp-start 1000 --ramp-step 500 --ramp-steps 3 --ramp-connections 20 --duration 4", 2)]
    public void EstimateOfTheRunTime(string line, long minutes)
    {
        var o = ComparisonParser.Parse(line.Split(' '));
        Assert.Equal(minutes, o.ExpectedMinutes(o.Runs()));
    }
}
