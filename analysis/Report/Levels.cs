using System.Globalization;
using System.Text;
using System.Text.Json;

namespace LLRP.Analysis;

/// <summary>The report of a study over levels (crank/run-local.sh fixed-rate: <see cref="FixedRate"/>; stepped:
/// <see cref="Stepped"/>): each level's runs under DIR/&lt;prefix&gt;&lt;level&gt;/, the study's plan in
/// DIR/&lt;name&gt;.json, medians over the successful rounds, a table and a chart per figure against the level.</summary>
internal static class Levels
{
    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;

    /// <summary>Report --fixed-rate/--stepped DIR [--out DIR] [--no-png]: the study's runs from the results folder
    /// (<paramref name="read"/>), &lt;name&gt;.md built by <paramref name="build"/> (runs, the plan, out folder, PNGs)
    /// in the out folder. Exit status as Program's.</summary>
    public static int Run(ReportCommand command, string study, string missing, Func<string, List<LevelRun>> read,
        Func<List<LevelRun>, JsonElement?, string, bool, string> build) => ReportCommand.Run(() =>
        {
            var runs = read(command.ResultsDir);
            if (runs.Count == 0)
            {
                throw new ReportException($"{command.ResultsDir}: no {study} results ({missing})");
            }
            var name = study.Replace("-", "", StringComparison.Ordinal);
            Directory.CreateDirectory(command.OutDir);
            var path = Path.Combine(command.OutDir, name + ".md");
            File.WriteAllText(path, build(runs, ResultsReader.ReadPlan(command.ResultsDir, name + ".json"), command.OutDir, command.Png));
            Console.WriteLine($"report: {runs.Count} {study} run(s) -> {path}");
        });

    /// <summary>The median over the successful runs of one figure, or null.</summary>
    public static double? Median(IEnumerable<LevelRun> runs, string figure) =>
        Stats.Median(runs.Where(r => !r.Failed).Select(r => r.Figures), figure);

    /// <summary>A plan's value as text (a string as it is, anything else as JSON), or null when the plan lacks it.</summary>
    public static string? Prop(JsonElement? plan, string name) =>
        plan is { } p && p.TryGetProperty(name, out var v) ? (v.ValueKind == JsonValueKind.String ? v.GetString() ?? "" : v.GetRawText()) : null;

    /// <summary>The scenarios of <paramref name="runs"/>: those of <paramref name="order"/> first, then the rest by name.</summary>
    public static List<string> Scenarios(IReadOnlyList<LevelRun> runs, string[] order) =>
        [.. order.Where(s => runs.Any(r => r.Scenario == s)), .. runs.Select(r => r.Scenario).Distinct().Where(s => !order.Contains(s)).Order(StringComparer.Ordinal)];

    /// <summary>A chart of each scenario's medians of <paramref name="figure"/> against the level, saved as
    /// <paramref name="file"/> and linked; on a log scale when <paramref name="mayLog"/> and the values span more than a
    /// decade (within one decade it would show a single tick). <paramref name="yLabel"/> is given whether it is log.</summary>
    public static void Chart(StringBuilder md, string outDir, string file, string alt, IReadOnlyList<LevelRun> runs, IReadOnlyList<int> levels,
        IReadOnlyList<string> xs, IReadOnlyList<string> scenarios, string figure, bool mayLog, string title, string subtitle, string xLabel,
        Func<bool, string> yLabel, Func<bool, double?>? yFloor = null, double? referenceY = null)
    {
        var series = scenarios.Select(s => new Series(s,
            levels.Select(l => Median(runs.Where(r => r.Scenario == s && r.Level == l), figure)).ToList(), Charts.ColorOf(s))).ToList();
        var values = series.SelectMany(x => x.Values).OfType<double>().Where(v => v > 0).ToList();
        var logY = mayLog && values.Count > 0 && values.Max() / values.Min() > 10;
        Charts.LineChart(title, subtitle, xLabel, yLabel(logY), xs, series, logY, yFloor?.Invoke(logY), referenceY).SavePng(Path.Combine(outDir, file));
        md.Append(Inv, $"![{alt}]({file})\n\n");
    }
}
