using System.CommandLine;
using System.Globalization;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;

namespace LLRP.Runner;

/// <summary>`crank/run-local.sh stepped`'s options (SteppedStudy declares each one and its default).</summary>
internal sealed class SteppedOptions : LevelOptions
{
    public long Start, Step, Steps;
    public string FailAchieved = "", FailAvailability = "";
}

/// <summary>`crank/run-local.sh stepped`, a study over levels (<see cref="Levels.Drive"/>): the levels are offered rates,
/// a proxy that fails one is not offered the next; <see cref="Command"/> says the rest.</summary>
internal static partial class SteppedStudy
{
    private static readonly string[] All =
        ["direct", "nginx", "haproxy", "llrp-llhttp", "llrp-httpclient", "llrp-httpclientwithcontext", "llrp-yarp", "httpclientproxy", "yarp", "llrp-kestrel-h1"];
    private static readonly string[] DefaultScenarios = ["nginx", "haproxy", "llrp-llhttp", "yarp"];
    // The errors a step may have and still be recorded as a run (run-local's maxErrors, 0 by default, would fail it): a
    // billion is beyond any step's request count. This study judges the steps.
    private const long StepMaxErrors = 1_000_000_000;
    private const int MaxSteps = 60;

    public static int Run(IReadOnlyList<string> args, string root, LevelHooks? hooks = null) =>
        Levels.Study("stepped", Command, () => Parse(args), o => o.Help, o => Execute(o, args, root, hooks ?? LevelHooks.For(root)));

    private static readonly Binder<SteppedOptions> B = new();
    private static readonly Argument<string[]> ScenarioArgument = Levels.Scenarios(DefaultScenarios);

    private static Option<string> Percent(string name, string @default, string description) => Cli.Text(name, @default, description, "P",
        v => Decimal().IsMatch(v) && double.Parse(v, CultureInfo.InvariantCulture) is > 0 and <= 100 ? null : $"{name} needs a percentage above 0, at most 100");

    internal static readonly Command Command = Cli.Command("stepped", """
        crank/run-local.sh stepped: the nginx-vs-Pingora style comparison as a scenario: HTTP/2 over TLS to the proxy
        (ALPN h2, the run's self-signed certificate), HTTP/1.1 to the origin, X-Forwarded-For on in every proxy, and the
        offered load stepped up until each proxy fails; at each step p99 latency, availability (non-2xx answers and
        errors), the proxy's CPU and its resident memory. Then the report (analysis/Report --stepped: stepped.md and a chart of each figure against the offered load).

        How the load steps: open loop, h2load --rps (crank/h2load-job.sh --rate), the same offered requests/s for every proxy
        at a step. Steps of connections (closed loop) were the other choice and were not taken: a closed loop offers each
        proxy only what it answers, so its x axis would be a different load per proxy, and it never fails by overload, it
        slows down. An open loop puts every proxy at the same load, and past its capacity the achieved rate falls behind the
        offered one and the latency grows without bound: the failure the comparison looks for. HTTP/2 keeps the loop open
        while fewer than --streams requests are in flight on a connection (h2load-job.sh says more).

        Each step is one crank/run-local.sh call with every proxy still standing (its rounds interleave them, each run starts
        its proxy afresh with its warm-up, and /proc sampling gives the CPU and memory of the measured window). A proxy
        fails a step when, in the median of its runs there, its achieved rate of 2xx answers is below --fail-achieved % of the
        offered rate, or its availability is below --fail-availability %, or no run of it succeeded; it is not offered the
        next steps. The steps end when every proxy has failed, or after --steps.

        run-local.sh's options go to each call as given. Set here, before them (so a later one wins): --rounds 1 --warmup 10
        --duration 10 --steady-retries 0 (an overloaded proxy is not steady, and a retry would not make it so). Fixed here:
        --load h2load --server-scheme https, X-Forwarded-For (HAPROXY_FORWARDFOR; the others always send it), and maxErrors
        high enough that a step with errors is recorded rather than failed: this study judges the steps.
        Exit status: 0 every step ran (whatever the proxies did in it); 1 a run-local.sh call or the report failed; 2 bad usage.
        """,
        [
            ScenarioArgument,
            // 2000 and 2000: on the 2-core box with the proxy on a core of its own, full YARP over h2 and TLS is expected
            // to fail within the first few steps and nginx within twenty, so the curves have points below each knee.
            B.Bind(Cli.Int("--start", 2000, "the first offered rate, requests/s over all connections", min: 1, helpName: "R"), (o, v) => o.Start = v),
            B.Bind(Cli.Int("--step", 2000, "the increment of the offered rate", min: 1, helpName: "R"), (o, v) => o.Step = v),
            // 30 steps: up to 60,000 requests/s by default.
            B.Bind(Cli.Int("--steps", 30, $"at most N steps (at most {MaxSteps})", min: 1, max: MaxSteps), (o, v) => o.Steps = v),
            // 95 %: h2load's rate control lands a few percent off the offered rate on a step the proxy keeps up with, as in
            // the saturation ramp. 100 %: any failed request is a failure, as maxErrors 0 makes it for every other run
            // here. Kept as given: the log line repeats the text, stepped.json the number.
            B.Bind(Percent("--fail-achieved", "95", "a step fails below P % of the offered rate achieved"), (o, v) => o.FailAchieved = v),
            B.Bind(Percent("--fail-availability", "100", "a step fails below P % of requests answered 2xx or 3xx"), (o, v) => o.FailAvailability = v),
            .. Levels.OutAndReport(B, "stepped", "s<rate>", "step", " and each proxy's failing step"),
            .. Levels.RunLocalOptions(["--no-report"], " (or has no meaning per step)", "--load", "--rate", "--json-dir", "--server-scheme", "--dry-run"),
        ]);

    internal static SteppedOptions Parse(IReadOnlyList<string> args) =>
        Levels.Parse(Command, B, ScenarioArgument, DefaultScenarios, args, (o, a) => o.Scenarios.Add(
            !All.Contains(a) ? throw new UsageException($"unknown scenario '{a}' ({string.Join(' ', All)})")
            : a != "direct" ? a : throw new UsageException("direct has no place here: the origin speaks HTTP/1.1")));

    /// <summary>The offered rate of step <paramref name="index"/> (from 0).</summary>
    internal static long Rate(SteppedOptions o, int index) => o.Start + (index * o.Step);

    /// <summary>"ok", or why <paramref name="scenario"/> failed the step at <paramref name="offered"/> requests/s, from its
    /// runs in <paramref name="dir"/> (&lt;scenario&gt;.r&lt;round&gt;.json): no run there; no successful run (return
    /// code 0); the median of its 2xx answers per second (h2load/rps/2xx) below <paramref name="failAchieved"/> % of the
    /// offered rate; or the median availability (h2load/availability, %) below <paramref name="failAvailability"/>. A
    /// figure a run lacks counts as 0.</summary>
    internal static string Verdict(string dir, string scenario, long offered, double failAchieved, double failAvailability)
    {
        var files = Directory.Exists(dir) ? Directory.GetFiles(dir, scenario + ".r*.json") : [];
        if (files.Length == 0)
        {
            return "no result";
        }
        var ok = new List<JsonNode?>();
        foreach (var file in files)
        {
            // A file run-local did not finish (no JSON) is no successful run.
            var run = Levels.ReadRun(file);
            if (Levels.Num(run?["returnCode"]) == 0)
            {
                ok.Add(run?["jobResults"]?["jobs"]?["load"]?["results"]);
            }
        }
        if (ok.Count == 0)
        {
            return "no run succeeded";
        }
        var achieved = Stats.Median(ok.Select(r => Levels.Num(r?["h2load/rps/2xx"]) ?? 0))!.Value;
        var available = Stats.Median(ok.Select(r => Levels.Num(r?["h2load/availability"]) ?? 0))!.Value;
        if (achieved < offered * failAchieved / 100)
        {
            return $"achieved {Math.Floor(achieved).ToString(CultureInfo.InvariantCulture)}/s of {offered}/s offered";
        }
        if (available < failAvailability)
        {
            return $"availability {(Math.Floor(available * 1000) / 1000).ToString(CultureInfo.InvariantCulture)} %";
        }
        return "ok";
    }

    private static int Execute(SteppedOptions o, IReadOnlyList<string> args, string root, LevelHooks hooks)
    {
        var command = Levels.CommandLine("crank/run-local.sh stepped", args);
        var failAchieved = double.Parse(o.FailAchieved, CultureInfo.InvariantCulture);
        var failAvailability = double.Parse(o.FailAvailability, CultureInfo.InvariantCulture);
        var dir = Levels.OutFolder(o.Out, root, "stepped");
        Console.Out.WriteLine($"stepped: {string.Join(' ', o.Scenarios)}; from {o.Start} requests/s by {o.Step}, at most {o.Steps} steps; "
            + $"a proxy fails a step below {o.FailAchieved} % achieved or {o.FailAvailability} % available; results in {dir}");
        // Set before the passed options (a later one wins): one round, a 10 s warm-up and 10 s measured, no retries (an
        // overloaded proxy is not steady, and a retry would not make it so). Fixed after them: h2 over TLS at the step's
        // rate, X-Forwarded-For from HAProxy too (the others always send it), errors recorded.
        var study = new LevelStudy("stepped", "--stepped", ["--rounds", "1", "--warmup", "10", "--duration", "10", "--steady-retries", "0"],
            rate => ["--load", "h2load", "--server-scheme", "https", "--rate", rate.ToString(CultureInfo.InvariantCulture),
                "--variable", $"maxErrors={StepMaxErrors}", "--app-env", "HAPROXY_FORWARDFOR=1"],
            (stepDir, s, rate) => Verdict(stepDir, s, rate, failAchieved, failAvailability));
        var levels = Enumerable.Range(0, (int)o.Steps).Select(i => new Level(Rate(o, i), $"s{Rate(o, i)}", $"step {i + 1}: {Rate(o, i)} requests/s"));
        var (rates, failed) = (new List<long>(), new JsonObject());
        var rc = Levels.Drive(study, o, hooks, dir, levels, rates, failed);
        Levels.WritePlan(study, dir, new JsonObject
        {
            ["start"] = o.Start,
            ["step"] = o.Step,
            ["steps"] = o.Steps,
            ["failAchievedPercent"] = failAchieved,
            ["failAvailabilityPercent"] = failAvailability,
            ["rates"] = Levels.Array(rates),
            ["scenarios"] = Levels.Array(o.Scenarios),
            ["failedAt"] = failed,
            ["command"] = command,
        });
        return Levels.Report(study, o, hooks, dir) != 0 ? 1 : rc;
    }

    [GeneratedRegex(@"^[0-9]+(\.[0-9]+)?$")]
    private static partial Regex Decimal();
}
