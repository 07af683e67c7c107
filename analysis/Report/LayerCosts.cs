using System.Globalization;
using System.Text;

namespace LLRP.Analysis;

/// <summary>
/// What each layer of a .NET reverse proxy costs per request, from the variants that add one layer at a time: LLRP with
/// LLHttp (Kestrel transport + LLRP's request side + LLHttp), with HttpClient instead of LLHttp, with an HttpContext
/// on top, with YARP's IHttpForwarder, and full YARP. Each layer is the difference between two variants measured at
/// the same point, paired round by round (the rounds are interleaved, so drift of the machine cancels in a pair).
/// The TLS layer is the difference between one scenario with and without TLS on a side, at points that differ only
/// in their schemes (<see cref="WriteTls"/>).
/// </summary>
internal sealed class LayerCosts(Analysis a, StringBuilder md)
{
    /// <param name="Optional">Shown only where its variant ran: a layer beside the chain rather than in it.</param>
    private sealed record Layer(string Name, string With, string? Without, bool Optional = false);

    private static readonly Layer[] Layers =
    [
        new("Kestrel transport + request side + LLHttp", "llrp-llhttp", null),
        // The same llhttp behind Kestrel's HTTP layer (--frontEnd kestrel) instead of the proxy's own front end: over
        // HTTP/1.1 Kestrel's HTTP/1.1, over h2 and h2c its HTTP/2. Sittings that run it are few, so it is shown only there.
        new("Kestrel's HTTP layer instead of the proxy's own front end", "llrp-kestrel-h1", "llrp-llhttp", Optional: true),
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
        WriteVariants(headline);
        WriteTls();
    }

    private void WriteVariants(Point? headline)
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
                if (layer.Optional && a.Get(p, layer.With) is null)
                {
                    continue;
                }
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

    /// <summary>
    /// The TLS layer, per proxy: inbound = the scenario at https → http − at http → http (TLS from clients); outbound =
    /// at https → https − at https → http (TLS to the origin), or http → https − http → http where only those ran. One
    /// table per point the TLS points share once their schemes are set to http; none without such a pair.
    /// </summary>
    private void WriteTls()
    {
        var tables = a.Points.Where(p => p.ServerScheme == Point.Https || p.DownstreamScheme == Point.Https)
            .Select(p => p.Cleartext).Distinct()
            .Select(b => (Base: b, In: TlsPair.Inbound(b), Out: TlsPair.Outbound(b, a)))
            .Where(t => Has(t.In) || Has(t.Out))
            .ToList();
        if (tables.Count == 0)
        {
            return;
        }
        md.AppendLine("## What TLS costs").AppendLine();
        md.AppendLine("Per request (per handshake at a handshake point), over the measured window: each scenario with TLS on one side − the same scenario without it, " +
            "at points that differ only in their schemes, paired by round number (median of the paired differences, min–max over the pairs). " +
            "**Inbound** = https → http − http → http: TLS from the clients. **Outbound** = https → https − https → http: TLS to the origin. " +
            "The schemes are separate run-local.sh calls, so unlike the variant pairs above a pair is not interleaved: a drift of the machine between the calls is in the difference. " +
            "The origin's change (inbound: it serves the same cleartext requests in both) shows how large that drift was. Allocated B is LLRP's own figure.").AppendLine();
        foreach (var (b, inbound, outbound) in tables)
        {
            var unit = b.NewConnectionPerRequest ? "handshake" : "request";
            md.AppendLine(CultureInfo.InvariantCulture, $"### {b.Label}").AppendLine();
            md.AppendLine(CultureInfo.InvariantCulture, $"Inbound: {inbound.Describe}; outbound: {outbound.Describe}.").AppendLine();
            md.AppendLine(CultureInfo.InvariantCulture,
                $"| scenario | inbound CPU µs/{unit} | inbound allocated B/{unit} | origin's change, inbound (µs/{unit}) | outbound CPU µs/{unit} | outbound allocated B/{unit} |");
            md.AppendLine("|---|--:|--:|--:|--:|--:|");
            var scenarios = a.Scenarios.Where(s => s != Analysis.Direct && new[] { inbound.With, inbound.Without, outbound.With, outbound.Without }
                .Any(p => a.Get(p, s) is not null));
            foreach (var s in scenarios)
            {
                md.AppendLine(CultureInfo.InvariantCulture,
                    $"| {s} | {Cell(Paired(inbound, s, r => r.Proxy?.CpuUsPerRequest), 1)} | {Cell(Paired(inbound, s, r => r.Proxy?.AllocatedPerRequest), 0)} | " +
                    $"{Cell(Paired(inbound, s, r => r.Downstream?.CpuUsPerRequest), 1)} | " +
                    $"{Cell(Paired(outbound, s, r => r.Proxy?.CpuUsPerRequest), 1)} | {Cell(Paired(outbound, s, r => r.Proxy?.AllocatedPerRequest), 0)} |");
            }
            md.AppendLine();
        }

        bool Has(TlsPair pair) => a.At(pair.With).Any() && a.At(pair.Without).Any();
    }

    /// <summary>Two points that differ only in the TLS of one side: the one with TLS and the one without.</summary>
    private sealed record TlsPair(Point With, Point Without)
    {
        public static TlsPair Inbound(Point cleartext) => new(cleartext with { ServerScheme = Point.Https }, cleartext);

        public static TlsPair Outbound(Point cleartext, Analysis a)
        {
            var both = new TlsPair(cleartext with { ServerScheme = Point.Https, DownstreamScheme = Point.Https }, cleartext with { ServerScheme = Point.Https });
            return a.At(both.With).Any() && a.At(both.Without).Any() ? both : new(cleartext with { DownstreamScheme = Point.Https }, cleartext);
        }

        public string Describe => $"{With.Schemes} − {Without.Schemes}";
    }

    private Cost? Paired(TlsPair pair, string scenario, Func<Run, double?> figure) =>
        a.Get(pair.With, scenario) is { } with && a.Get(pair.Without, scenario) is { } without ? Differences(ByRound(with, figure), ByRound(without, figure)) : null;

    private Cost? Of(Point p, Layer layer, Func<ProcessFigures, double?> figure)
    {
        if (a.Get(p, layer.With) is not { } with)
        {
            return null;
        }
        double? Proxy(Run r) => r.Proxy is { } proxy ? figure(proxy) : null;
        var withByRound = ByRound(with, Proxy);
        if (layer.Without is null)
        {
            return Summarise(withByRound.Values.ToList());
        }
        return a.Get(p, layer.Without) is { } without ? Differences(withByRound, ByRound(without, Proxy)) : null;
    }

    private static Cost? Differences(Dictionary<string, double> with, Dictionary<string, double> without) =>
        Summarise(with.Keys.Intersect(without.Keys).Select(k => with[k] - without[k]).ToList());

    private static Dictionary<string, double> ByRound(ScenarioSummary s, Func<Run, double?> figure)
    {
        var values = new Dictionary<string, double>(StringComparer.Ordinal);
        foreach (var run in s.Runs)
        {
            if (figure(run) is { } v && double.IsFinite(v))
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
