using System.Globalization;
using System.Text;
using System.Text.Json;

namespace LLRP.Analysis;

/// <summary>
/// The open-loop report (crank/run-local.sh fixed-rate writes the runs): per offered load (a share of the best peer's measured
/// maximum), each scenario's latency percentiles from the due time (coordinated omission corrected), the answered rate,
/// the requests missed, the proxy's CPU per request; a table of p99.9 against offered load; and charts of p99 and p99.9
/// against offered load.
/// </summary>
internal static class FixedRate
{
    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;

    // direct first (the floor at the same offered load), then the proxies in the issue's order.
    private static readonly string[] Order = ["direct", "llrp-llhttp", "nginx", "haproxy", "yarp"];

    private static readonly string[] Percentiles = ["http/latency/50", "http/latency/90", "http/latency/99", "http/latency/99.9", "http/latency/max"];

    /// <summary>Report --fixed-rate DIR [--out DIR] [--no-png]: writes fixedrate.md (and PNGs), with fixedrate.json's
    /// maximum, its source and the command. Exit status as Program's.</summary>
    public static int Run(ReportCommand command) =>
        Levels.Run(command, "fixed-rate", "p<percent>/<scenario>.r<round>.json, as crank/run-local.sh fixed-rate writes", Read, Build);

    /// <summary>Every DIR/p&lt;percent&gt;/&lt;scenario&gt;.r&lt;round&gt;.json (or, folded, sitting.json's runs from those folders) whose load job ran the fixed-rate job.</summary>
    public static List<LevelRun> Read(string dir) => ResultsReader.ReadLevelRuns(dir, 'p', "fixedrate/rate", ProxyCpuUs);

    private const string ProxyCpuUs = "proc/cpu/per-request";

    public static string Build(IReadOnlyList<LevelRun> runs, JsonElement? plan, string outDir, bool png)
    {
        var md = new StringBuilder();
        md.Append("# Open-loop latency (fixed rate)\n\n");
        md.Append("Each run sends at a fixed rate whatever the answers' pace (crank/fixedrate-job.sh, h2load over HTTP/1.1) and times every ")
          .Append("request from when it was due, not from when it could be sent: coordinated omission corrected (crank/README.md, ")
          .Append("\"Fixed rate\"). Requests due but unanswered when the window ended count with the time from their due time to its ")
          .Append("end. `direct` (no proxy) at the same offered rate is the floor: what the load generator and the origin add on this machine.\n\n");
        if (Levels.Prop(plan, "maxRps") is { } max)
        {
            md.Append(Inv, $"Offered rates: shares of {max} requests/s, {(Levels.Prop(plan, "maxSource") is { } src ? Format.Inline(src) : "given")}. ");
        }
        if (Levels.Prop(plan, "command") is { } cmd)
        {
            md.Append(Inv, $"Command: `{Format.Inline(cmd)}`. ");
        }
        md.Append("Medians over rounds; a run whose load job failed is left out and counted.\n\n");

        var ok = runs.Where(r => !r.Failed).ToList();
        if (runs.Count - ok.Count is var failed and > 0)
        {
            md.Append(Inv, $"**{failed} run(s) failed** and are left out.\n\n");
        }
        var percents = runs.Select(r => r.Level).Distinct().Order().ToList();
        var scenarios = Levels.Scenarios(runs, Order);
        string OfferedLabel(int percent) => $"{percent} % ({Format.N0(Levels.Median(ok.Where(r => r.Level == percent), "fixedrate/rate"))}/s)";
        List<LevelRun> Cell(string s, int p) => [.. ok.Where(r => r.Scenario == s && r.Level == p)];

        md.Append("## p99.9 against offered load (ms)\n\n");
        Format.Table(md, "scenario", percents, OfferedLabel, scenarios,
            (s, p) => Cell(s, p) is { Count: > 0 } cell ? Format.Auto(Levels.Median(cell, "http/latency/99.9")) : Format.None);

        foreach (var p in percents)
        {
            md.Append(Inv, $"## {OfferedLabel(p)} offered\n\n");
            md.Append("| scenario | runs | answered/s | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | missed | h2load's own p99 ms | proxy CPU µs/request |\n");
            md.Append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
            foreach (var s in scenarios)
            {
                if (Cell(s, p) is not { Count: > 0 } cell)
                {
                    continue;
                }
                md.Append(Inv, $"| {s} | {cell.Count} | {Format.N0(Levels.Median(cell, "http/rps/mean"))} |")
                  .AppendJoin("", Percentiles.Select(name => $" {Format.Auto(Levels.Median(cell, name))} |"))
                  .Append(Inv, $" {Format.N0(Levels.Median(cell, "fixedrate/missed"))} | {Format.Auto(Levels.Median(cell, "fixedrate/uncorrected/latency/99"))} |")
                  .Append(Inv, $" {(s == "direct" ? "-" : Format.F(Levels.Median(cell, ResultsReader.Application + ProxyCpuUs), 1))} |\n");
            }
            md.Append('\n');
        }

        if (png && percents.Count > 0)
        {
            foreach (var (name, label) in new[] { ("http/latency/99", "p99"), ("http/latency/99.9", "p99.9") })
            {
                // A saturated proxy's tail is orders above the rest: log scale once the values span more than a decade.
                Levels.Chart(md, outDir, $"fixedrate-{label.Replace(".", "", StringComparison.Ordinal)}.png", $"{label} against offered load", ok, percents,
                    [.. percents.Select(OfferedLabel)], scenarios, name, mayLog: true, $"Open-loop {label} latency against offered load",
                    "latency from the due time (coordinated omission corrected)", "offered load (share of the best peer's maximum)",
                    logY => $"{label} latency (ms{(logY ? ", log scale" : "")})");
            }
        }
        return md.ToString();
    }
}
