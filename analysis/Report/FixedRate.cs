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

    private static readonly (string Name, string Label)[] Percentiles =
        [("http/latency/50", "p50"), ("http/latency/90", "p90"), ("http/latency/99", "p99"), ("http/latency/99.9", "p99.9"), ("http/latency/max", "max")];

    /// <summary>Report --fixed-rate DIR [--out DIR] [--no-png]: writes fixedrate.md (and PNGs). Exit status as Program's.</summary>
    public static int Run(ReportCommand command) =>
        ReportCommand.RunStudy(command, "fixed-rate", "p<percent>/<scenario>.r<round>.json, as crank/run-local.sh fixed-rate writes", Read,
            (runs, dir, outDir, png) => Build(runs, ReadPlan(dir), outDir, png));

    /// <summary>fixedrate.json (crank/run-local.sh fixed-rate): the maximum the rates come from, its source and the command.</summary>
    private static Dictionary<string, string> ReadPlan(string dir) =>
        ResultsReader.ReadPlan(dir, "fixedrate.json") is { } plan
            ? plan.EnumerateObject().ToDictionary(
                p => p.Name, p => p.Value.ValueKind == JsonValueKind.String ? p.Value.GetString() ?? "" : p.Value.GetRawText(), StringComparer.Ordinal)
            : new(StringComparer.Ordinal);

    /// <summary>Every DIR/p&lt;percent&gt;/&lt;scenario&gt;.r&lt;round&gt;.json (or, folded, sitting.json's runs from those folders) whose load job ran the fixed-rate job.</summary>
    public static List<LevelRun> Read(string dir) => ResultsReader.ReadLevelRuns(dir, 'p', "fixedrate/rate", ProxyCpuUs);

    private const string ProxyCpuUs = "proc/cpu/per-request";

    private static double? Median(IEnumerable<LevelRun> runs, string figure) =>
        Stats.Median(runs.Select(x => x.Figures.TryGetValue(figure, out var v) ? v : (double?)null));

    public static string Build(IReadOnlyList<LevelRun> runs, IReadOnlyDictionary<string, string> plan, string outDir, bool png)
    {
        var md = new StringBuilder();
        md.Append("# Open-loop latency (fixed rate)\n\n");
        md.Append("Each run sends at a fixed rate whatever the answers' pace (crank/fixedrate-job.sh, h2load over HTTP/1.1) and times every ")
          .Append("request from when it was due, not from when it could be sent: coordinated omission corrected (crank/README.md, ")
          .Append("\"Fixed rate\"). Requests due but unanswered when the window ended count with the time from their due time to its ")
          .Append("end. `direct` (no proxy) at the same offered rate is the floor: what the load generator and the origin add on this machine.\n\n");
        if (plan.TryGetValue("maxRps", out var max))
        {
            md.Append(Inv, $"Offered rates: shares of {max} requests/s, {(plan.TryGetValue("maxSource", out var src) ? Format.Inline(src) : "given")}. ");
        }
        if (plan.TryGetValue("command", out var cmd))
        {
            md.Append(Inv, $"Command: `{Format.Inline(cmd)}`. ");
        }
        md.Append("Medians over rounds; a run whose load job failed is left out and counted.\n\n");

        var ok = runs.Where(r => !r.Failed).ToList();
        var failed = runs.Count - ok.Count;
        if (failed > 0)
        {
            md.Append(Inv, $"**{failed} run(s) failed** and are left out.\n\n");
        }
        var percents = runs.Select(r => r.Level).Distinct().Order().ToList();
        var scenarios = Order.Where(s => runs.Any(r => r.Scenario == s))
            .Concat(runs.Select(r => r.Scenario).Distinct().Where(s => !Order.Contains(s)).Order(StringComparer.Ordinal)).ToList();
        string OfferedLabel(int percent)
        {
            var offered = Median(ok.Where(r => r.Level == percent), "fixedrate/rate");
            return $"{percent} % ({Format.N0(offered)}/s)";
        }

        md.Append("## p99.9 against offered load (ms)\n\n| scenario |");
        foreach (var p in percents)
        {
            md.Append(Inv, $" {OfferedLabel(p)} |");
        }
        md.Append("\n|---|").Append(string.Concat(percents.Select(_ => "--:|"))).Append('\n');
        foreach (var s in scenarios)
        {
            md.Append(Inv, $"| {s} |");
            foreach (var p in percents)
            {
                var cell = ok.Where(r => r.Scenario == s && r.Level == p).ToList();
                md.Append(cell.Count == 0 ? " - |" : $" {Format.Auto(Median(cell, "http/latency/99.9"))} |");
            }
            md.Append('\n');
        }
        md.Append('\n');

        foreach (var p in percents)
        {
            md.Append(Inv, $"## {OfferedLabel(p)} offered\n\n");
            md.Append("| scenario | runs | answered/s | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | missed | h2load's own p99 ms | proxy CPU µs/request |\n");
            md.Append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
            foreach (var s in scenarios)
            {
                var cell = ok.Where(r => r.Scenario == s && r.Level == p).ToList();
                if (cell.Count == 0)
                {
                    continue;
                }
                md.Append(Inv, $"| {s} | {cell.Count} | {Format.N0(Median(cell, "http/rps/mean"))} |");
                foreach (var (name, _) in Percentiles)
                {
                    md.Append(Inv, $" {Format.Auto(Median(cell, name))} |");
                }
                md.Append(Inv, $" {Format.N0(Median(cell, "fixedrate/missed"))} | {Format.Auto(Median(cell, "fixedrate/uncorrected/latency/99"))} |");
                md.Append(Inv, $" {(s == "direct" ? "-" : Format.F(Median(cell, ResultsReader.Application + ProxyCpuUs), 1))} |\n");
            }
            md.Append('\n');
        }

        if (png && percents.Count > 0)
        {
            var xs = percents.Select(OfferedLabel).ToList();
            foreach (var (name, label) in new[] { ("http/latency/99", "p99"), ("http/latency/99.9", "p99.9") })
            {
                var series = scenarios.Select(s => new Series(s,
                    percents.Select(p => Median(ok.Where(r => r.Scenario == s && r.Level == p), name)).ToList(), Charts.ColorOf(s))).ToList();
                // A log scale once the values span more than a decade (a saturated proxy's tail is orders above the
                // rest); within one decade it would show a single tick.
                var values = series.SelectMany(x => x.Values).OfType<double>().Where(v => v > 0).ToList();
                var logY = values.Count > 0 && values.Max() / values.Min() > 10;
                var chart = Charts.LineChart($"Open-loop {label} latency against offered load",
                    "latency from the due time (coordinated omission corrected)",
                    "offered load (share of the best peer's maximum)", $"{label} latency (ms{(logY ? ", log scale" : "")})", xs, series, logY);
                var file = $"fixedrate-{label.Replace(".", "", StringComparison.Ordinal)}.png";
                chart.SavePng(Path.Combine(outDir, file));
                md.Append(Inv, $"![{label} against offered load]({file})\n\n");
            }
        }
        return md.ToString();
    }
}
