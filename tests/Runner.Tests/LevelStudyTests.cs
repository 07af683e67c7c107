using System.Globalization;
using System.Text.Json.Nodes;

namespace LLRP.Runner.Tests;

/// <summary>`crank/run-local.sh stepped` and `fixed-rate` end to end with a stand-in run-local (it prints its command
/// line, copies Stepped/fixtures/&lt;name&gt;/s&lt;rate&gt;/&lt;scenario&gt;.r*.json into its --json-dir and exits with that
/// step's `rc` file): the run-local calls each study makes, the proxies a step fails and why, the plan JSON it writes,
/// its exit status; and its refusals.</summary>
[Collection("Console")]
public sealed class LevelStudyRunTests
{
    private static string Fixtures(string study) => Path.Combine(AppContext.BaseDirectory, study, "fixtures");

    private static (int Code, string[] Lines, JsonNode? Plan) Run(string study, string? fixture, params string[] args)
    {
        var temp = Directory.CreateTempSubdirectory("level-").FullName;
        var hooks = new LevelHooks(a => StandIn.RunLocal(a, fixture is null ? null : Path.Combine(Fixtures(study), fixture)),
            (_, _) => throw new InvalidOperationException("--no-report"));
        args = [.. args.Select(a => a.Replace("@OUT@", temp, StringComparison.Ordinal).Replace("@FIX@", Fixtures(study), StringComparison.Ordinal))];
        var (code, output) = LevelCapture.Run(() => study == "Stepped" ? SteppedStudy.Run(args, temp, hooks) : FixedRateStudy.Run(args, temp, hooks));
        var file = Path.Combine(temp, study == "Stepped" ? "stepped.json" : "fixedrate.json");
        var plan = File.Exists(file) ? JsonNode.Parse(File.ReadAllText(file).Replace(temp, "@OUT@", StringComparison.Ordinal)) : null;
        Directory.Delete(temp, recursive: true);
        return (code, output.Replace(temp, "@OUT@", StringComparison.Ordinal).TrimEnd('\n').Split('\n'), plan);
    }

    /// <summary>Each step offers the next rate to the proxies still standing; a proxy leaves at the step it fails.</summary>
    [Fact]
    public void SteppedOffersEachStepToTheProxiesStillStanding()
    {
        var (code, lines, plan) = Run("Stepped", "knee", "--start", "1000", "--step", "1000", "--steps", "5", "--no-report", "--out", "@OUT@",
            "--rounds", "2", "--warmup", "2", "--duration", "3");
        Assert.Equal(0, code);
        var calls = Calls(lines);
        Assert.Equal(3, calls.Count);
        Assert.Equal("--no-report --rounds 1 --warmup 10 --duration 10 --steady-retries 0 --rounds 2 --warmup 2 --duration 3 --load h2load --server-scheme https " +
            "--rate 1000 --variable maxErrors=1000000000 --app-env HAPROXY_FORWARDFOR=1 --json-dir @OUT@/s1000 nginx haproxy llrp-llhttp yarp", calls[0]);
        Assert.Contains(" --rate 2000 ", calls[1], StringComparison.Ordinal);
        Assert.EndsWith("/s2000 nginx haproxy llrp-llhttp yarp", calls[1], StringComparison.Ordinal);
        Assert.EndsWith("/s3000 nginx llrp-llhttp", calls[2], StringComparison.Ordinal);
        Assert.Contains("stepped: yarp failed at 2000 requests/s: achieved 1500/s of 2000/s offered", lines);
        Assert.Equal(("{'haproxy':{'rate':2000,'reason':'availability 99.123 %'},'yarp':{'rate':2000,'reason':'achieved 1500/s of 2000/s offered'}," +
            "'nginx':{'rate':3000,'reason':'no result'},'llrp-llhttp':{'rate':3000,'reason':'no run succeeded'}}").Replace('\'', '"'), plan!["failedAt"]!.ToJsonString());
        Assert.Equal("[1000,2000,3000]", plan["rates"]!.ToJsonString());
        Assert.StartsWith("crank/run-local.sh stepped --start 1000 ", plan["command"]!.GetValue<string>(), StringComparison.Ordinal);
    }

    /// <summary>The thresholds come from the options; a proxy failing the first step is not offered the second.</summary>
    [Fact]
    public void SteppedJudgesByTheGivenThresholds()
    {
        var (code, lines, plan) = Run("Stepped", "odd", "--start", "500", "--step", "250", "--steps", "3", "--fail-achieved", "50.5",
            "--fail-availability", "99.5", "--no-report", "--out", "@OUT@", "nginx", "llrp-llhttp", "yarp", "haproxy");
        Assert.Equal(0, code);
        Assert.Equal(2, Calls(lines).Count);
        Assert.EndsWith("--json-dir @OUT@/s750 haproxy", Calls(lines)[1], StringComparison.Ordinal);
        Assert.Contains("stepped: llrp-llhttp failed at 500 requests/s: achieved 250/s of 500/s offered", lines);
        Assert.Contains("stepped: haproxy failed at 750 requests/s: availability 0 %", lines);
        Assert.Equal(50.5, plan!["failAchievedPercent"]!.GetValue<double>());
    }

    /// <summary>A run-local that fails fails the study, which still runs every step; the passed options reach run-local.</summary>
    [Fact]
    public void SteppedPassesOptionsOnAndAFailedRunLocalFailsTheStudy()
    {
        var (code, lines, _) = Run("Stepped", "steady", "--start", "1000", "--step", "1000", "--steps", "2", "--no-report", "--out", "@OUT@",
            "--pin-proxy", "--connections", "4", "--protocols", "h2", "nginx", "llrp-llhttp");
        Assert.Equal(1, code);
        Assert.All(Calls(lines), c => Assert.Contains(" --steady-retries 0 --pin-proxy --connections 4 --protocols h2 --load h2load ", c, StringComparison.Ordinal));
        Assert.Equal("stepped: still standing after the last step: nginx llrp-llhttp", lines[^1]);
    }

    /// <summary>One run-local call per share, lowest first, at that share of the maximum; fixedrate.json holds the plan.</summary>
    [Fact]
    public void FixedRateRunsEachShareOfTheMaximum()
    {
        var (code, lines, plan) = Run("FixedRate", null, "--max-rps", "2000", "--percents", "50,25", "--rounds", "1", "--no-report", "--out", "@OUT@",
            "direct", "llrp-llhttp");
        Assert.Equal(0, code);
        Assert.Equal(["--no-report --rounds 1 --load fixedrate --rate 500 --json-dir @OUT@/p25 direct llrp-llhttp",
            "--no-report --rounds 1 --load fixedrate --rate 1000 --json-dir @OUT@/p50 direct llrp-llhttp"], Calls(lines));
        Assert.Equal(("{'maxRps':2000,'maxSource':'given (--max-rps)','percents':[25,50],'rates':[500,1000],'scenarios':['direct','llrp-llhttp']," +
            "'command':'crank/run-local.sh fixed-rate --max-rps 2000 --percents 50,25 --rounds 1 --no-report --out @OUT@ direct llrp-llhttp'}").Replace('\'', '"'),
            plan!.ToJsonString());
    }

    [Fact]
    public void FixedRateSkipsAShareBelowOneRequestAndFails()
    {
        var (code, lines, _) = Run("FixedRate", null, "--max-rps", "3", "--percents", "10,50", "--no-report", "--out", "@OUT@", "direct");
        Assert.Equal(1, code);
        Assert.Contains("fixedrate: 10 % of 3 is below 1 request/s; skipped", lines);
        Assert.Equal(["--no-report --load fixedrate --rate 1 --json-dir @OUT@/p50 direct"], Calls(lines));
    }

    [Fact]
    public void FixedRateTakesItsMaximumFromThePeersRuns()
    {
        var (code, lines, plan) = Run("FixedRate", null, "--max-from", "@FIX@/max1", "--no-report", "--out", "@OUT@", "--percents", "50", "nginx");
        Assert.Equal(0, code);
        Assert.Equal(["--no-report --load fixedrate --rate 5625 --json-dir @OUT@/p50 nginx"], Calls(lines));
        Assert.Equal(11250, plan!["maxRps"]!.GetValue<long>());
        var (empty, why, none) = Run("FixedRate", null, "--max-from", "@FIX@/empty", "--no-report", "--out", "@OUT@");
        Assert.Equal((1, null), (empty, none));
        Assert.Equal([$"fixedrate: no successful nginx or haproxy run with http/rps/mean under {Fixtures("FixedRate")}/empty"], why);
    }

    [Theory]
    [InlineData("Stepped", "--help", "--steps <N> +at most N steps \\(at most 60\\) \\[default: 30\\]")]
    [InlineData("FixedRate", "-h", "--percents <LIST> +comma-separated shares in percent, run from the lowest up \\[default: 25,50,75,90\\]")]
    public void HelpListsTheStudysOptionsAndRunLocals(string study, string flag, string line)
    {
        var (code, lines, _) = Run(study, null, flag);
        Assert.Equal(0, code);
        Assert.Contains(lines, l => System.Text.RegularExpressions.Regex.IsMatch(l, line));
        // run-local's options pass on; those the study sets are not offered.
        Assert.Contains(lines, l => l.StartsWith("  --connections <C>", StringComparison.Ordinal));
        Assert.DoesNotContain(lines, l => l.StartsWith("  --json-dir", StringComparison.Ordinal));
    }

    /// <summary>Bad usage is one line naming the study and the problem, exit status 2, and nothing run.</summary>
    [Theory]
    [InlineData("Stepped", "--start 0", "stepped: --start needs a whole number >= 1, got '0' (see --help)")]
    [InlineData("Stepped", "--start x", "stepped: --start needs a whole number >= 1, got 'x' (see --help)")]
    [InlineData("Stepped", "--start", "stepped: Required argument missing for option: '--start'. (see --help)")]
    [InlineData("Stepped", "--step -5", "stepped: --step needs a whole number >= 1, got '-5' (see --help)")]
    [InlineData("Stepped", "--steps 61", "stepped: --steps: at most 60 (see --help)")]
    [InlineData("Stepped", "--steps 0", "stepped: --steps needs a whole number >= 1, got '0' (see --help)")]
    [InlineData("Stepped", "--fail-achieved 0", "stepped: --fail-achieved needs a percentage above 0, at most 100 (see --help)")]
    [InlineData("Stepped", "--fail-achieved 100.5", "stepped: --fail-achieved needs a percentage above 0, at most 100 (see --help)")]
    [InlineData("Stepped", "--fail-achieved 1e2", "stepped: --fail-achieved needs a percentage above 0, at most 100 (see --help)")]
    [InlineData("Stepped", "--fail-availability abc", "stepped: --fail-availability needs a percentage above 0, at most 100 (see --help)")]
    [InlineData("Stepped", "--fail-availability", "stepped: Required argument missing for option: '--fail-availability'. (see --help)")]
    [InlineData("Stepped", "--out", "stepped: Required argument missing for option: '--out'. (see --help)")]
    [InlineData("Stepped", "--load h2load", "stepped: --load is set by this script (or has no meaning per step) (see --help)")]
    [InlineData("Stepped", "--rate 5", "stepped: --rate is set by this script (or has no meaning per step) (see --help)")]
    [InlineData("Stepped", "--json-dir x", "stepped: --json-dir is set by this script (or has no meaning per step) (see --help)")]
    [InlineData("Stepped", "--server-scheme http", "stepped: --server-scheme is set by this script (or has no meaning per step) (see --help)")]
    [InlineData("Stepped", "--dry-run", "stepped: --dry-run is set by this script (or has no meaning per step) (see --help)")]
    [InlineData("Stepped", "--rounds", "stepped: Required argument missing for option: '--rounds'. (see --help)")]
    [InlineData("Stepped", "nginx bogus", "stepped: unknown scenario 'bogus' (direct nginx haproxy llrp-llhttp llrp-httpclient llrp-httpclientwithcontext llrp-yarp httpclientproxy yarp llrp-kestrel-h1) (see --help)")]
    [InlineData("Stepped", "--connections x", "stepped: --connections needs a whole number >= 1, got 'x' (see --help)")]
    [InlineData("Stepped", "--bogus 1", "stepped: unknown option --bogus (see --help)")]
    [InlineData("FixedRate", "--max-rps 5 --headers fancy", "fixedrate: --headers must be plaintext, browser, handshake or none, not 'fancy' (see --help)")]
    [InlineData("Stepped", "nginx direct", "stepped: direct has no place here: the origin speaks HTTP/1.1 (see --help)")]
    [InlineData("FixedRate", "--max-rps 100 --percents 0,50 --no-report --out @OUT@", "fixedrate: a share must be 1 to 200 %, not 0 (see --help)")]
    [InlineData("FixedRate", "--max-rps 100 --percents 201 --no-report --out @OUT@", "fixedrate: a share must be 1 to 200 %, not 201 (see --help)")]
    [InlineData("FixedRate", "", "fixedrate: give the maximum: --max-rps N or --max-from DIR (see --help)")]
    [InlineData("FixedRate", "--max-rps 0", "fixedrate: --max-rps needs a whole number >= 1, got '0' (see --help)")]
    [InlineData("FixedRate", "--max-rps x", "fixedrate: --max-rps needs a whole number >= 1, got 'x' (see --help)")]
    [InlineData("FixedRate", "--max-rps", "fixedrate: Required argument missing for option: '--max-rps'. (see --help)")]
    [InlineData("FixedRate", "--max-from /nonexistent/folder", "fixedrate: --max-from needs a results folder (see --help)")]
    [InlineData("FixedRate", "--max-from", "fixedrate: Required argument missing for option: '--max-from'. (see --help)")]
    [InlineData("FixedRate", "--max-from @FIX@/max2/nginx.r1.json", "fixedrate: --max-from needs a results folder (see --help)")]
    [InlineData("FixedRate", "--max-rps 5 --percents 1,,2", "fixedrate: --percents needs a comma-separated list of whole numbers (see --help)")]
    [InlineData("FixedRate", "--max-rps 5 --percents", "fixedrate: Required argument missing for option: '--percents'. (see --help)")]
    [InlineData("FixedRate", "--max-rps 5 --percents 50%", "fixedrate: --percents needs a comma-separated list of whole numbers (see --help)")]
    [InlineData("FixedRate", "--max-rps 5 --out", "fixedrate: Required argument missing for option: '--out'. (see --help)")]
    [InlineData("FixedRate", "--max-rps 5 --load wrk", "fixedrate: --load is set by this script (see --help)")]
    [InlineData("FixedRate", "--max-rps 5 --rate 10", "fixedrate: --rate is set by this script (see --help)")]
    [InlineData("FixedRate", "--max-rps 5 --json-dir d", "fixedrate: --json-dir is set by this script (see --help)")]
    [InlineData("FixedRate", "--max-rps 5 --max-from @FIX@/max1", "fixedrate: --max-rps and --max-from exclude each other (see --help)")]
    [InlineData("FixedRate", "--percents 50 direct", "fixedrate: give the maximum: --max-rps N or --max-from DIR (see --help)")]
    public void ARefusedOptionIsOneLineAndExit2(string study, string args, string message)
    {
        var (code, lines, plan) = Run(study, null, args.Split(' ', StringSplitOptions.RemoveEmptyEntries));
        Assert.Equal(2, code);
        Assert.Equal([message.Replace("@FIX@", Fixtures(study), StringComparison.Ordinal)], lines);
        Assert.Null(plan);
    }

    /// <summary>The run-local command lines the stand-in printed, without its name.</summary>
    private static List<string> Calls(string[] lines) =>
        [.. lines.Where(l => l.StartsWith("run-local.sh ", StringComparison.Ordinal)).Select(l => l["run-local.sh ".Length..])];
}

/// <summary>The share and step arithmetic, --max-from's maximum, the step verdict, the report's outcome.</summary>
[Collection("Console")]
public sealed class LevelStudyTests
{
    private static string Fixtures(string study) => Path.Combine(AppContext.BaseDirectory, study, "fixtures");

    [Fact]
    public void SharesRunLowestFirstOnceEachRoundedDown()
    {
        var (shares, rates) = FixedRateStudy.Shares("90,25,50,25,200", 1001);
        Assert.Equal(new[] { 25, 50, 90, 200 }, shares);
        Assert.Equal(new long[] { 250, 500, 900, 2002 }, rates);
        Assert.Equal(new long[] { 0, 1 }, FixedRateStudy.Shares("10,50", 3).Rates);
    }

    [Theory]
    [InlineData("0,50", "a share must be 1 to 200 %, not 0")]
    [InlineData("50,201", "a share must be 1 to 200 %, not 201")]
    [InlineData("99999999999999999999999", "a share must be 1 to 200 %, not 99999999999999999999999")]
    public void ShareOutOfRange(string percents, string message) =>
        Assert.Equal(message, Assert.Throws<UsageException>(() => FixedRateStudy.Shares(percents, 1000)).Message);

    [Fact]
    public void DefaultSharesAreDpbenchs()
    {
        var o = FixedRateStudy.Parse(["--max-rps", "45000"]);
        Assert.Equal(new long[] { 11250, 22500, 33750, 40500 }, FixedRateStudy.Shares(o.Percents, o.MaxRps!.Value).Rates);
        Assert.Equal(new[] { "direct", "llrp-llhttp", "nginx", "haproxy", "yarp" }, o.Scenarios);
    }

    [Fact]
    public void StepsRiseByTheStep()
    {
        var o = SteppedStudy.Parse(["--start", "1500", "--step", "500"]);
        Assert.Equal(new long[] { 1500, 2000, 2500 }, Enumerable.Range(0, 3).Select(i => SteppedStudy.Rate(o, i)));
        var d = SteppedStudy.Parse([]);
        Assert.Equal((2000L, 2000L, 30L, "95", "100"), (d.Start, d.Step, d.Steps, d.FailAchieved, d.FailAvailability));
        Assert.Equal(60000, SteppedStudy.Rate(d, (int)d.Steps - 1));
        Assert.Equal(new[] { "nginx", "haproxy", "llrp-llhttp", "yarp" }, d.Scenarios);
    }

    [Fact]
    public void StepsPassRunLocalOptionsOnWithTheirValues()
    {
        var o = SteppedStudy.Parse(["--pin-proxy", "--streams", "32", "--app-env", "a=1", "--no-install", "--response-size", "1024", "--app-env", "b=2", "nginx"]);
        Assert.Equal(new[] { "--pin-proxy", "--streams", "32", "--app-env", "a=1", "--app-env", "b=2", "--no-install", "--response-size", "1024" }, o.Pass);
        Assert.Equal(new[] { "nginx" }, o.Scenarios);
    }

    /// <summary>The higher of nginx's and HAProxy's median http/rps/mean among successful closed-loop runs.</summary>
    [Fact]
    public void MaxFromTakesTheBestPeersMedian()
    {
        var f = Fixtures("FixedRate");
        // haproxy 11000, 11500 -> 11250 beats nginx 10000.7, 12000 -> 11000.35 (its failed 50000 and the fixed-rate run
        // in p50/ left out, yarp's 90000 not a peer, a run without http/rps/mean left out).
        Assert.Equal((11250L, $"the median of 2 haproxy run(s) in {f}/max1"), FixedRateStudy.MaxFrom($"{f}/max1"));
        // An odd count's middle run; a run's own scenario property names its group (haproxy-tls: 1, 2000, 9000 -> 2000).
        Assert.Equal((3001L, $"the median of 3 nginx run(s) in {f}/max2"), FixedRateStudy.MaxFrom($"{f}/max2"));
        Assert.Null(FixedRateStudy.MaxFrom($"{f}/empty"));
    }

    [Fact]
    public void MaxFromOfADamagedFolder()
    {
        using var temp = new TempFolder();
        File.WriteAllText(Path.Combine(temp.Path, "nginx.r1.json"), "{ not json");
        File.WriteAllText(Path.Combine(temp.Path, "nginx.r2.json"), """{"returnCode":0,"jobResults":{"jobs":{"load":{"results":{"http/rps/mean":0.5}}}}}""");
        Assert.Null(FixedRateStudy.MaxFrom(temp.Path));
        File.WriteAllText(Path.Combine(temp.Path, "haproxy.r1.json"), """{"returnCode":0,"jobResults":{"jobs":{"load":{"results":{"http/rps/mean":7.9}}}}}""");
        Assert.Equal(7L, FixedRateStudy.MaxFrom(temp.Path)?.Max);
    }

    private static void Result(string dir, string file, int returnCode, double? rps2xx, double? availability)
    {
        var results = new JsonObject();
        if (rps2xx is { } a)
        {
            results["h2load/rps/2xx"] = a;
        }
        if (availability is { } v)
        {
            results["h2load/availability"] = v;
        }
        Directory.CreateDirectory(dir);
        File.WriteAllText(Path.Combine(dir, file), new JsonObject
        {
            ["returnCode"] = returnCode,
            ["jobResults"] = new JsonObject { ["jobs"] = new JsonObject { ["load"] = new JsonObject { ["results"] = results } } },
        }.ToJsonString());
    }

    [Fact]
    public void VerdictFromTheMedianOfTheSuccessfulRuns()
    {
        using var temp = new TempFolder();
        var d = temp.Path;
        // 1800 and 2000: the median 1900 is exactly 95 % of 2000, not below it.
        Result(d, "nginx.r1.json", 0, 1800, 100);
        Result(d, "nginx.r2.json", 0, 2000, 100);
        Result(d, "nginx.r3.json", 1, 0, 0);
        Assert.Equal("ok", SteppedStudy.Verdict(d, "nginx", 2000, 95, 100));
        Assert.Equal("achieved 1900/s of 2000/s offered", SteppedStudy.Verdict(d, "nginx", 2000, 95.5, 100));
        // Availability: the median, three decimals rounded down; the achieved rate is judged first.
        Result(d, "haproxy.r1.json", 0, 1999.9, 99.12345);
        Assert.Equal("availability 99.123 %", SteppedStudy.Verdict(d, "haproxy", 2000, 95, 100));
        Assert.Equal("ok", SteppedStudy.Verdict(d, "haproxy", 2000, 95, 99.1));
        Assert.Equal("achieved 1999/s of 2000/s offered", SteppedStudy.Verdict(d, "haproxy", 2000, 100, 100));
        // A figure a run lacks counts as 0.
        Result(d, "yarp.r1.json", 0, null, null);
        Assert.Equal("achieved 0/s of 2000/s offered", SteppedStudy.Verdict(d, "yarp", 2000, 95, 100));
        Result(d, "llrp-llhttp.r1.json", 0, 2000, null);
        Assert.Equal("availability 0 %", SteppedStudy.Verdict(d, "llrp-llhttp", 2000, 95, 100));
        // No successful run; no run at all (nginx-default's files are not nginx's); a damaged file is no success.
        Result(d, "httpclientproxy.r1.json", 2, 2000, 100);
        File.WriteAllText(Path.Combine(d, "httpclientproxy.r2.json"), "{");
        Assert.Equal("no run succeeded", SteppedStudy.Verdict(d, "httpclientproxy", 2000, 95, 100));
        Result(d, "nginx-default.r1.json", 0, 2000, 100);
        Assert.Equal("no result", SteppedStudy.Verdict(d, "llrp-yarp", 2000, 95, 100));
        Assert.Equal("no result", SteppedStudy.Verdict(Path.Combine(d, "missing"), "nginx", 2000, 95, 100));
    }

    [Fact]
    public void AFailedReportFailsTheStudyWithItsLogsLastLines()
    {
        using var temp = new TempFolder();
        var hooks = new LevelHooks(_ => 0, (flag, dir) =>
        {
            File.WriteAllText(Path.Combine(dir, "report.log"), string.Concat(Enumerable.Range(1, 20).Select(i => $"line {i}\n")) + flag + "\n");
            return 1;
        });
        var (code, output) = LevelCapture.Run(() => FixedRateStudy.Run(["--max-rps", "100", "--percents", "50", "--out", temp.Path, "nginx"], temp.Path, hooks));
        Assert.Equal(1, code);
        Assert.EndsWith($"fixedrate: the report failed; last lines of {temp.Path}/report.log:\n"
            + string.Concat(Enumerable.Range(7, 14).Select(i => $"line {i}\n")) + "--fixed-rate\n", output, StringComparison.Ordinal);

        var ok = new LevelHooks(_ => 0, (_, _) => 0);
        (code, output) = LevelCapture.Run(() => SteppedStudy.Run(["--steps", "1", "--out", temp.Path, "nginx"], temp.Path, ok));
        Assert.Equal(0, code);
        Assert.EndsWith($"stepped: nginx failed at 2000 requests/s: no result\nstepped: report {temp.Path}/stepped.md\n", output, StringComparison.Ordinal);
    }

    [Fact]
    public void TheDefaultResultsFolderIsUnderArtifacts()
    {
        using var temp = new TempFolder();
        var (code, output) = LevelCapture.Run(() => SteppedStudy.Run(["--steps", "1", "--no-report", "yarp"], temp.Path, new LevelHooks(_ => 1, (_, _) => 0)));
        Assert.Equal(1, code);
        var made = Assert.Single(Directory.GetDirectories(Path.Combine(temp.Path, "artifacts", "crank")));
        Assert.Matches(@"/stepped-\d{8}-\d{6}$", made);
        Assert.Contains($"results in {made}\n", output, StringComparison.Ordinal);
        Assert.True(File.Exists(Path.Combine(made, "stepped.json")));
    }
}

/// <summary>The stand-in run-local of the recordings: prints its command line, copies the fixture's results for the
/// step's rate into --json-dir, exits with the step's rc.</summary>
internal static class StandIn
{
    public static int RunLocal(IReadOnlyList<string> args, string? fixture)
    {
        Console.Out.WriteLine("run-local.sh" + ShellWord.Spaced(args));
        if (fixture is null)
        {
            return 0;
        }
        string? After(string option) => args.Select((a, i) => (a, i)).Where(p => p.a == option && p.i + 1 < args.Count).Select(p => args[p.i + 1]).LastOrDefault();
        var (dir, rate) = (After("--json-dir")!, After("--rate"));
        Directory.CreateDirectory(dir);
        var step = Path.Combine(fixture, $"s{rate}");
        foreach (var word in args.Distinct().Where(a => !a.Contains('/', StringComparison.Ordinal)))
        {
            foreach (var f in Directory.Exists(step) ? Directory.GetFiles(step, word + ".r*.json") : [])
            {
                File.Copy(f, Path.Combine(dir, Path.GetFileName(f)), overwrite: true);
            }
        }
        var rc = Path.Combine(step, "rc");
        return File.Exists(rc) ? int.Parse(File.ReadAllText(rc).Trim(), CultureInfo.InvariantCulture) : 0;
    }
}

internal static class LevelCapture
{
    /// <summary>The body's exit status and its stdout + stderr, in order.</summary>
    public static (int Code, string Output) Run(Func<int> body)
    {
        var (stdout, stderr) = (Console.Out, Console.Error);
        var both = new StringWriter();
        Console.SetOut(both);
        Console.SetError(both);
        try
        {
            var code = body();
            return (code, both.ToString());
        }
        finally
        {
            Console.SetOut(stdout);
            Console.SetError(stderr);
        }
    }
}

internal sealed class TempFolder : IDisposable
{
    public string Path { get; } = Directory.CreateTempSubdirectory("llrp-levels-").FullName;

    public void Dispose() => Directory.Delete(Path, recursive: true);
}
