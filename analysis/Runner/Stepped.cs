using System.Globalization;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;

namespace LLRP.Runner;

/// <summary>`crank/run-local.sh stepped`'s options.</summary>
internal sealed class SteppedOptions
{
    // 2000 and 2000: on the 2-core box with the proxy on a core of its own, full YARP over h2 and TLS is expected to fail
    // within the first few steps and nginx within twenty, so the curves have points below each knee. 30 steps: up to
    // 60,000 requests/s by default.
    public long Start = 2000, Step = 2000, Steps = 30;
    // 95 %: h2load's rate control lands a few percent off the offered rate on a step the proxy keeps up with, as in the
    // saturation ramp. 100 %: any failed request is a failure, as maxErrors 0 makes it for every other run here. Kept as
    // given: the log line repeats the text, stepped.json the number.
    public string FailAchieved = "95", FailAvailability = "100";
    public string Out = "";
    public bool Report = true, Help;
    public readonly List<string> Pass = [];
    public readonly List<string> Scenarios = [];
}

/// <summary>The stepped comparison (`crank/run-local.sh stepped`, formerly crank/stepped.sh): HTTP/2 over TLS to the
/// proxy, HTTP/1.1 to the origin, X-Forwarded-For on in every proxy, and the offered load (open loop, h2load --rps)
/// stepped up until each proxy fails. Each step is one run-local call with every proxy still standing, into
/// DIR/s&lt;rate&gt;/; a proxy that fails a step is not offered the next ones. Then analysis/Report --stepped.</summary>
internal static partial class SteppedStudy
{
    private static readonly string[] All =
        ["direct", "nginx", "haproxy", "llrp-llhttp", "llrp-httpclient", "llrp-httpclientwithcontext", "llrp-yarp", "httpclientproxy", "yarp", "llrp-kestrel-h1"];
    private static readonly string[] DefaultScenarios = ["nginx", "haproxy", "llrp-llhttp", "yarp"];
    // run-local's options that take no value; every other option takes the next word.
    private static readonly string[] RunLocalFlags = ["--pin-proxy", "--pin", "--shared", "--own-sessions", "--pgo", "--nopgo", "--fallback", "--no-install"];
    // The errors a step may have and still be recorded as a run (run-local's maxErrors, 0 by default, would fail it): a
    // billion is beyond any step's request count. This study judges the steps.
    private const long StepMaxErrors = 1_000_000_000;
    private const int MaxSteps = 60;

    public static int Run(IReadOnlyList<string> args, string root, LevelHooks? hooks = null) =>
        Levels.Study("stepped", HelpText, () => Parse(args), o => o.Help, o => Execute(o, args, root, hooks ?? LevelHooks.For(root)));

    internal static SteppedOptions Parse(IReadOnlyList<string> args)
    {
        var o = new SteppedOptions();
        for (var i = 0; i < args.Count; i++)
        {
            var a = args[i];
            string Next() => i + 1 < args.Count ? args[++i] : "";
            long Whole()
            {
                var v = Next();
                return Digits().IsMatch(v) && long.TryParse(v, NumberStyles.None, CultureInfo.InvariantCulture, out var n) && n >= 1
                    ? n : throw new UsageException($"{a} needs a whole number >= 1");
            }
            string Percent()
            {
                var v = Next();
                return Decimal().IsMatch(v) && double.Parse(v, CultureInfo.InvariantCulture) is > 0 and <= 100
                    ? v : throw new UsageException($"{a} needs a percentage above 0, at most 100");
            }
            switch (a)
            {
                case "--start": o.Start = Whole(); break;
                case "--step": o.Step = Whole(); break;
                case "--steps":
                    o.Steps = Whole();
                    if (o.Steps > MaxSteps)
                    {
                        throw new UsageException($"--steps: at most {MaxSteps}");
                    }
                    break;
                case "--fail-achieved": o.FailAchieved = Percent(); break;
                case "--fail-availability": o.FailAvailability = Percent(); break;
                case "--out":
                    var dir = Next();
                    o.Out = dir.Length > 0 ? dir : throw new UsageException("--out needs a folder");
                    break;
                case "--no-report": o.Report = false; break;
                case "--load" or "--rate" or "--json-dir" or "--server-scheme" or "--dry-run":
                    throw new UsageException($"{a} is set by this script (or has no meaning per step)");
                case "-h" or "--help": o.Help = true; return o;
                default:
                    if (RunLocalFlags.Contains(a))
                    {
                        o.Pass.Add(a);
                    }
                    else if (a.StartsWith('-'))
                    {
                        o.Pass.AddRange([a, i + 1 < args.Count ? args[++i] : throw new UsageException($"{a} needs a value")]);
                    }
                    else if (!All.Contains(a))
                    {
                        throw new UsageException($"unknown scenario '{a}' ({string.Join(' ', All)})");
                    }
                    else
                    {
                        o.Scenarios.Add(a != "direct" ? a : throw new UsageException("direct has no place here: the origin speaks HTTP/1.1"));
                    }
                    break;
            }
        }
        if (o.Scenarios.Count == 0)
        {
            o.Scenarios.AddRange(DefaultScenarios);
        }
        return o;
    }

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
            JsonNode? run;
            try
            {
                run = JsonNode.Parse(File.ReadAllText(file));
            }
            catch (System.Text.Json.JsonException)
            {
                // A file run-local did not finish is no successful run.
                continue;
            }
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

        var rc = 0;
        var standing = o.Scenarios.ToList();
        var rates = new List<long>();
        var failed = new JsonObject();
        for (var i = 0; i < o.Steps && standing.Count > 0; i++)
        {
            var rate = Rate(o, i);
            rates.Add(rate);
            Console.Out.WriteLine($"stepped: step {i + 1}: {rate} requests/s offered to {string.Join(' ', standing)}");
            var stepDir = Path.Combine(dir, $"s{rate}");
            // Set before the passed options (a later one wins): one round, a 10 s warm-up and 10 s measured, no retries
            // (an overloaded proxy is not steady, and a retry would not make it so). Fixed after them: h2 over TLS at
            // the step's rate, X-Forwarded-For from HAProxy too (the others always send it), errors recorded.
            List<string> call = ["--no-report", "--rounds", "1", "--warmup", "10", "--duration", "10", "--steady-retries", "0", .. o.Pass,
                "--load", "h2load", "--server-scheme", "https", "--rate", rate.ToString(CultureInfo.InvariantCulture),
                "--variable", $"maxErrors={StepMaxErrors}", "--app-env", "HAPROXY_FORWARDFOR=1", "--json-dir", stepDir, .. standing];
            if (hooks.RunLocal(call) != 0)
            {
                rc = 1;
            }
            var kept = new List<string>();
            foreach (var s in standing)
            {
                var why = Verdict(stepDir, s, rate, failAchieved, failAvailability);
                if (why == "ok")
                {
                    kept.Add(s);
                    continue;
                }
                Console.Out.WriteLine($"stepped: {s} failed at {rate} requests/s: {why}");
                failed[s] = new JsonObject { ["rate"] = rate, ["reason"] = why };
            }
            standing = kept;
        }
        if (standing.Count > 0)
        {
            Console.Out.WriteLine($"stepped: still standing after the last step: {string.Join(' ', standing)}");
        }

        var plan = new JsonObject
        {
            ["start"] = o.Start,
            ["step"] = o.Step,
            ["steps"] = o.Steps,
            ["failAchievedPercent"] = failAchieved,
            ["failAvailabilityPercent"] = failAvailability,
            ["rates"] = new JsonArray([.. rates.Select(r => JsonValue.Create(r))]),
            ["scenarios"] = new JsonArray([.. o.Scenarios.Select(s => JsonValue.Create(s))]),
            ["failedAt"] = failed,
            ["command"] = command,
        };
        File.WriteAllText(Path.Combine(dir, "stepped.json"), plan.ToJsonString(Levels.Indented) + "\n");

        if (o.Report && Levels.Report(hooks, "stepped", "--stepped", dir, "stepped.md") != 0)
        {
            rc = 1;
        }
        return rc;
    }

    [GeneratedRegex("^[0-9]+$")]
    private static partial Regex Digits();

    [GeneratedRegex(@"^[0-9]+(\.[0-9]+)?$")]
    private static partial Regex Decimal();

    internal const string HelpText = """
        The nginx-vs-Pingora style comparison as a scenario: HTTP/2 over TLS to the proxy (ALPN h2, the run's self-signed
        certificate), HTTP/1.1 to the origin, X-Forwarded-For on in every proxy, and the offered load stepped up until each
        proxy fails; at each step p99 latency, availability (non-2xx answers and errors), the proxy's CPU and its resident
        memory, for nginx, HAProxy, llrp-llhttp and full YARP. Then the report (analysis/Report --stepped: stepped.md and a
        chart of each figure against the offered load).

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

        usage: crank/run-local.sh stepped [--start R] [--step R] [--steps N] [--fail-achieved P] [--fail-availability P]
                                          [--out DIR] [--no-report] [run-local.sh options...] [SCENARIO...]
          --start R, --step R   the first offered rate and the increment, requests/s over all connections (default 2000,
                           2000: on the 2-core box with the proxy on a core of its own, full YARP over h2 and TLS is expected
                           to fail within the first few steps and nginx within twenty, so the curves have points below each
                           knee)
          --steps N        at most N steps (default 30, up to 60,000 requests/s by default; at most 60)
          --fail-achieved P     a step fails below P % of the offered rate achieved (default 95: h2load's rate control lands
                           a few percent off the offered rate on a step the proxy keeps up with, as in the saturation ramp)
          --fail-availability P a step fails below P % of requests answered 2xx or 3xx (default 100: any failed request is a
                           failure, as maxErrors 0 makes it for every other run here)
          --out DIR        results (default artifacts/crank/stepped-<date>-<time>): DIR/s<rate>/ is one run-local.sh folder per
                           step, DIR/stepped.json the plan and each proxy's failing step, DIR/stepped.md + PNGs the report
          SCENARIO         default: nginx haproxy llrp-llhttp yarp
        Every other option goes to each run-local.sh call as given (--rounds, --warmup, --duration, --connections, --streams,
        --protocols, --pin-proxy, --response-size, ports...). Set here, before them (so a later one wins): --rounds 1
        --warmup 10 --duration 10 --steady-retries 0 (an overloaded proxy is not steady, and a retry would not make it so).
        Fixed here: --load h2load --server-scheme https, X-Forwarded-For (HAPROXY_FORWARDFOR; the others always send it), and
        maxErrors high enough that a step with errors is recorded rather than failed: this script judges the steps.
        Exit status: 0 every step ran (whatever the proxies did in it); 1 a run-local.sh call or the report failed; 2 bad usage.

        """;
}
