using System.CommandLine;
using System.Globalization;
using System.Numerics;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;

namespace LLRP.Runner;

/// <summary>`crank/run-local.sh fixed-rate`'s options (FixedRateStudy declares each one and its default).</summary>
internal sealed class FixedRateOptions : LevelOptions
{
    public string Percents = "", MaxFrom = "";
    public long? MaxRps;
}

/// <summary>`crank/run-local.sh fixed-rate`, a study over levels (<see cref="Levels.Drive"/>): the levels are shares of
/// a measured maximum; <see cref="Command"/> says the rest.</summary>
internal static partial class FixedRateStudy
{
    private static readonly string[] All =
        ["direct", "nginx", "haproxy", "llrp-llhttp", "llrp-httpclient", "llrp-httpclientwithcontext", "llrp-yarp", "httpclientproxy", "yarp"];
    private static readonly string[] DefaultScenarios = ["direct", "llrp-llhttp", "nginx", "haproxy", "yarp"];
    // The shares a plan may hold, in percent: above 100 % is an overload on purpose, twice the maximum is plenty.
    private const int MinShare = 1, MaxShare = 200;

    private static readonly LevelStudy Study = new("fixedrate", "--fixed-rate", [], rate => ["--load", "fixedrate", "--rate", rate.ToString(CultureInfo.InvariantCulture)]);

    public static int Run(IReadOnlyList<string> args, string root, LevelHooks? hooks = null) =>
        Levels.Study("fixedrate", Command, () => Parse(args), o => o.Help, o => Execute(o, args, root, hooks ?? LevelHooks.For(root)));

    private static readonly Binder<FixedRateOptions> B = new();
    private static readonly Argument<string[]> ScenarioArgument = Levels.Scenarios(DefaultScenarios);

    internal static readonly Command Command = Cli.Command("fixed-rate", """
        crank/run-local.sh fixed-rate: open-loop latency at shares of a measured maximum, crank/run-local.sh --load
        fixedrate at each share of the best peer's maximum requests/s (the method of dpbench: latency at a share of the
        maximum load, beside direct at the same offered load), then the report (analysis/Report --fixed-rate: fixedrate.md with the table and the charts of latency against
        offered load). Give the maximum: --max-rps N or --max-from DIR. run-local.sh's options go to each of its calls as
        given; the shares run one after another, each in its own run-local.sh call (its rounds interleave the scenarios) and
        results folder, as analysis/sweep.sh keeps its points.
        Exit status: 0 every run succeeded; 1 a run failed; 2 bad usage.
        """,
        [
            ScenarioArgument,
            B.Bind(Cli.OptionalInt("--max-rps", "the maximum the shares are taken of, in requests/s", min: 1), (o, v) => o.MaxRps = v),
            B.Bind(Cli.Text("--max-from", "", "take the maximum from closed-loop runs: a run-local.sh results folder (or a sweep point's round folder) " +
                "with nginx and/or haproxy wrk runs; the higher of their median http/rps/mean there, \"the best peer's measured maximum\" " +
                "(fixed-rate runs there are left out: they answer what they were offered). Measure it at the same connections, sizes, " +
                "headers, proxy threads and pinning as the fixed-rate runs", "DIR", v => Directory.Exists(v) ? null : "--max-from needs a results folder"),
                (o, v) => o.MaxFrom = v),
            // dpbench's shares: from light load to just below saturation, where a proxy's tail shows first.
            B.Bind(Cli.Text("--percents", "25,50,75,90", "comma-separated shares in percent, run from the lowest up", "LIST",
                v => PercentList().IsMatch(v) ? null : "--percents needs a comma-separated list of whole numbers"), (o, v) => o.Percents = v),
            .. Levels.OutAndReport(B, "fixedrate", "p<percent>", "share", ""),
            .. Levels.RunLocalOptions(["--no-report"], "", "--load", "--rate", "--json-dir"),
        ]);

    internal static FixedRateOptions Parse(IReadOnlyList<string> args)
    {
        // A word that is none of these goes to run-local as given (a scenario only run when named, such as caddy).
        var o = Levels.Parse(Command, B, ScenarioArgument, DefaultScenarios, args, (x, a) => (All.Contains(a) ? x.Scenarios : x.Pass).Add(a));
        if (!o.Help && o.MaxRps is null && o.MaxFrom.Length == 0)
        {
            throw new UsageException("give the maximum: --max-rps N or --max-from DIR");
        }
        if (o.MaxRps is not null && o.MaxFrom.Length > 0)
        {
            throw new UsageException("--max-rps and --max-from exclude each other");
        }
        return o;
    }

    /// <summary>The shares, lowest first, each once, and each one's rate (integer requests/s, rounded down).</summary>
    internal static (List<int> Shares, List<long> Rates) Shares(string percents, long max)
    {
        var shares = percents.Split(',').Select(p => (Text: p, Value: BigInteger.Parse(p, CultureInfo.InvariantCulture)))
            .DistinctBy(p => p.Value).OrderBy(p => p.Value).ToList();
        foreach (var (text, value) in shares.Where(p => p.Value < MinShare || p.Value > MaxShare))
        {
            throw new UsageException($"a share must be {MinShare} to {MaxShare} %, not {text}");
        }
        List<int> values = [.. shares.Select(p => (int)p.Value)];
        return (values, [.. values.Select(p => max * p / 100)]);
    }

    /// <summary>--max-from: the best peer's measured maximum, the higher of nginx's and HAProxy's median http/rps/mean
    /// over their successful closed-loop runs anywhere under <paramref name="dir"/> (fixed-rate runs left out: they
    /// answer what they were offered), as (requests/s rounded down, where it comes from); null when there is none.</summary>
    internal static (long Max, string Source)? MaxFrom(string dir)
    {
        var runs = new List<(string Scenario, double Rps)>();
        foreach (var file in Directory.EnumerateFiles(dir, "*.json", SearchOption.AllDirectories))
        {
            var name = Path.GetFileName(file);
            if (!(name.StartsWith("nginx.r", StringComparison.Ordinal) || name.StartsWith("haproxy.r", StringComparison.Ordinal)))
            {
                continue;
            }
            var run = Levels.ReadRun(file);
            var load = run?["jobResults"]?["jobs"]?["load"]?["results"];
            var rps = Levels.Num(load?["http/rps/mean"]);
            if (Levels.Num(run?["returnCode"]) != 0 || rps is null || load?["fixedrate/rate"] is not null)
            {
                continue;
            }
            // The scenario the run says it ran, else the one its file is named after.
            var scenario = run?["jobResults"]?["properties"]?["scenario"]?.ToString() ?? name[..name.IndexOf(".r", StringComparison.Ordinal)];
            runs.Add((scenario, rps.Value));
        }
        // The higher median; on a tie the later scenario in name order, as jq's max_by picks.
        var best = runs.GroupBy(r => r.Scenario).OrderBy(g => g.Key, StringComparer.Ordinal)
            .Select(g => (Scenario: g.Key, N: g.Count(), Median: Stats.Median(g.Select(r => r.Rps))!.Value))
            .Aggregate(((string Scenario, int N, double Median)?)null, (b, g) => b is null || g.Median >= b.Value.Median ? g : b);
        return best is { } b && Math.Floor(b.Median) >= 1
            ? ((long)Math.Floor(b.Median), $"the median of {b.N} {b.Scenario} run(s) in {dir}")
            : null;
    }

    private static int Execute(FixedRateOptions o, IReadOnlyList<string> args, string root, LevelHooks hooks)
    {
        var command = Levels.CommandLine("crank/run-local.sh fixed-rate", args);
        var (max, source) = (o.MaxRps ?? 0, "given (--max-rps)");
        if (o.MaxFrom.Length > 0)
        {
            if (MaxFrom(o.MaxFrom) is not { } found)
            {
                Console.Error.WriteLine($"fixedrate: no successful nginx or haproxy run with http/rps/mean under {o.MaxFrom}");
                return 1;
            }
            (max, source) = found;
        }
        var (shares, rates) = Shares(o.Percents, max);
        var dir = Levels.OutFolder(o.Out, root, Study.Name);
        Levels.WritePlan(Study, dir, new JsonObject
        {
            ["maxRps"] = max,
            ["maxSource"] = source,
            ["percents"] = Levels.Array(shares.Select(p => (long)p)),
            ["rates"] = Levels.Array(rates),
            ["scenarios"] = Levels.Array(o.Scenarios),
            ["command"] = command,
        });
        Console.Out.WriteLine($"fixedrate: maximum {max} requests/s ({source}); shares {string.Join(' ', shares)} % = {string.Join(' ', rates)} requests/s; {string.Join(' ', o.Scenarios)}");
        var levels = shares.Zip(rates, (p, rate) => new Level(rate, $"p{p}", $"{p} % = {rate} requests/s", rate < 1 ? $"{p} % of {max} is below 1 request/s" : null));
        var rc = Levels.Drive(Study, o, hooks, dir, levels, [], []);
        return Levels.Report(Study, o, hooks, dir) != 0 ? 1 : rc;
    }

    [GeneratedRegex("^[0-9]+(,[0-9]+)*$")]
    private static partial Regex PercentList();
}
