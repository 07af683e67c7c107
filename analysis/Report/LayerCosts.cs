using System.Globalization;
using System.Text;

namespace LLRP.Analysis;

/// <summary>
/// What each layer of a .NET reverse proxy costs per request, from the variants that add one layer at a time: LLRP with
/// LLHttp (Kestrel transport + LLRP's request side + LLHttp), with HttpClient instead of LLHttp, with an HttpContext
/// on top, with YARP's IHttpForwarder, and full YARP. Each layer is the difference between two variants measured at
/// the same point, paired round by round (the rounds are interleaved, so drift of the machine cancels in a pair).
/// </summary>
internal sealed class LayerCosts(Analysis a, StringBuilder md)
{
    private sealed record Layer(string Name, string With, string? Without);

    private static readonly Layer[] Layers =
    [
        new("Kestrel transport + request side + LLHttp", "llrp-llhttp", null),
        new("HttpClient instead of LLHttp", "llrp-httpclient", "llrp-llhttp"),
        new("HttpContext", "llrp-httpclientwithcontext", "llrp-httpclient"),
        new("HttpForwarder (YARP's IHttpForwarder)", "llrp-yarp", "llrp-httpclientwithcontext"),
        new("the rest of full YARP (routing, middleware, config, transforms)", Analysis.Yarp, "llrp-yarp"),
    ];

    /// <summary>Median and min–max of a figure (or of its round-paired differences).</summary>
    private sealed record Cost(double Median, double Min, double Max, int Pairs)
    {
        /// <summary>A difference whose round-paired values change sign is not told apart from noise.</summary>
        public bool InsideNoise => Min <= 0 && Max >= 0;
    }

    public void Write(Point? headline)
    {
        var points = a.Points.Where(p => p.Profile.Length == 0 && p.AppEnv.Length == 0 && a.Get(p, "llrp-llhttp") is not null).ToList();
        if (headline is { } h && points.Remove(h))
        {
            points.Insert(0, h);
        }
        if (points.Count == 0)
        {
            return;
        }
        md.AppendLine("## What each layer costs").AppendLine();
        md.AppendLine("Per request, over the measured window; each layer = the variant with it − the variant without it, paired by round " +
            "(median of the paired differences, min–max over the pairs). A difference whose pairs change sign is **inside noise**: this sitting cannot tell it from zero. " +
            "Allocated B/request is LLRP's own figure; full YARP reports none.").AppendLine();
        foreach (var p in points)
        {
            md.AppendLine(CultureInfo.InvariantCulture, $"### {p.Label}").AppendLine();
            md.AppendLine("| layer | variant − variant | CPU µs/request | allocated B/request |").AppendLine("|---|---|--:|--:|");
            var rows = new List<(Layer Layer, Cost? Cpu, Cost? Alloc)>();
            foreach (var layer in Layers)
            {
                var cpu = Of(p, layer, f => f.CpuUsPerRequest);
                var alloc = Of(p, layer, f => f.AllocatedPerRequest);
                rows.Add((layer, cpu, alloc));
                md.AppendLine(CultureInfo.InvariantCulture,
                    $"| {layer.Name} | {layer.With}{(layer.Without is null ? "" : " − " + layer.Without)} | {Cell(cpu, 1)} | {Cell(alloc, 0)} |");
            }
            var total = Of(p, new Layer("", Analysis.Yarp, null), f => f.CpuUsPerRequest);
            md.AppendLine(CultureInfo.InvariantCulture, $"| full YARP in all | yarp | {Cell(total, 1)} | - |").AppendLine();
            Paragraph(p, rows, total);
        }
    }

    /// <summary>The README's paragraph for this point, filled in from the table (a template: edit the reading, keep the numbers).</summary>
    private void Paragraph(Point p, List<(Layer Layer, Cost? Cpu, Cost? Alloc)> rows, Cost? total)
    {
        if (rows[0].Cpu is null)
        {
            return;
        }
        string Part(Layer layer, Cost? cpu, Cost? alloc) => cpu is null ? $"{layer.Name}: not measured"
            : string.Create(CultureInfo.InvariantCulture, $"{layer.Name} {(layer.Without is null ? "" : cpu.Median < 0 ? "saves " : "adds ")}{Math.Abs(cpu.Median):F1} µs") +
              (alloc is null ? "" : string.Create(CultureInfo.InvariantCulture, $" and {(layer.Without is not null && alloc.Median < 0 ? "allocates " + Math.Abs(alloc.Median).ToString("F0", CultureInfo.InvariantCulture) + " B less" : alloc.Median.ToString("F0", CultureInfo.InvariantCulture) + " B")}")) +
              (cpu.InsideNoise ? " (inside noise)" : "");
        var sb = new StringBuilder();
        sb.Append(CultureInfo.InvariantCulture, $"> Per request at {p.Label.Replace("`", "", StringComparison.Ordinal)}, CPU and allocation: ");
        sb.Append(string.Join("; ", rows.Select(r => Part(r.Layer, r.Cpu, r.Alloc))));
        if (total is not null)
        {
            sb.Append(CultureInfo.InvariantCulture, $". Full YARP costs {total.Median:F1} µs in all");
            if (rows[0].Cpu is { } floor && total.Median > 0)
            {
                sb.Append(CultureInfo.InvariantCulture, $", of which {floor.Median / total.Median * 100:F0} % is the floor LLRP with LLHttp keeps");
            }
        }
        sb.Append('.');
        md.AppendLine("README paragraph (template):").AppendLine().AppendLine(sb.ToString()).AppendLine();
    }

    private Cost? Of(Point p, Layer layer, Func<ProcessFigures, double?> figure)
    {
        if (a.Get(p, layer.With) is not { } with)
        {
            return null;
        }
        var withByRound = ByRound(with, figure);
        if (layer.Without is null)
        {
            return Summarise(withByRound.Values.ToList());
        }
        if (a.Get(p, layer.Without) is not { } without)
        {
            return null;
        }
        var withoutByRound = ByRound(without, figure);
        var pairs = withByRound.Keys.Intersect(withoutByRound.Keys).Select(k => withByRound[k] - withoutByRound[k]).ToList();
        return Summarise(pairs);
    }

    private static Dictionary<string, double> ByRound(ScenarioSummary s, Func<ProcessFigures, double?> figure)
    {
        var values = new Dictionary<string, double>(StringComparer.Ordinal);
        foreach (var run in s.Runs)
        {
            if (run.Proxy is { } proxy && figure(proxy) is { } v && double.IsFinite(v))
            {
                values[run.Round] = v;
            }
        }
        return values;
    }

    private static Cost? Summarise(List<double> values) =>
        values.Count == 0 ? null : new Cost(Stats.Median(values.Select(v => (double?)v))!.Value, values.Min(), values.Max(), values.Count);

    private static string Cell(Cost? c, int decimals)
    {
        if (c is null)
        {
            return Format.None;
        }
        var text = $"{Format.F(c.Median, decimals)} ({Format.F(c.Min, decimals)} to {Format.F(c.Max, decimals)})";
        return c.Pairs < 2 ? text + ", 1 round" : c.InsideNoise ? text + " **inside noise**" : text;
    }
}
