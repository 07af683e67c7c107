using System.Globalization;
using System.Text;
using System.Text.Json;

namespace LLRP.Analysis;

/// <summary>One run of a comparison: a row of comparisons.json (analysis/Runner, Comparisons.cs).</summary>
internal sealed record ComparisonRun(
    string Comparison, string Proxy, string Policy, int Replicas, int Connections, int Round, bool Ok,
    IReadOnlyDictionary<string, double> Figures, IReadOnlyDictionary<string, double[]> Series);

/// <summary>
/// The report of the four published comparisons (crank/run-local.sh scaling|sweep|ab|ramp|comparisons writes
/// comparisons.json): the horizontal scaling table (proxy/policy x replicas, RPS and p95), the concurrency sweep (RPS,
/// p90, p95), the ApacheBench table and the saturation ramp (a table per proxy, the saturation point of each, and three
/// curves: achieved rate, p99 and availability against the offered rate).
/// </summary>
internal static class Comparisons
{
    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;

    // The proxies in the order the tables list them (the published comparisons' subjects first).
    private static readonly string[] ProxyOrder = ["direct", "llrp-llhttp", "yarp", "nginx", "nginx-default", "haproxy"];

    /// <summary>Report --comparisons DIR [--out DIR] [--no-png]: writes comparisons.md (and PNGs). Exit status as ReportCli's.</summary>
    public static int Run(ReportCommand command) => ReportCommand.Run(() =>
        {
            var file = Path.Combine(command.ResultsDir, "comparisons.json");
            if (!File.Exists(file))
            {
                throw new ReportException($"{file}: not found (crank/run-local.sh scaling|sweep|ab|ramp|comparisons writes it)");
            }
            var (runs, run) = Read(file);
            Directory.CreateDirectory(command.OutDir);
            var markdown = Build(runs, run, command.OutDir, command.Png);
            var path = Path.Combine(command.OutDir, "comparisons.md");
            File.WriteAllText(path, markdown);
            Console.WriteLine($"report: {runs.Count} comparison run(s) -> {path}");
        });

    public static (List<ComparisonRun> Runs, JsonElement? Run) Read(string file)
    {
        using var doc = JsonDocument.Parse(File.ReadAllText(file));
        var root = doc.RootElement;
        if (root.ValueKind != JsonValueKind.Object || !root.TryGetProperty("rows", out var rows) || rows.ValueKind != JsonValueKind.Array)
        {
            throw new ReportException($"{file}: no \"rows\" array");
        }
        var runs = new List<ComparisonRun>();
        foreach (var row in rows.EnumerateArray())
        {
            var figures = new Dictionary<string, double>(StringComparer.Ordinal);
            var series = new Dictionary<string, double[]>(StringComparer.Ordinal);
            if (row.TryGetProperty("results", out var results) && results.ValueKind == JsonValueKind.Object)
            {
                foreach (var p in results.EnumerateObject())
                {
                    if (p.Value.ValueKind == JsonValueKind.Number)
                    {
                        figures[p.Name] = p.Value.GetDouble();
                    }
                    else if (p.Value.ValueKind == JsonValueKind.Array)
                    {
                        series[p.Name] = [.. p.Value.EnumerateArray().Select(v => v.ValueKind == JsonValueKind.Number ? v.GetDouble() : double.NaN)];
                    }
                }
            }
            runs.Add(new ComparisonRun(
                Text(row, "comparison"), Text(row, "scenario"), Text(row, "loadBalancing"), Int(row, "downstreams"),
                Int(row, "connections"), Int(row, "round"), row.TryGetProperty("ok", out var ok) && ok.ValueKind == JsonValueKind.True,
                figures, series));
        }
        JsonElement? run = root.TryGetProperty("run", out var r) && r.ValueKind == JsonValueKind.Object ? r.Clone() : null;
        return (runs, run);
    }

    private static string Text(JsonElement e, string name) =>
        e.TryGetProperty(name, out var v) && v.ValueKind == JsonValueKind.String ? v.GetString() ?? "" : "";

    private static int Int(JsonElement e, string name) =>
        e.TryGetProperty(name, out var v) && v.ValueKind == JsonValueKind.String && int.TryParse(v.GetString(), NumberStyles.None, Inv, out var n) ? n
        : e.TryGetProperty(name, out v) && v.ValueKind == JsonValueKind.Number ? v.GetInt32() : 0;

    public static string Build(IReadOnlyList<ComparisonRun> runs, JsonElement? run, string outDir, bool png)
    {
        var md = new StringBuilder();
        md.Append("# The published comparisons\n\n");
        if (run is { } r)
        {
            md.Append(CultureInfo.InvariantCulture, $"Run {Prop(r, "date")}, commit {Prop(r, "commit")}, {Prop(r, "mode")} mode, {Prop(r, "nproc")} CPUs ({Prop(r, "cpuModel")}).\n");
            md.Append(CultureInfo.InvariantCulture, $"Command: `{Prop(r, "command")}`. Medians over rounds; a run whose load job failed is left out and counted.\n\n");
        }
        var failed = runs.Count(x => !x.Ok);
        if (failed > 0)
        {
            md.Append(CultureInfo.InvariantCulture, $"**{failed} run(s) failed** and are not in the tables.\n\n");
        }
        var ok = runs.Where(x => x.Ok).ToList();
        Scaling(md, ok.Where(x => x.Comparison == "scaling").ToList());
        Sweep(md, ok.Where(x => x.Comparison == "sweep").ToList(), outDir, png);
        Ab(md, ok.Where(x => x.Comparison == "ab").ToList());
        Ramp(md, ok.Where(x => x.Comparison == "ramp").ToList(), outDir, png);
        return md.ToString();
    }

    private static string Prop(JsonElement e, string name) => e.TryGetProperty(name, out var v) ? v.ToString() : "?";

    /// <summary>The median of the rounds' values of one figure, or null when no round has it.</summary>
    public static double? Median(IEnumerable<ComparisonRun> runs, string figure) => Stats.Median(runs.Select(r => r.Figures), figure);

    private static int ProxyRank(string proxy) => Array.IndexOf(ProxyOrder, proxy) is var i and >= 0 ? i : ProxyOrder.Length;

    private static void Scaling(StringBuilder md, List<ComparisonRun> runs)
    {
        if (runs.Count == 0)
        {
            return;
        }
        md.Append("## Horizontal scaling\n\n");
        md.Append("One proxy in front of 1, 2, 3 and 5 Downstream replicas, wrk with ")
          .Append(string.Join(", ", runs.Select(x => x.Connections).Distinct().Order()))
          .Append(" connections; each cell: requests/s, p95 latency. All replicas share the proxy's machine: on a 2-core box ")
          .Append("more replicas cannot add capacity, so the table shows what each policy costs, not horizontal gains ")
          .Append("(the multimachine profile places the replicas elsewhere).\n\n");
        var counts = runs.Select(x => x.Replicas).Distinct().Order().ToArray();
        var groups = runs.GroupBy(x => (x.Proxy, x.Policy)).OrderBy(g => ProxyRank(g.Key.Proxy)).ThenBy(g => g.Key.Policy, StringComparer.Ordinal)
            .Select(g => (Label: g.Key.Policy is "" or "-" ? $"{g.Key.Proxy} (round-robin)" : $"{g.Key.Proxy} / {g.Key.Policy}", Runs: g.ToList())).ToList();
        Format.Table(md, "proxy / policy", counts, n => $"{n} replica{(n == 1 ? "" : "s")}", [.. groups.Select(g => g.Label)], (label, n) =>
            groups.First(g => g.Label == label).Runs.Where(x => x.Replicas == n).ToList() is { Count: > 0 } cell
                ? $"{Format.N0(Median(cell, "wrk/rps/mean"))} rps, p95 {Format.Auto(Median(cell, "wrk/latency/95"))} ms" : Format.None);
    }

    private static void Sweep(StringBuilder md, List<ComparisonRun> runs, string outDir, bool png)
    {
        if (runs.Count == 0)
        {
            return;
        }
        md.Append("## Concurrency sweep (/json)\n\n");
        md.Append("A small JSON answer through each proxy at rising connection counts; each cell: requests/s, p90 / p95 latency. ")
          .Append("nginx-default is nginx with Debian's stock proxy settings (HTTP/1.0 to the downstream, no upstream keep-alive), ")
          .Append("nginx the tuned configuration.\n\n");
        var conns = runs.Select(x => x.Connections).Distinct().Order().ToArray();
        var proxies = runs.Select(x => x.Proxy).Distinct().OrderBy(ProxyRank).ToArray();
        List<ComparisonRun> Cell(string proxy, int c) => [.. runs.Where(x => x.Proxy == proxy && x.Connections == c)];
        Format.Table(md, "proxy", conns, c => $"{c} connections", proxies, (proxy, c) => Cell(proxy, c) is { Count: > 0 } cell
            ? $"{Format.N0(Median(cell, "wrk/rps/mean"))} rps, p90 {Format.Auto(Median(cell, "wrk/latency/90"))} / p95 {Format.Auto(Median(cell, "wrk/latency/95"))} ms"
            : Format.None);
        var series = proxies.Select(proxy => new Series(proxy,
            [.. conns.Select(c => Cell(proxy, c) is { Count: > 0 } cell ? Median(cell, "wrk/rps/mean") : null)], Charts.ColorOf(proxy))).ToList();
        if (png)
        {
            var chart = Charts.LineChart("Concurrency sweep", "requests/s against connections, /json", "connections", "requests/s",
                [.. conns.Select(c => c.ToString(Inv))], series, logY: false, yFloor: 0);
            Save(md, chart, outDir, "comparison-sweep.png", "requests/s against connections");
        }
    }

    private static void Ab(StringBuilder md, List<ComparisonRun> runs)
    {
        if (runs.Count == 0)
        {
            return;
        }
        md.Append("## ApacheBench, one 26 KB page\n\n");
        md.Append(CultureInfo.InvariantCulture, $"ab with {string.Join(", ", runs.Select(x => x.Connections).Distinct().Order())} concurrent clients, no keep-alive (ab's default): every request opens a connection.\n\n");
        md.Append("| target | requests/s | time per request (ms, mean) | p95 (ms) | failed requests | non-2xx |\n|---|---:|---:|---:|---:|---:|\n");
        foreach (var group in runs.GroupBy(x => x.Proxy).OrderBy(g => ProxyRank(g.Key)))
        {
            md.Append(CultureInfo.InvariantCulture,
                $"| {group.Key} | {Format.N0(Median(group, "ab/rps/mean"))} | {Format.Auto(Median(group, "ab/time-per-request/mean"))} | {Format.N0(Median(group, "ab/latency/95"))} | {Format.N0(Median(group, "ab/failed"))} | {Format.N0(Median(group, "ab/non2xx"))} |\n");
        }
        md.Append('\n');
    }

    private static readonly (string Name, string Header)[] RampColumns =
    [
        ("ramp/offered", "offered (req/s)"), ("ramp/sent", "sent (req/s)"), ("ramp/rps", "achieved 2xx (req/s)"),
        ("ramp/latency/50", "p50 (ms)"), ("ramp/latency/99", "p99 (ms)"), ("ramp/availability", "availability (%)"),
        ("ramp/cpu", "proxy CPU (% of a core)"), ("ramp/memory", "proxy memory (MB)"),
    ];

    // A step counts as saturated when under 95 % of its offered rate was achieved: h2load's rate control itself lands
    // a few percent off the offered rate on an unsaturated step (the 2026-11-23 trial: 5,861 of 6,000 at 40 % CPU).
    private const double SaturatedBelow = 0.95;

    private static void Ramp(StringBuilder md, List<ComparisonRun> runs, string outDir, bool png)
    {
        if (runs.Count == 0)
        {
            return;
        }
        md.Append("## Saturation ramp\n\n");
        md.Append("Open-loop h2load over HTTP/1.1 at rising offered rates, one step after the other; per step the rate really sent ")
          .Append("(an HTTP/1.1 connection carries one request at a time, so a saturated proxy holds requests back), the achieved rate ")
          .Append("of 2xx answers, p50/p99, availability (2xx / requests that ended) and the proxy's CPU and memory. The first round of ")
          .Append("each proxy is shown.\n\n");
        var ordered = runs.GroupBy(x => x.Proxy).OrderBy(g => ProxyRank(g.Key)).Select(g => g.OrderBy(x => x.Round).First()).ToList();
        foreach (var r in ordered)
        {
            md.Append(CultureInfo.InvariantCulture, $"### {r.Proxy} ({r.Connections} connections)\n\n|");
            foreach (var (_, header) in RampColumns)
            {
                md.Append(CultureInfo.InvariantCulture, $" {header} |");
            }
            md.Append("\n|").Append(string.Concat(Enumerable.Repeat("---:|", RampColumns.Length))).Append('\n');
            var steps = r.Series.TryGetValue("ramp/offered", out var offered) ? offered.Length : 0;
            for (var i = 0; i < steps; i++)
            {
                md.Append('|');
                foreach (var (name, _) in RampColumns)
                {
                    double? v = r.Series.TryGetValue(name, out var s) && i < s.Length ? s[i] : null;
                    md.Append(CultureInfo.InvariantCulture, $" {(name is "ramp/offered" or "ramp/sent" or "ramp/rps" ? Format.N0(v) : Format.Auto(v))} |");
                }
                md.Append('\n');
            }
            md.Append('\n');
        }
        md.Append("Saturation per proxy: the highest achieved rate, and the first offered rate whose achieved rate fell below ")
          .Append(CultureInfo.InvariantCulture, $"{SaturatedBelow * 100:F0} % of it (an open-loop HTTP/1.1 load holds requests back rather than failing them, so saturation shows here, not in the availability).\n\n")
          .Append("| proxy | highest achieved (req/s) | saturated from offered (req/s) |\n|---|---:|---:|\n");
        foreach (var r in ordered)
        {
            var offeredSteps = r.Series.TryGetValue("ramp/offered", out var o) ? o : [];
            var achieved = r.Series.TryGetValue("ramp/rps", out var a) ? a : [];
            var first = Enumerable.Range(0, Math.Min(offeredSteps.Length, achieved.Length))
                .Where(i => achieved[i] < offeredSteps[i] * SaturatedBelow).Select(i => (double?)offeredSteps[i]).FirstOrDefault();
            md.Append(CultureInfo.InvariantCulture,
                $"| {r.Proxy} | {Format.N0(achieved.Where(double.IsFinite).DefaultIfEmpty(double.NaN).Max())} | {(first is null ? "not within the ramp" : Format.N0(first))} |\n");
        }
        md.Append('\n');
        if (!png)
        {
            return;
        }
        var xs = ordered.SelectMany(r => r.Series.TryGetValue("ramp/offered", out var o) ? o : []).Where(double.IsFinite).Distinct().Order().ToArray();
        List<Series> Curves(string name) => [.. ordered.Select(r => new Series(r.Proxy, [.. xs.Select(x => At(r, name, x))], Charts.ColorOf(r.Proxy)))];
        var labels = xs.Select(x => x.ToString("N0", Inv)).ToArray();
        Save(md, Charts.LineChart("Saturation ramp: achieved rate", "2xx answers per second against the offered rate (h2load --h1 --rps)", "offered requests/s", "achieved requests/s",
            labels, Curves("ramp/rps"), logY: false, yFloor: 0), outDir, "comparison-ramp-achieved.png", "achieved rate against the offered rate");
        Save(md, Charts.LineChart("Saturation ramp: p99 latency", "against the offered rate (h2load --h1 --rps)", "offered requests/s", "p99 (ms, log)",
            labels, Curves("ramp/latency/99"), logY: true), outDir, "comparison-ramp-p99.png", "p99 latency against the offered rate");
        Save(md, Charts.LineChart("Saturation ramp: availability", "2xx answers / requests that ended, against the offered rate", "offered requests/s", "availability (%)",
            labels, Curves("ramp/availability"), logY: false, yFloor: 0, referenceY: 100), outDir, "comparison-ramp-availability.png", "availability against the offered rate");
    }

    /// <summary>The value of a per-step series at the step whose offered rate is <paramref name="offered"/>.</summary>
    private static double? At(ComparisonRun r, string name, double offered)
    {
        if (!r.Series.TryGetValue("ramp/offered", out var o) || !r.Series.TryGetValue(name, out var s))
        {
            return null;
        }
        var i = Array.IndexOf(o, offered);
        return i >= 0 && i < s.Length && double.IsFinite(s[i]) ? s[i] : null;
    }

    private static void Save(StringBuilder md, Chart chart, string outDir, string file, string alt)
    {
        chart.SavePng(Path.Combine(outDir, file));
        md.Append(CultureInfo.InvariantCulture, $"![{alt}]({file})\n\n");
    }
}
