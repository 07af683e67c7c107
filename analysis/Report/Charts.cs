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
        // The peers run only when named: Tableau 20's light shades (none of Spare's), so that no other scenario shares them.
        ["caddy"] = "#98df8a",
        ["h2o"] = "#ffbb78",
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

    /// <summary>
    /// Horizontal bars (median) with min–max whiskers, one row per item, the value (and annotation) written beside each
    /// bar: the item names sit on the left axis, where any number of them stays readable at its full length.
    /// </summary>
    public static Chart BarChart(string title, string subtitle, string xLabel, IReadOnlyList<Bar> bars, Func<double, string> valueText)
    {
        const int width = 900;
        var plot = new Plot();
        Header(plot, title, subtitle, width);
        plot.XLabel(xLabel);
        var max = 0.0;
        // Row 0 at the top: the first item (direct) first, as in the tables.
        double Row(int i) => bars.Count - 1 - i;
        for (var i = 0; i < bars.Count; i++)
        {
            var b = bars[i];
            var y = Row(i);
            if (b.Value is not { } v)
            {
                var none = plot.Add.Text("no data", 0, y);
                none.LabelFontColor = Colors.Gray;
                none.LabelAlignment = Alignment.MiddleLeft;
                continue;
            }
            plot.Add.Bar(new ScottPlot.Bar { Position = y, Value = v, FillColor = Color.FromHex(b.Color), LineWidth = 0, Size = 0.6, Orientation = Orientation.Horizontal });
            var end = v;
            if (b.Low is { } lo && b.High is { } hi && hi > lo)
            {
                // Whiskers: min–max over rounds.
                var stem = plot.Add.Line(lo, y, hi, y);
                stem.Color = Colors.Black;
                stem.LineWidth = 1.5f;
                foreach (var x in new[] { lo, hi })
                {
                    var cap = plot.Add.Line(x, y - 0.15, x, y + 0.15);
                    cap.Color = Colors.Black;
                    cap.LineWidth = 1.5f;
                }
                end = Math.Max(end, hi);
            }
            var text = " " + valueText(v) + (b.Annotation is { } note ? "  " + note : "");
            var label = plot.Add.Text(text, end, y);
            label.LabelAlignment = Alignment.MiddleLeft;
            label.LabelFontSize = 12;
            label.LabelFontColor = Colors.Black;
            max = Math.Max(max, end);
        }
        plot.Axes.Left.SetTicks(Enumerable.Range(0, bars.Count).Select(i => Row(i)).ToArray(), bars.Select(b => b.Label).ToArray());
        plot.Axes.Left.MajorTickStyle.Length = 0;
        plot.Axes.Left.TickLabelStyle.FontSize = 13;
        // Room on the right for the longest value text beside the longest bar.
        plot.Axes.SetLimits(0, max <= 0 ? 1 : max * 1.35, -0.6, bars.Count - 0.4);
        plot.Grid.YAxisStyle.MajorLineStyle.Width = 0;
        // Room beyond the frame for half of the last tick label of the value axis.
        plot.Axes.Right.MinimumSize = 30;
        return new Chart(plot, width, Math.Max(320, 44 * bars.Count + 170));
    }

    /// <summary>One line with markers per series over categorical x values; log or linear y.</summary>
    public static Chart LineChart(string title, string subtitle, string xLabel, string yLabel, IReadOnlyList<string> xs,
        IReadOnlyList<Series> series, bool logY, double? yFloor = null, double? referenceY = null, string? referenceLabel = null)
    {
        var plot = new Plot();
        var width = Math.Max(760, 130 * xs.Count + 300);
        Header(plot, title, subtitle, width);
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
                // In the legend: a label on the axis would cover the tick labels.
                line.LegendText = referenceLabel;
            }
            all.Add(r);
        }
        plot.Axes.Bottom.SetTicks(Enumerable.Range(0, xs.Count).Select(i => (double)i).ToArray(), xs.ToArray());
        if (all.Count > 0)
        {
            var lo = logY ? Y(all.Min() * 0.8) : yFloor ?? Math.Min(0, all.Min());
            var hi = logY ? Y(all.Max() * 1.25) : all.Max() * 1.1;
            hi = hi <= lo ? lo + 1 : hi;
            plot.Axes.SetLimits(-0.3, Math.Max(0.3, xs.Count - 0.7), lo, hi);
            if (logY)
            {
                plot.Axes.Left.TickGenerator = LogTicks(lo, hi);
            }
        }
        plot.ShowLegend(Edge.Right);
        return new Chart(plot, width, 480);
    }

    /// <summary>
    /// Ticks for a log10 axis between <paramref name="lo"/> and <paramref name="hi"/> (both log10 values): 1, 2 and 5 of
    /// every decade labelled with the value itself, the other digits as minor ticks (all labelled in a range too narrow
    /// for four of those), so that a range within one or two decades still has several labels.
    /// </summary>
    internal static ScottPlot.TickGenerators.NumericManual LogTicks(double lo, double hi)
    {
        var values = new List<(double At, int Digit, double Value)>();
        for (var decade = (int)Math.Floor(lo); decade <= (int)Math.Ceiling(hi); decade++)
        {
            for (var digit = 1; digit <= 9; digit++)
            {
                var value = digit * Math.Pow(10, decade);
                var at = Math.Log10(value);
                if (at >= lo && at <= hi)
                {
                    values.Add((at, digit, value));
                }
            }
        }
        // Within a narrow range (under four of 1, 2 and 5) every digit is labelled.
        var labelAll = values.Count(v => v.Digit is 1 or 2 or 5) < 4;
        var ticks = new ScottPlot.TickGenerators.NumericManual();
        foreach (var (at, digit, value) in values)
        {
            if (labelAll || digit is 1 or 2 or 5)
            {
                ticks.AddMajor(at, value.ToString(value >= 1 ? "N0" : "0.###", CultureInfo.InvariantCulture));
            }
            else
            {
                ticks.AddMinor(at);
            }
        }
        return ticks;
    }

    /// <summary>
    /// Title over a subtitle wrapped at word boundaries, so that no line is cut: the title is centred over the data
    /// area, which the axis labels and the legend leave about 300 px narrower than the chart (9 px a character).
    /// </summary>
    private static void Header(Plot plot, string title, string subtitle, int width) =>
        plot.Title(title + "\n" + Wrap(subtitle, Math.Max(30, (width - 300) / 9)), size: 15);

    /// <summary>Breaks <paramref name="text"/> into lines of at most <paramref name="max"/> characters at spaces.</summary>
    internal static string Wrap(string text, int max)
    {
        var lines = new List<string>();
        var line = "";
        foreach (var word in text.Split(' '))
        {
            if (line.Length > 0 && line.Length + 1 + word.Length > max)
            {
                lines.Add(line);
                line = word;
            }
            else
            {
                line = line.Length == 0 ? word : line + " " + word;
            }
        }
        lines.Add(line);
        return string.Join("\n", lines);
    }
}
