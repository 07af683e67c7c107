using System.Globalization;
using ScottPlot;

namespace LLRP.Analysis;

internal sealed record Bar(string Label, double? Value, double? Low, double? High, string Color, string? Annotation = null);

internal sealed record Series(string Name, IReadOnlyList<double?> Values, string Color);

/// <summary>A chart ready to be saved: the plot and its size in pixels.</summary>
internal sealed record Chart(Plot Plot, int Width, int Height)
{
    public void SavePng(string path) => Plot.SavePng(path, Width, Height);
}

/// <summary>The report's two chart types, drawn with ScottPlot.</summary>
internal static class Charts
{
    // Tableau 10, fixed per scenario so that a scenario has one color in every chart.
    private static readonly Dictionary<string, string> ScenarioColors = new(StringComparer.Ordinal)
    {
        ["direct"] = "#7f7f7f",
        ["nginx"] = "#2ca02c",
        ["haproxy"] = "#17becf",
        ["yarp"] = "#9467bd",
        ["llrp-llhttp"] = "#d62728",
        ["llrp-httpclient"] = "#1f77b4",
        ["llrp-httpclientwithcontext"] = "#ff7f0e",
        ["llrp-yarp"] = "#8c564b",
        ["httpclientproxy"] = "#e377c2",
    };

    private static readonly string[] Spare = ["#bcbd22", "#393b79", "#637939", "#843c39", "#7b4173"];

    public static string ColorOf(string scenario)
    {
        if (ScenarioColors.TryGetValue(scenario, out var c))
        {
            return c;
        }
        var h = 0;
        foreach (var ch in scenario)
        {
            h = unchecked((h * 31) + ch);
        }
        return Spare[(int)((uint)h % Spare.Length)];
    }

    /// <summary>Vertical bars (median) with min–max whiskers and the value (and annotation) written above each bar.</summary>
    public static Chart BarChart(string title, string subtitle, string yLabel, IReadOnlyList<Bar> bars, Func<double, string> valueText)
    {
        var plot = new Plot();
        Header(plot, title, subtitle);
        plot.YLabel(yLabel);
        var max = 0.0;
        for (var i = 0; i < bars.Count; i++)
        {
            var b = bars[i];
            if (b.Value is not { } v)
            {
                var none = plot.Add.Text("no data", i, 0);
                none.LabelFontColor = Colors.Gray;
                none.LabelAlignment = Alignment.LowerCenter;
                continue;
            }
            var bar = plot.Add.Bar(new ScottPlot.Bar { Position = i, Value = v, FillColor = Color.FromHex(b.Color), LineWidth = 0, Size = 0.6 });
            _ = bar;
            var top = v;
            if (b.Low is { } lo && b.High is { } hi && hi > lo)
            {
                // Whiskers: min–max over rounds.
                var stem = plot.Add.Line(i, lo, i, hi);
                stem.Color = Colors.Black;
                stem.LineWidth = 1.5f;
                foreach (var y in new[] { lo, hi })
                {
                    var cap = plot.Add.Line(i - 0.12, y, i + 0.12, y);
                    cap.Color = Colors.Black;
                    cap.LineWidth = 1.5f;
                }
                top = Math.Max(top, hi);
            }
            var text = valueText(v) + (b.Annotation is { } note ? "\n" + note : "");
            var label = plot.Add.Text(text, i, top);
            label.LabelAlignment = Alignment.LowerCenter;
            label.LabelFontSize = 12;
            label.LabelFontColor = Colors.Black;
            max = Math.Max(max, top);
        }
        plot.Axes.Bottom.SetTicks(Enumerable.Range(0, bars.Count).Select(i => (double)i).ToArray(), bars.Select(b => b.Label).ToArray());
        plot.Axes.Bottom.TickLabelStyle.Rotation = bars.Count > 5 ? -30 : 0;
        plot.Axes.Bottom.TickLabelStyle.Alignment = bars.Count > 5 ? Alignment.MiddleRight : Alignment.UpperCenter;
        plot.Axes.Bottom.MajorTickStyle.Length = 0;
        plot.Axes.SetLimits(-0.6, bars.Count - 0.4, 0, max <= 0 ? 1 : max * 1.2);
        plot.Grid.XAxisStyle.MajorLineStyle.Width = 0;
        var width = Math.Max(640, 110 * bars.Count + 160);
        return new Chart(plot, width, bars.Count > 5 ? 560 : 480);
    }

    /// <summary>One line with markers per series over categorical x values; log or linear y.</summary>
    public static Chart LineChart(string title, string subtitle, string xLabel, string yLabel, IReadOnlyList<string> xs,
        IReadOnlyList<Series> series, bool logY, double? yFloor = null, double? referenceY = null, string? referenceLabel = null)
    {
        var plot = new Plot();
        Header(plot, title, subtitle);
        plot.XLabel(xLabel);
        plot.YLabel(yLabel);
        double Y(double v) => logY ? Math.Log10(v) : v;
        var all = new List<double>();
        foreach (var s in series)
        {
            // Lines break where a value is missing: one scatter per unbroken run of values.
            var runX = new List<double>();
            var runY = new List<double>();
            var first = true;
            void Flush()
            {
                if (runX.Count == 0)
                {
                    return;
                }
                var sc = plot.Add.Scatter(runX.ToArray(), runY.ToArray(), Color.FromHex(s.Color));
                sc.LineWidth = 2.5f;
                sc.MarkerSize = 8;
                if (first)
                {
                    sc.LegendText = s.Name;
                    first = false;
                }
                runX.Clear();
                runY.Clear();
            }
            for (var i = 0; i < s.Values.Count; i++)
            {
                if (s.Values[i] is { } v && double.IsFinite(v) && (!logY || v > 0))
                {
                    runX.Add(i);
                    runY.Add(Y(v));
                    all.Add(v);
                }
                else
                {
                    Flush();
                }
            }
            Flush();
        }
        if (referenceY is { } r)
        {
            var line = plot.Add.HorizontalLine(Y(r));
            line.Color = Colors.Gray;
            line.LinePattern = LinePattern.Dashed;
            if (referenceLabel is not null)
            {
                line.LabelText = referenceLabel;
            }
            all.Add(r);
        }
        plot.Axes.Bottom.SetTicks(Enumerable.Range(0, xs.Count).Select(i => (double)i).ToArray(), xs.ToArray());
        if (logY)
        {
            // Decades as major ticks, labelled with the value itself.
            plot.Axes.Left.TickGenerator = new ScottPlot.TickGenerators.NumericAutomatic
            {
                MinorTickGenerator = new ScottPlot.TickGenerators.LogMinorTickGenerator(),
                IntegerTicksOnly = true,
                LabelFormatter = y => Math.Pow(10, y).ToString(Math.Pow(10, y) >= 1 ? "N0" : "0.###", CultureInfo.InvariantCulture),
            };
        }
        if (all.Count > 0)
        {
            var lo = logY ? Y(all.Min() * 0.8) : yFloor ?? Math.Min(0, all.Min());
            var hi = logY ? Y(all.Max() * 1.25) : all.Max() * 1.1;
            plot.Axes.SetLimits(-0.3, Math.Max(0.3, xs.Count - 0.7), lo, hi <= lo ? lo + 1 : hi);
        }
        plot.ShowLegend(Edge.Right);
        return new Chart(plot, Math.Max(760, 130 * xs.Count + 300), 480);
    }

    private static void Header(Plot plot, string title, string subtitle) =>
        plot.Title(title + "\n" + subtitle, size: 15);
}
