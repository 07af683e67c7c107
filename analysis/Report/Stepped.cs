using System.Globalization;
using System.Text;
using System.Text.Json;

namespace LLRP.Analysis;

/// <summary>
/// The report of the stepped comparison (crank/run-local.sh stepped writes the runs and stepped.json): HTTP/2 over TLS to each
/// proxy, the offered load stepped up until the proxy fails; per step and proxy the achieved rate, p99, availability,
/// the proxy's CPU and its resident memory; where each proxy failed and why; and a chart of each figure against the
/// offered load.
/// </summary>
internal static class Stepped
{
    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;

    // The peers first (nginx, HAProxy), then LLRP and full YARP.
    private static readonly string[] Order = ["nginx", "haproxy", "llrp-llhttp", "yarp"];

    // The figures of a step: (name in a run's figures, table heading and chart axis, chart file stem). The load job's names come from crank/h2load-job.sh; the proxy's from run-local.sh's /proc samples
    // of the measured window.
    internal static readonly (string Name, string Label, string File)[] Figures =
    [
        ("h2load/rps/2xx", "achieved 2xx answers/s", "achieved"),
        ("http/latency/99", "p99 latency (ms)", "p99"),
        ("h2load/availability", "availability (% 2xx of requests ended)", "availability"),
        (ProxyCpu, "proxy CPU (% of one core, window average)", "cpu"),
        (ProxyMemory, "proxy resident memory (MB, window peak)", "memory"),
    ];

    // The proxy's figures, under names of their own in LevelRun.Figures (the load job's names keep theirs).
    internal const string ProxyCpu = "application:proc/cpu/raw/average";
    internal const string ProxyMemory = "application:benchmarks/working-set";

    /// <summary>Report --stepped DIR [--out DIR] [--no-png]: writes stepped.md (and PNGs), with stepped.json's
    /// thresholds, command and where each proxy failed. Exit status as Program's.</summary>
    public static int Run(ReportCommand command) =>
        Levels.Run(command, "stepped", "s<rate>/<scenario>.r<round>.json with h2load's figures, as crank/run-local.sh stepped writes", Read, Build);

    /// <summary>Every DIR/s&lt;rate&gt;/&lt;scenario&gt;.r&lt;round&gt;.json (or, folded, sitting.json's runs from those folders) whose load job is h2load's.</summary>
    public static List<LevelRun> Read(string dir) =>
        ResultsReader.ReadLevelRuns(dir, 's', "h2load/rps/2xx", ProxyCpu[ResultsReader.Application.Length..], ProxyMemory[ResultsReader.Application.Length..]);

    private static string Cell(string figure, double? v) => figure switch
    {
        "h2load/rps/2xx" => Format.N0(v),
        "h2load/availability" => Format.F(v, 3),
        _ => Format.Auto(v),
    };

    public static string Build(IReadOnlyList<LevelRun> runs, JsonElement? plan, string outDir, bool png)
    {
        var md = new StringBuilder();
        md.Append("# Stepped comparison: HTTP/2 over TLS, offered load stepped up to failure\n\n");
        md.Append("The stepped comparison (crank/run-local.sh stepped): h2load speaks HTTP/2 over TLS (ALPN h2) to each proxy, which speaks ")
          .Append("HTTP/1.1 to the origin with X-Forwarded-For; the load is open loop (h2load --rps), the same offered rate for ")
          .Append("every proxy at a step, raised step by step until the proxy fails. Per step: the achieved rate of 2xx answers, ")
          .Append("p99 latency (h2load times a request from when it sent it), availability (2xx and 3xx answers / requests that ")
          .Append("ended: non-2xx answers and errors lower it), and the proxy's CPU and resident memory over the measured window. ")
          .Append("Medians over rounds; a run whose load job failed is left out and counted.\n\n");
        if (plan is not null)
        {
            md.Append(Inv, $"A proxy fails a step below {Levels.Prop(plan, "failAchievedPercent") ?? "?"} % of the offered rate achieved or below ")
              .Append(Inv, $"{Levels.Prop(plan, "failAvailabilityPercent") ?? "?"} % availability, and is not offered the next steps. ")
              .Append(Inv, $"Command: `{Format.Inline(Levels.Prop(plan, "command") ?? "?")}`.\n\n");
        }
        var failedRuns = runs.Count(r => r.Failed);
        if (failedRuns > 0)
        {
            md.Append(Inv, $"**{failedRuns} run(s) failed** (their load job did not complete) and are left out.\n\n");
        }

        var rates = runs.Select(r => r.Level).Distinct().Order().ToList();
        var scenarios = Levels.Scenarios(runs, Order);
        JsonElement? failedAt = plan is { } pl && pl.TryGetProperty("failedAt", out var f) && f.ValueKind == JsonValueKind.Object ? f : null;

        md.Append("## Where each proxy failed\n\n| proxy | highest step passed (req/s offered) | highest achieved (2xx/s) | failed at (req/s offered) | why |\n|---|--:|--:|--:|---|\n");
        foreach (var s in scenarios)
        {
            var mine = runs.Where(r => r.Scenario == s).ToList();
            int? failRate = null;
            var why = "";
            if (failedAt is { } fa && fa.TryGetProperty(s, out var entry))
            {
                failRate = entry.TryGetProperty("rate", out var fr) && fr.ValueKind == JsonValueKind.Number ? fr.GetInt32() : null;
                why = entry.TryGetProperty("reason", out var rr) && rr.ValueKind == JsonValueKind.String ? rr.GetString() ?? "" : "";
            }
            var passed = mine.Select(r => r.Level).Distinct().Where(x => failRate is null || x < failRate).DefaultIfEmpty().Max();
            var best = rates.Select(x => Levels.Median(mine.Where(r => r.Level == x), "h2load/rps/2xx")).OfType<double>().DefaultIfEmpty(double.NaN).Max();
            md.Append(Inv, $"| {s} | {(passed == 0 ? Format.None : Format.N0(passed))} | {Format.N0(best)} | {(failRate is { } fr2 ? Format.N0(fr2) : "not within the steps")} | {Format.Inline(why)} |\n");
        }
        md.Append('\n');

        foreach (var (name, label, file) in Figures)
        {
            md.Append(Inv, $"## {char.ToUpperInvariant(label[0])}{label[1..]}\n\n");
            Format.Table(md, "proxy", rates, rate => $"{Format.N0(rate)}/s", scenarios,
                (s, rate) => runs.Where(r => r.Scenario == s && r.Level == rate).ToList() is { Count: > 0 } cell ? Cell(name, Levels.Median(cell, name)) : Format.None);
            if (png && rates.Count > 0)
            {
                // p99 on a log scale once it spans more than a decade (a failing proxy's tail is orders above the rest).
                Levels.Chart(md, outDir, $"stepped-{file}.png", $"{label} against the offered load", runs, rates, [.. rates.Select(x => x.ToString("N0", Inv))],
                    scenarios, name, mayLog: name == "http/latency/99", $"Stepped comparison: {label}",
                    "HTTP/2 over TLS to the proxy, against the offered load (h2load --rps)", "offered requests/s",
                    logY => logY ? $"{label}, log scale" : label, logY => logY ? null : 0, referenceY: name == "h2load/availability" ? 100 : null);
            }
        }
        return md.ToString();
    }
}
