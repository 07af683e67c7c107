namespace LLRP.Analysis;

internal sealed record Bar(string Label, double? Value, double? Low, double? High, string Color, string? Annotation = null);

internal sealed record Series(string Name, IReadOnlyList<double?> Values, string Color);

/// <summary>The report's two chart types, written as SVG.</summary>
internal static class Charts
{
    private const string Grid = "#e3e3e3";
    private const string Axis = "#444444";

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

    /// <summary>Vertical bars (median) with min–max whiskers and the value written above each bar.</summary>
    public static string BarChart(string title, string subtitle, string yLabel, IReadOnlyList<Bar> bars, Func<double, string> valueText)
    {
        var longest = bars.Count == 0 ? 0 : bars.Max(b => Svg.TextWidth(b.Label, 12));
        var band = Math.Max(70, Math.Min(140, 760.0 / Math.Max(1, bars.Count)));
        var rotate = longest > band - 8;
        const double left = 90, top = 70, right = 30;
        var bottom = rotate ? 30 + (longest * 0.6) : 60;
        var width = (int)(left + right + (band * bars.Count));
        width = Math.Max(width, 560);
        band = (width - left - right) / Math.Max(1, bars.Count);
        var height = (int)(top + 330 + bottom);
        var svg = new Svg(width, height);
        Header(svg, title, subtitle);

        var plotBottom = height - bottom;
        var max = bars.Select(b => b.High ?? b.Value ?? 0).DefaultIfEmpty(1).Max();
        var y = new LinearScale(0, max <= 0 ? 1 : max * 1.12, plotBottom, top);
        YAxis(svg, y, left, width - right, yLabel, top, plotBottom);

        for (var i = 0; i < bars.Count; i++)
        {
            var b = bars[i];
            var cx = left + (band * (i + 0.5));
            var barWidth = band * 0.6;
            if (b.Value is { } v)
            {
                svg.Rect(cx - (barWidth / 2), y.Map(v), barWidth, plotBottom - y.Map(v), b.Color);
                if (b.Low is { } lo && b.High is { } hi && hi > lo)
                {
                    svg.Line(cx, y.Map(lo), cx, y.Map(hi), "#111111", 1.5);
                    svg.Line(cx - 8, y.Map(lo), cx + 8, y.Map(lo), "#111111", 1.5);
                    svg.Line(cx - 8, y.Map(hi), cx + 8, y.Map(hi), "#111111", 1.5);
                }
                var labelY = Math.Min(y.Map(v), b.High is { } h ? y.Map(h) : double.MaxValue) - 6;
                svg.Text(cx, labelY, valueText(v), 11, color: "#111111");
                if (b.Annotation is { } note)
                {
                    svg.Text(cx, labelY - 13, note, 10, color: "#555555");
                }
            }
            else
            {
                svg.Text(cx, plotBottom - 6, "no data", 10, color: "#888888");
            }
            if (rotate)
            {
                svg.Text(cx + 4, plotBottom + 14, b.Label, 12, anchor: "end", rotate: -35);
            }
            else
            {
                svg.Text(cx, plotBottom + 18, b.Label, 12);
            }
        }
        svg.Line(left, plotBottom, width - right, plotBottom, Axis);
        return svg.ToString();
    }

    /// <summary>One line with markers per series over categorical x values; log or linear y.</summary>
    public static string LineChart(string title, string subtitle, string xLabel, string yLabel, IReadOnlyList<string> xs,
        IReadOnlyList<Series> series, bool logY, double? yFloor = null, double? referenceY = null, string? referenceLabel = null)
    {
        var legendWidth = Math.Max(120, series.Count == 0 ? 0 : series.Max(s => Svg.TextWidth(s.Name, 12)) + 40);
        const double left = 90, top = 70, bottom = 70;
        var width = (int)Math.Max(720, left + legendWidth + 30 + (110 * xs.Count));
        var height = 480;
        var right = legendWidth + 20;
        var svg = new Svg(width, height);
        Header(svg, title, subtitle);
        var plotBottom = height - bottom;
        var plotRight = width - right;

        var values = series.SelectMany(s => s.Values).OfType<double>().Where(v => double.IsFinite(v) && (!logY || v > 0)).ToList();
        if (referenceY is { } r)
        {
            values.Add(r);
        }
        IScale y;
        if (values.Count == 0)
        {
            y = new LinearScale(0, 1, plotBottom, top);
        }
        else if (logY)
        {
            y = new LogScale(values.Min() * 0.8, values.Max() * 1.25, plotBottom, top);
        }
        else
        {
            y = new LinearScale(yFloor ?? Math.Min(0, values.Min()), values.Max() * 1.08, plotBottom, top);
        }
        YAxis(svg, y, left, plotRight, yLabel, top, plotBottom);

        var step = (plotRight - left) / Math.Max(1, xs.Count);
        double X(int i) => left + (step * (i + 0.5));
        for (var i = 0; i < xs.Count; i++)
        {
            svg.Line(X(i), plotBottom, X(i), plotBottom + 5, Axis);
            svg.Text(X(i), plotBottom + 20, xs[i], 12);
        }
        svg.Text((left + plotRight) / 2, height - 22, xLabel, 13);
        svg.Line(left, plotBottom, plotRight, plotBottom, Axis);

        if (referenceY is { } refY)
        {
            svg.Line(left, y.Map(refY), plotRight, y.Map(refY), "#888888", 1, "6,4");
            if (referenceLabel is not null)
            {
                svg.Text(plotRight - 4, y.Map(refY) - 5, referenceLabel, 11, anchor: "end", color: "#666666");
            }
        }

        foreach (var s in series)
        {
            // Lines break where a value is missing.
            var run = new List<(double, double)>();
            for (var i = 0; i <= s.Values.Count; i++)
            {
                if (i < s.Values.Count && s.Values[i] is { } v && double.IsFinite(v) && (!logY || v > 0))
                {
                    run.Add((X(i), y.Map(v)));
                    continue;
                }
                if (run.Count > 1)
                {
                    svg.Polyline(run, s.Color);
                }
                run.Clear();
            }
            for (var i = 0; i < s.Values.Count; i++)
            {
                if (s.Values[i] is { } v && double.IsFinite(v) && (!logY || v > 0))
                {
                    svg.Circle(X(i), y.Map(v), 4.5, s.Color);
                }
            }
        }

        var ly = top + 8;
        foreach (var s in series)
        {
            svg.Line(plotRight + 18, ly, plotRight + 42, ly, s.Color, 3);
            svg.Circle(plotRight + 30, ly, 4, s.Color);
            svg.Text(plotRight + 50, ly + 4, s.Name, 12, anchor: "start");
            ly += 22;
        }
        return svg.ToString();
    }

    private static void Header(Svg svg, string title, string subtitle)
    {
        svg.Text(svg.Width / 2.0, 28, title, 17, bold: true);
        svg.Text(svg.Width / 2.0, 50, subtitle, 12, color: "#555555");
    }

    private static void YAxis(Svg svg, IScale y, double left, double right, string label, double top, double bottom)
    {
        foreach (var t in y.Ticks)
        {
            var py = y.Map(t);
            if (py < top - 1 || py > bottom + 1)
            {
                continue;
            }
            svg.Line(left, py, right, py, Grid);
            svg.Text(left - 8, py + 4, y.Label(t), 11, anchor: "end");
        }
        svg.Line(left, top, left, bottom, Axis);
        svg.Text(22, (top + bottom) / 2, label, 13, rotate: -90);
    }
}
