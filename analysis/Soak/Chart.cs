using ScottPlot;
using SkiaSharp;

namespace LLRP.Soak;

/// <summary>The soak's chart: four panels over time (RSS; descriptors and threads; responses per second; CPU µs per
/// response), origin restarts marked in each, drawn with ScottPlot one above the other into one PNG.</summary>
internal static class Chart
{
    private const int Width = 1400;
    private const int PanelHeight = 300;

    public static void Save(string path, IReadOnlyList<Sample> samples, IReadOnlyList<double> restarts, string title)
    {
        var t = samples.Select(s => s.Seconds).ToArray();
        var panels = new[]
        {
            Panel($"{title}: proxy RSS (MiB)", "MiB", restarts, ("RSS", t, samples.Select(s => s.RssKiB / 1024.0).ToArray(), "#1f77b4")),
            Panel("descriptors and threads of the proxy", "count", restarts,
                ("descriptors", t, samples.Select(s => (double)s.Descriptors).ToArray(), "#2ca02c"),
                ("threads", t, samples.Select(s => (double)s.Threads).ToArray(), "#9467bd")),
            Panel("responses per second", "per second", restarts,
                ("200, body checked", t, samples.Select(s => (double)s.Ok).ToArray(), "#1f77b4"),
                ("anything else", t, samples.Select(s => (double)s.NotOk).ToArray(), "#d62728")),
            Panel("proxy CPU µs per response (each second)", "µs", restarts,
                ("CPU µs / response", t, samples.Select(s => s.CpuMicrosPerResponse).ToArray(), "#ff7f0e")),
        };
        foreach (var panel in panels)
        {
            panel.XLabel("seconds since the soak started (dashed: origin restarts)");
        }

        using var surface = SKSurface.Create(new SKImageInfo(Width, PanelHeight * panels.Length));
        var canvas = surface.Canvas;
        canvas.Clear(SKColors.White);
        for (var i = 0; i < panels.Length; i++)
        {
            // Each panel on a surface of its own: a plot paints its background over the whole canvas it is given.
            using var panelSurface = SKSurface.Create(new SKImageInfo(Width, PanelHeight));
            panels[i].Render(panelSurface.Canvas, Width, PanelHeight);
            using var panelImage = panelSurface.Snapshot();
            canvas.DrawImage(panelImage, 0, i * PanelHeight);
        }
        using var image = surface.Snapshot();
        using var png = image.Encode(SKEncodedImageFormat.Png, 100);
        using var file = File.Create(path);
        png.SaveTo(file);
    }

    private static Plot Panel(string title, string unit, IReadOnlyList<double> restarts, params (string Name, double[] X, double[] Y, string Color)[] series)
    {
        var plot = new Plot();
        plot.Title(title, 14);
        plot.YLabel(unit);
        foreach (var (name, x, y, color) in series)
        {
            // A second without responses has no CPU per response (NaN): left out.
            var kept = Enumerable.Range(0, x.Length).Where(i => !double.IsNaN(y[i])).ToArray();
            var scatter = plot.Add.Scatter(kept.Select(i => x[i]).ToArray(), kept.Select(i => y[i]).ToArray(), Color.FromHex(color));
            scatter.MarkerSize = 0;
            scatter.LineWidth = 1.5f;
            scatter.LegendText = name;
        }
        foreach (var at in restarts)
        {
            var line = plot.Add.VerticalLine(at);
            line.Color = Colors.Gray;
            line.LineWidth = 1;
            line.LinePattern = LinePattern.Dashed;
        }
        if (series.Length > 1)
        {
            plot.ShowLegend(Edge.Right);
        }
        var max = series.SelectMany(s => s.Y).Where(v => !double.IsNaN(v)).DefaultIfEmpty(1).Max();
        // From zero, so a flat line looks flat and a growing one grows.
        plot.Axes.SetLimitsY(0, max <= 0 ? 1 : max * 1.15);
        return plot;
    }
}
