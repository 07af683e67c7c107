using System.Globalization;
using System.Text.Json.Nodes;

namespace LLRP.Runner.Tests;

/// <summary>`crank/run-local.sh stepped` and `fixed-rate` print, write and exit as crank/stepped.sh and
/// crank/fixedrate.sh did for the same command line. Stepped/caseN and FixedRate/caseN were recorded from the bash
/// scripts with a stand-in run-local.sh that printed `run-local.sh` and its arguments (printf %q), copied
/// fixtures/&lt;caseN.fixture&gt;/s&lt;rate&gt;/&lt;scenario&gt;.r*.json into its --json-dir and exited with that step's
/// `rc` file (0 without one): caseN.out is stdout + stderr, caseN.rc the exit status, caseN.json the stepped.json or
/// fixedrate.json written, caseN.files what the results folder held. @OUT@ stands for the results folder, @FIX@ for the
/// fixtures folder. Since the move the help's usage lines and the JSON's command name crank/run-local.sh stepped |
/// fixed-rate, the scripts' only entry point now.</summary>
[Collection("Console")]
public sealed class LevelStudyGoldenTests
{
    public static TheoryData<string, string> Cases()
    {
        var data = new TheoryData<string, string>();
        foreach (var study in new[] { "Stepped", "FixedRate" })
        {
            foreach (var f in Directory.GetFiles(Path.Combine(AppContext.BaseDirectory, study), "case*.args").Order())
            {
                data.Add(study, Path.GetFileNameWithoutExtension(f));
            }
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public void SameOutputAsTheBashScript(string study, string name)
    {
        var dir = Path.Combine(AppContext.BaseDirectory, study);
        var fixtures = Path.Combine(dir, "fixtures");
        var fixture = File.Exists(Path.Combine(dir, name + ".fixture"))
            ? Path.Combine(fixtures, File.ReadAllText(Path.Combine(dir, name + ".fixture")).Trim()) : null;
        using var temp = new TempFolder();
        var args = File.ReadAllText(Path.Combine(dir, name + ".args")).Trim().Replace("@OUT@", temp.Path, StringComparison.Ordinal)
            .Replace("@FIX@", fixtures, StringComparison.Ordinal).Split(' ', StringSplitOptions.RemoveEmptyEntries);
        var hooks = new LevelHooks(a => StandIn.RunLocal(a, fixture), (_, _) => throw new InvalidOperationException("no recorded case runs the report"));

        var (code, output) = LevelCapture.Run(() => study == "Stepped"
            ? SteppedStudy.Run(args, temp.Path, hooks) : FixedRateStudy.Run(args, temp.Path, hooks));

        string Normal(string s) => s.Replace(temp.Path, "@OUT@", StringComparison.Ordinal).Replace(fixtures, "@FIX@", StringComparison.Ordinal);
        Assert.Equal(File.ReadAllText(Path.Combine(dir, name + ".out")), Normal(output));
        Assert.Equal(int.Parse(File.ReadAllText(Path.Combine(dir, name + ".rc")).Trim(), CultureInfo.InvariantCulture), code);
        var json = Path.Combine(dir, name + ".json");
        var written = Path.Combine(temp.Path, study == "Stepped" ? "stepped.json" : "fixedrate.json");
        if (File.Exists(json))
        {
            var expected = File.ReadAllText(json).Replace("\"crank/stepped.sh", "\"crank/run-local.sh stepped", StringComparison.Ordinal)
                .Replace("\"crank/fixedrate.sh", "\"crank/run-local.sh fixed-rate", StringComparison.Ordinal);
            Assert.Equal(expected, Normal(File.ReadAllText(written)));
        }
        else
        {
            Assert.False(File.Exists(written));
        }
        var files = Directory.EnumerateFileSystemEntries(temp.Path, "*", SearchOption.AllDirectories)
            .Select(f => "./" + Path.GetRelativePath(temp.Path, f)).Order(StringComparer.Ordinal);
        Assert.Equal(File.ReadAllText(Path.Combine(dir, name + ".files")), string.Concat(files.Select(f => f + "\n")));
    }

    /// <summary>Bad usage is one line on stderr and exit status 2, for every recorded bad command line.</summary>
    [Fact]
    public void EveryUsageErrorIsOneLine()
    {
        var usage = 0;
        foreach (var study in new[] { "Stepped", "FixedRate" })
        {
            foreach (var rc in Directory.GetFiles(Path.Combine(AppContext.BaseDirectory, study), "case*.rc"))
            {
                if (File.ReadAllText(rc).Trim() == "2")
                {
                    var lines = File.ReadAllText(Path.ChangeExtension(rc, ".out")).TrimEnd('\n').Split('\n');
                    Assert.Single(lines);
                    Assert.EndsWith(" (see --help)", lines[0], StringComparison.Ordinal);
                    usage++;
                }
            }
        }
        Assert.True(usage >= 35, $"{usage} recorded usage errors");
    }
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
        var o = SteppedStudy.Parse(["--pin-proxy", "--streams", "32", "--no-install", "--response-size", "1024", "nginx"]);
        Assert.Equal(new[] { "--pin-proxy", "--streams", "32", "--no-install", "--response-size", "1024" }, o.Pass);
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

    [Theory]
    [InlineData(1500, "1500")]
    [InlineData(99.123, "99.123")]
    [InlineData(1e17, "1e+17")]
    [InlineData(0.30000000000000004, "0.30000000000000004")]
    public void NumbersAsJqPrintsThem(double d, string text) => Assert.Equal(text, Levels.Number(d));

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
        Console.Out.WriteLine("run-local.sh" + string.Concat(args.Select(a => " " + Shell.Quote(a))));
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
