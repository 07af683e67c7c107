using System.Globalization;
using System.Text;

namespace LLRP.Analysis;

/// <summary>Writes report.md and its charts for one results directory (one sitting).</summary>
internal sealed class MarkdownReport(string resultsDir, string outDir, IReadOnlyList<Run> runs, IReadOnlyList<RunMeta> metas, bool drawCharts)
{
    private readonly Analysis _a = new(runs);
    private readonly StringBuilder _md = new();
    private readonly List<string> _missing = [];
    private readonly List<string> _chartErrors = [];
    public List<string> ChartFiles { get; } = [];

    public Point? Headline { get; private set; }

    /// <summary>The README's table for the headline point (Markdown), empty without one.</summary>
    public string HeadlineTable { get; private set; } = "";

    public string Build()
    {
        var ok = runs.Count(r => !r.Failed && r.Load.Rps is not null);
        var failed = runs.Count - ok;
        Headline = ChooseHeadline();

        _md.AppendLine("# LLRP benchmark report").AppendLine();
        _md.AppendLine(CultureInfo.InvariantCulture,
            $"Results: `{Display(resultsDir)}`: {runs.Count} run file(s) ({ok} measured, {failed} failed), {_a.Scenarios.Count} scenario(s) at {_a.Points.Count} point(s). " +
            $"Written by `analysis/Report` at {DateTime.UtcNow:yyyy-MM-dd HH:mm} UTC.").AppendLine();
        Sitting();
        if (Headline is { } h)
        {
            _md.AppendLine(CultureInfo.InvariantCulture, $"## Headline: {h.Label}").AppendLine();
            HeadlineTable = ReadmeTable(h);
            _md.AppendLine("<!-- table:start -->").Append(HeadlineTable).AppendLine("<!-- table:end -->").AppendLine();
            PointTables(h, charts: true);
        }
        new LayerCosts(_a, _md).Write(Headline);
        ConnectionSweep();
        SizeSweep();
        Pgo();
        var others = _a.Points.Where(p => p != Headline).ToList();
        if (others.Count > 0)
        {
            _md.AppendLine("## Every other point").AppendLine();
            foreach (var p in others)
            {
                _md.AppendLine(CultureInfo.InvariantCulture, $"### {p.Label}").AppendLine();
                PointTables(p, charts: true);
            }
        }
        Missing();
        Definitions();
        RunList();
        return _md.ToString();
    }

    private Point? ChooseHeadline()
    {
        var plain = _a.Points.Where(p => p.Profile.Length == 0 && p.AppEnv.Length == 0).ToList();
        return plain.FirstOrDefault(p => p.Connections == 64 && p.ResponseBytes == ResultsReader.DownstreamDefaultBytes)
            ?? plain.OrderByDescending(p => _a.At(p).Sum(s => s.Runs.Count)).FirstOrDefault()
            ?? _a.Points.OrderByDescending(p => _a.At(p).Sum(s => s.Runs.Count)).FirstOrDefault();
    }

    private string Display(string path)
    {
        var rel = Path.GetRelativePath(Environment.CurrentDirectory, path);
        return rel.StartsWith("..", StringComparison.Ordinal) ? path : rel;
    }

    private void Sitting()
    {
        _md.AppendLine("## Sitting").AppendLine();
        string Distinct(IEnumerable<string?> values)
        {
            var v = values.Where(s => !string.IsNullOrWhiteSpace(s)).Select(s => FirstLine(s!)).Distinct().ToList();
            return v.Count == 0 ? "not recorded" : string.Join("; ", v.Select(Format.Inline));
        }
        var commits = runs.Select(r => r.Commit).Concat(metas.Select(m => m.Commit)).Where(c => !string.IsNullOrEmpty(c)).Distinct().ToList();
        var dirty = metas.Any(m => m.Dirty == true) ? " (work tree had uncommitted changes)" : "";
        var dates = metas.Select(m => m.Date).OfType<string>().Order(StringComparer.Ordinal).ToList();
        var nproc = Distinct(metas.Select(m => m.Nproc?.ToString(CultureInfo.InvariantCulture)).Concat(runs.Select(r => r.Processors?.ToString(CultureInfo.InvariantCulture))));
        _md.AppendLine("| | |").AppendLine("|---|---|");
        _md.AppendLine(CultureInfo.InvariantCulture, $"| date (UTC) | {(dates.Count == 0 ? "not recorded" : dates[0] + (dates.Count > 1 ? " to " + dates[^1] : ""))} |");
        _md.AppendLine(CultureInfo.InvariantCulture, $"| commit | {(commits.Count == 0 ? "not recorded" : string.Join(", ", commits.Select(c => $"`{c}`")))}{dirty} |");
        _md.AppendLine(CultureInfo.InvariantCulture, $"| CPUs (nproc) | {nproc} |");
        _md.AppendLine(CultureInfo.InvariantCulture, $"| CPU model | {Distinct(metas.Select(m => m.CpuModel))} |");
        _md.AppendLine(CultureInfo.InvariantCulture, $"| kernel | {Distinct(metas.Select(m => m.Kernel))} |");
        _md.AppendLine(CultureInfo.InvariantCulture, $"| .NET SDK | {Distinct(metas.Select(m => m.Dotnet))} |");
        _md.AppendLine(CultureInfo.InvariantCulture, $"| wrk | {Distinct(metas.Select(m => m.Wrk))} |");
        _md.AppendLine(CultureInfo.InvariantCulture, $"| nginx | {Distinct(metas.Select(m => m.Nginx))} |");
        _md.AppendLine(CultureInfo.InvariantCulture, $"| HAProxy | {Distinct(metas.Select(m => m.Haproxy))} |");
        _md.AppendLine(CultureInfo.InvariantCulture, $"| runner | {Distinct(runs.Select(r => r.Mode).Concat(metas.Select(m => m.Mode)))} |");
        _md.AppendLine(CultureInfo.InvariantCulture, $"| pinning | {Distinct(metas.Select(m => m.Pinned))} |");
        _md.AppendLine(CultureInfo.InvariantCulture, $"| origin | {Distinct(metas.Select(m => m.Origin))} |").AppendLine();
        if (commits.Count > 1)
        {
            _md.AppendLine("**Warning:** the runs come from more than one commit; ratios across them compare different builds.").AppendLine();
        }
        foreach (var m in metas.Where(m => m.IsSweep && m.Status is not null && m.Status != "complete"))
        {
            var tail = m.Status == "running" ? " (it did not finish, or is still going)." : ".";
            _md.AppendLine(CultureInfo.InvariantCulture, $"**Warning:** `{Format.Inline(Path.GetRelativePath(resultsDir, m.File))}` says the sweep is **{Format.Inline(m.Status!)}**{tail}").AppendLine();
        }
        foreach (var w in metas.SelectMany(m => m.Warnings).Distinct())
        {
            _md.AppendLine(CultureInfo.InvariantCulture, $"**Warning (sweep.sh):** {Format.Inline(w)}").AppendLine();
        }
        // The sweep's own command line first, then every run-local.sh command in the order they ran.
        var commands = metas.OrderBy(m => m.IsSweep ? 0 : 1).ThenBy(m => m.File, StringComparer.Ordinal)
            .SelectMany(m => m.Commands).Distinct().ToList();
        if (commands.Count > 0)
        {
            _md.AppendLine("Commands:").AppendLine().AppendLine("```");
            foreach (var c in commands)
            {
                _md.AppendLine(c);
            }
            _md.AppendLine("```").AppendLine();
        }
        var shared = metas.Any(m => m.Nproc is <= 4) || runs.Any(r => r.Processors is <= 4);
        if (shared)
        {
            _md.AppendLine("> The load generator, the proxy and the origin share this machine's few cores: absolute RPS drifts " +
                "between sittings and with other work on the box. Ratios (R, vs YARP, vs best peer) taken in one sitting hold better; " +
                "CPU µs per request is steadier than RPS (docs/methodology.md).").AppendLine();
        }
    }

    /// <summary>
    /// The README's columns: median RPS (min–max), ratio to full YARP and to the best peer (nginx, HAProxy, Caddy, h2o), R, p99, the
    /// proxy's CPU µs per request and allocated bytes per request over the measured window, and the steadiness verdict.
    /// </summary>
    private string ReadmeTable(Point p)
    {
        var t = new StringBuilder();
        t.AppendLine(CultureInfo.InvariantCulture, $"| scenario | {p.RateName} median (min–max) | vs full YARP | vs best peer | R = RPS/direct | p99 ms | proxy CPU µs/{p.Unit} | allocated B/{p.Unit} | steady runs | retries |");
        t.AppendLine("|---|--:|--:|--:|--:|--:|--:|--:|---|--:|");
        foreach (var s in _a.At(p))
        {
            var name = s.Scenario switch
            {
                Analysis.Direct => "direct (no proxy)",
                Analysis.Yarp => "yarp (full YARP)",
                _ => s.Scenario,
            };
            var isDirect = s.Scenario == Analysis.Direct;
            var alloc = s.AllocatedPerRequest is { } al ? Format.N0(al) : "";
            t.AppendLine(CultureInfo.InvariantCulture,
                $"| {name} | {Format.N0(s.Rps)} ({Format.N0(s.RpsMin)}–{Format.N0(s.RpsMax)}) | {(isDirect ? "" : Format.Ratio(_a.VsYarp(s)))} | " +
                $"{(isDirect ? "" : Format.Ratio(_a.VsBestNative(s)))} | {(isDirect ? "" : Format.Ratio(_a.R(s)))} | {Format.Auto(s.P99Ms)} | " +
                $"{(isDirect ? "" : Format.F(s.CpuUsPerRequest, 1))} | {alloc} | {s.SteadyLabel} | {s.Retries} |");
        }
        return t.ToString();
    }

    private void PointTables(Point p, bool charts)
    {
        var rows = _a.At(p).ToList();
        var direct = _a.Baseline(p, Analysis.Direct);
        var yarp = _a.Baseline(p, Analysis.Yarp);
        var best = _a.BestNative(p);
        var borrowed = new[] { direct, yarp, best }.Any(b => b is not null && b.Point != p)
            ? " Baselines without runs at this point's profile/environment come from the default point with the same connections and size."
            : "";
        _md.AppendLine(CultureInfo.InvariantCulture,
            $"Baselines: direct {(direct is null ? "n/a (no `direct` runs)" : Format.N0(direct.Rps) + " RPS")}; full YARP {(yarp is null ? "n/a (no `yarp` runs)" : Format.N0(yarp.Rps) + " RPS")}; " +
            $"best peer {(best is null ? "n/a (no `nginx`/`haproxy`/`caddy`/`h2o` runs)" : $"{best.Scenario} {Format.N0(best.Rps)} RPS")}.{borrowed}").AppendLine();
        TlsNegotiated.Write(_md, p, rows);
        _md.AppendLine(CultureInfo.InvariantCulture, $"| scenario | runs | {p.RateName} median | {p.RateName} min–max | spread | vs YARP | vs best peer | R = RPS/direct | p50 ms | p99 ms | max ms | bad responses | socket errors |");
        _md.AppendLine("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
        foreach (var s in rows)
        {
            var runsCell = s.Runs.Count.ToString(CultureInfo.InvariantCulture) + (s.FailedRuns > 0 ? $" (+{s.FailedRuns} failed)" : "");
            var errors = (s.BadResponses ?? 0) + (s.SocketErrors ?? 0);
            _md.AppendLine(CultureInfo.InvariantCulture,
                $"| {s.Scenario} | {runsCell} | {Format.N0(s.Rps)} | {Format.N0(s.RpsMin)}–{Format.N0(s.RpsMax)} | {(s.Runs.Count > 1 ? Format.F(s.SpreadPercent, 1) + " %" : "1 run")} | " +
                $"{Format.Ratio(_a.VsYarp(s))} | {Format.Ratio(_a.VsBestNative(s))} | {Format.Ratio(_a.R(s))} | " +
                $"{Format.Auto(s.P50Ms)} | {Format.Auto(s.P99Ms)} | {Format.Auto(s.MaxMs)} | {Bold(s.BadResponses, errors)} | {Bold(s.SocketErrors, errors)} |");
        }
        _md.AppendLine();
        _md.AppendLine(CultureInfo.InvariantCulture, $"| scenario | process | CPU % (all cores) | cores busy | CPU µs/{p.Unit} | origin CPU µs/{p.Unit} | allocated B/{p.Unit} | working set MB | peak WS MB | threads | Little's law |");
        _md.AppendLine("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
        foreach (var s in rows)
        {
            var cpuReq = Format.F(s.CpuUsPerRequest, 1) + (s.CpuPerRequestEstimated && s.CpuUsPerRequest is not null ? " ~" : "");
            var alloc = s.AllocatedPerRequest is { } al ? Format.N0(al) : (Analysis.IsDotNetVariant(s.Scenario) ? "not reported" : Format.None);
            _md.AppendLine(CultureInfo.InvariantCulture,
                $"| {s.Scenario} | {(s.FiguresAreDownstream ? "origin (no proxy)" : "proxy")} | {Format.F(s.CpuPercent, 0)} | {Format.F(s.CoresPercent / 100, 2)} | {cpuReq} | {Format.F(s.OriginCpuUsPerRequest, 1)} | {alloc} | " +
                $"{Format.F(s.WorkingSetMb, 0)} | {Format.F(s.PeakWorkingSetMb, 0)} | {Format.F(s.Threads, 0)} | {Format.F(s.LittleRatio, 2)} |");
        }
        _md.AppendLine();
        if (!charts || !drawCharts || rows.Count == 0)
        {
            return;
        }
        var subtitle = p.Label.Replace("`", "", StringComparison.Ordinal) + (rows.Max(r => r.Runs.Count) > 1 ? "; bar = median, whiskers = min–max over rounds" : "; one round each");
        var rps = Charts.BarChart(p.Handshakes ? "TLS handshakes per second" : "Requests per second", subtitle, p.Handshakes ? "handshakes/s" : "requests/s",
            rows.Select(s => new Bar(s.Scenario, s.Rps, s.RpsMin, s.RpsMax, Charts.ColorOf(s.Scenario),
                s.Scenario == Analysis.Direct ? null : _a.R(s) is { } r ? "R " + r.ToString("F2", CultureInfo.InvariantCulture) : null)).ToList(),
            v => v.ToString("N0", CultureInfo.InvariantCulture));
        var percentiles = new[] { "p50", "p75", "p90", "p99", "max" };
        var latency = Charts.LineChart("Latency percentiles", p.Label.Replace("`", "", StringComparison.Ordinal) + "; medians over rounds (max: the largest)",
            "percentile", "latency (ms, log scale)", percentiles,
            rows.Select(s => new Series(s.Scenario, [s.P50Ms, s.P75Ms, s.P90Ms, s.P99Ms, s.MaxMs], Charts.ColorOf(s.Scenario))).ToList(), logY: true);
        _md.AppendLine(CultureInfo.InvariantCulture, $"{Image(rps, $"rps-{p.Slug}", "RPS per scenario")} {Image(latency, $"latency-{p.Slug}", "latency percentiles")}").AppendLine();
    }

    private static string Bold(double? value, double anyErrors) =>
        value is null ? Format.None : anyErrors > 0 && value > 0 ? $"**{Format.N0(value)}**" : Format.N0(value);

    private List<Point> Sweep(Func<Point, bool> filter, Func<Point, long?> key) =>
        _a.Points.Where(p => p.Profile.Length == 0 && p.AppEnv.Length == 0 && filter(p)
                && p.ServerScheme == Headline?.ServerScheme && p.DownstreamScheme == Headline?.DownstreamScheme
                && p.NewConnectionPerRequest == Headline?.NewConnectionPerRequest)
            .GroupBy(key).Select(g => g.First()).OrderBy(p => key(p) ?? long.MaxValue).ToList();

    private void ConnectionSweep()
    {
        var size = Headline?.ResponseBytes;
        var points = Sweep(p => p.ResponseBytes == size, p => p.Connections);
        if (points.Count < 2)
        {
            _missing.Add("No connection sweep (fewer than two connection counts at one response size): no R-against-connections chart.");
            return;
        }
        _md.AppendLine(CultureInfo.InvariantCulture, $"## Connection sweep ({Format.Bytes(size)} responses)").AppendLine();
        SweepTables(points, p => p.Connections?.ToString(CultureInfo.InvariantCulture) ?? "?", "c=", "connections", "r-vs-connections", "R against connections");
    }

    private void SizeSweep()
    {
        var connections = Headline?.Connections;
        var points = Sweep(p => p.Connections == connections, p => p.ResponseBytes);
        if (points.Count < 2)
        {
            _missing.Add("No response-size sweep (fewer than two `?s=N` sizes at one connection count).");
            return;
        }
        _md.AppendLine(CultureInfo.InvariantCulture, $"## Response-size sweep ({connections} connections)").AppendLine();
        SweepTables(points, p => Format.Bytes(p.ResponseBytes), "", "response body size", "r-vs-size", "R against response size");
    }

    private void SweepTables(List<Point> points, Func<Point, string> label, string prefix, string xLabel, string chartName, string title)
    {
        var scenarios = _a.Scenarios.Where(s => points.Any(p => _a.Get(p, s) is not null)).ToList();
        var header = "| scenario | " + string.Join(" | ", points.Select(p => prefix + label(p))) + " |";
        var rule = "|---|" + string.Concat(points.Select(_ => "--:|"));
        _md.AppendLine("R = RPS / direct RPS (median over rounds):").AppendLine().AppendLine(header).AppendLine(rule);
        foreach (var s in scenarios.Where(s => s != Analysis.Direct))
        {
            _md.AppendLine(CultureInfo.InvariantCulture, $"| {s} | {string.Join(" | ", points.Select(p => _a.Get(p, s) is { } x ? Format.Ratio(_a.R(x)) : Format.None))} |");
        }
        _md.AppendLine().AppendLine("RPS median (min–max), p99 ms and CPU µs/request of the proxy:").AppendLine().AppendLine(header).AppendLine(rule);
        foreach (var s in scenarios)
        {
            _md.AppendLine(CultureInfo.InvariantCulture, $"| {s} | {string.Join(" | ", points.Select(p => _a.Get(p, s) is { } x
                ? $"{Format.N0(x.Rps)} ({Format.N0(x.RpsMin)}–{Format.N0(x.RpsMax)}); p99 {Format.Auto(x.P99Ms)}; {Format.F(x.CpuUsPerRequest, 1)} µs"
                : Format.None))} |");
        }
        _md.AppendLine();
        if (!drawCharts)
        {
            return;
        }
        var series = scenarios.Where(s => s != Analysis.Direct)
            .Select(s => new Series(s, points.Select(p => _a.Get(p, s) is { } x ? _a.R(x) : null).ToList(), Charts.ColorOf(s))).ToList();
        var chart = Charts.LineChart(title, "R = proxied RPS / direct RPS, medians over rounds; direct = 1", xLabel, "R", points.Select(label).ToList(),
            series, logY: false, yFloor: 0, referenceY: 1, referenceLabel: "direct");
        var rpsSeries = scenarios.Select(s => new Series(s, points.Select(p => _a.Get(p, s)?.Rps).ToList(), Charts.ColorOf(s))).ToList();
        var rpsChart = Charts.LineChart(title.Replace("R against", "RPS against", StringComparison.Ordinal), "medians over rounds", xLabel, "requests/s",
            points.Select(label).ToList(), rpsSeries, logY: false, yFloor: 0);
        _md.AppendLine(CultureInfo.InvariantCulture, $"{Image(chart, chartName, title)} {Image(rpsChart, chartName.Replace("r-vs", "rps-vs", StringComparison.Ordinal), "RPS")}").AppendLine();
    }

    private void Pgo()
    {
        var rows = new List<string>();
        foreach (var g in _a.Points.GroupBy(p => (p.Connections, p.Path, p.AppEnv, p.Request, p.ServerScheme, p.DownstreamScheme, p.NewConnectionPerRequest)))
        {
            var byProfile = g.ToDictionary(p => p.Profile, StringComparer.Ordinal);
            foreach (var s in _a.Scenarios.Where(Analysis.IsDotNetVariant))
            {
                ScenarioSummary? Of(string profile) => byProfile.TryGetValue(profile, out var p) && _a.Get(p, s) is { Rps: not null } x ? x : null;
                var (def, pgo, nopgo) = (Of(""), Of("pgo"), Of("nopgo"));
                if (new[] { def, pgo, nopgo }.Count(x => x is not null) < 2 || (pgo is null && nopgo is null))
                {
                    continue;
                }
                var on = pgo ?? def;
                var effect = on is not null && nopgo?.Rps is > 0 ? (on.Rps!.Value / nopgo.Rps.Value - 1) * 100 : (double?)null;
                var effectLabel = pgo is not null ? "pgo vs nopgo" : "default vs nopgo";
                var cpuEffect = on?.CpuUsPerRequest is { } a && nopgo?.CpuUsPerRequest is > 0 ? (a / nopgo.CpuUsPerRequest.Value - 1) * 100 : (double?)null;
                string Cell(ScenarioSummary? x) => x is null ? Format.None
                    : $"{Format.N0(x.Rps)} / {Format.F(x.CpuUsPerRequest, 1)} µs{(x.AllocatedPerRequest is { } al ? $" / {Format.N0(al)} B" : "")} ({x.Runs.Count} run{(x.Runs.Count == 1 ? "" : "s")})";
                var first = g.First();
                rows.Add($"| {s} | {first.Connections} c, {Format.Bytes(first.ResponseBytes)}{(first.AppEnv.Length > 0 ? $", env `{first.AppEnv}`" : "")} | {Cell(def)} | {Cell(pgo)} | {Cell(nopgo)} | {Format.Percent(effect)} RPS, {Format.Percent(cpuEffect)} CPU/req ({effectLabel}) |");
            }
        }
        if (rows.Count == 0)
        {
            _missing.Add("No PGO comparison: no .NET variant was run under both profiles (sweep.sh runs them unless --no-pgo; run-local.sh --pgo / --nopgo).");
            return;
        }
        _md.AppendLine("## PGO vs no PGO (.NET variants)").AppendLine();
        _md.AppendLine("Cells: RPS median / proxy CPU µs per request / allocated B per request (when the proxy reports it). `default` is the runtime's default (dynamic PGO on since .NET 8); " +
            "`pgo` adds `DOTNET_TieredPGO=1 DOTNET_ReadyToRun=0 DOTNET_TC_QuickJitForLoops=1`; `nopgo` is `DOTNET_TieredPGO=0` (docs/methodology.md).").AppendLine();
        _md.AppendLine("| variant | point | default | pgo | nopgo | PGO effect |").AppendLine("|---|---|--:|--:|--:|---|");
        foreach (var r in rows)
        {
            _md.AppendLine(r);
        }
        _md.AppendLine();
    }

    private void Definitions()
    {
        _md.AppendLine("## How the figures are made").AppendLine();
        _md.AppendLine("- One point = one connection count, response size, profile and proxy environment; every ratio is taken within a point (same sitting). " +
            "A pgo/nopgo or proxy-environment point without its own `direct`/`nginx`/`haproxy` runs uses those of the default point with the same connections and path.");
        _md.AppendLine("- RPS median and min–max over the rounds that succeeded (median of an even count: mean of the two middle values); spread = (max − min) / median.");
        _md.AppendLine("- R = scenario RPS / `direct` RPS; vs YARP = RPS / `yarp` RPS; vs best peer = RPS / the highest median of the peers that ran (nginx, HAProxy, Caddy, h2o).");
        _md.AppendLine("- p50/p99: medians over rounds of wrk's percentiles; max: the largest over rounds. Bad responses and socket errors: sums over rounds (must be 0; shown bold otherwise).");
        _md.AppendLine("- Every process figure covers the measured window only (wrk's measured run), never the warm-up or start-up (docs/methodology.md).");
        _md.AppendLine("- CPU % (100 % = all cores) and cores busy: run-local.sh's average over the measured window (`proc/cpu/average`; crank's own `benchmarks/cpu` is the highest 1 s sample, used only where no average exists). " +
            "CPU µs/request: Δ(utime+stime) of the proxy process over the window / wrk's completed requests (`proc/cpu/per-request`); under crank, LLRP's own `llrp/cpu-per-request` over its statsWindow; `~` marks an estimate from CPU % × cores / RPS where a file has neither.");
        _md.AppendLine("- Origin CPU µs/request: the same measure for the origin (Downstream), which runs the same build and serves the same requests in every run; " +
            "it rises and falls with the machine's speed during the run, so a proxy figure that moved with it was the machine's (docs/methodology.md, \"The origin as a control\").");
        _md.AppendLine("- Allocated B/request: the proxy's own `llrp/allocated-per-request`: GC.GetTotalAllocatedBytes of the whole process over the measured window (its statsWindow, to one second) / the requests it completed in that window " +
            "(under the WebSocket load, where the proxy completes one request per tunnel: the window's bytes / the round trips in it). " +
            "`not reported` for a .NET variant whose process prints no such measurement.");
        _md.AppendLine("- Steady: the proxy's CPU µs/request in the first and the second half of the measured window agree within the tolerance (`steady/*`, default ±15 % of their mean) " +
            "and a .NET proxy spent at most the limit of its CPU time JIT-compiling under the load (`steady/jit-share` = JIT time / CPU time in the window without its first and last second, when wrk connects and disconnects; default 5 %); `a/b` = runs that passed / runs checked. " +
            "run-local.sh runs an unsteady run again (default up to 2 retries) and keeps the last attempt; retries = those extra attempts over the rounds.");
        _md.AppendLine("- Working set: the highest 1 s VmRSS sample in the measured window (`benchmarks/working-set`, crank's meaning); peak WS: VmHWM, largest over rounds. For `direct` these are the origin's.");
        _md.AppendLine("- Little's law: connections / mean latency / RPS; about 1 for closed-loop wrk. Far from 1 means wrk itself was the bottleneck or the run was disturbed.");
        _md.AppendLine("- Schemes (`https → http`: TLS from the load to the proxy, cleartext to the origin): every run of a point has the same. The TLS a run negotiated is the load job's probe of its target before the load " +
            "(crank/wrk-job.sh: OpenSSL's client, as wrk's, and a second connection that tries to resume the first one's session). " +
            "A handshake point (header preset `handshake`, over https) opens a connection per request: its rate is handshakes per second and its CPU per handshake covers the whole request.");
        _md.AppendLine();
    }

    private void Missing()
    {
        if (!_a.Scenarios.Contains(Analysis.Yarp))
        {
            _missing.Insert(0, "No `yarp` runs: every \"vs YARP\" is n/a.");
        }
        if (!_a.Scenarios.Contains(Analysis.Direct))
        {
            _missing.Insert(0, "No `direct` runs: R is n/a everywhere.");
        }
        if (!_a.Scenarios.Any(s => Analysis.NativeProxies.Contains(s)))
        {
            _missing.Add("No `nginx`/`haproxy`/`caddy`/`h2o` runs: \"vs best peer\" is n/a.");
        }
        var single = _a.Points.SelectMany(_a.At).Where(s => s.Runs.Count == 1).Select(s => s.Point).Distinct().Count();
        if (single > 0)
        {
            _missing.Add($"{single} point(s) have scenarios with a single round: no spread; docs/methodology.md asks for at least 3 interleaved rounds.");
        }
        foreach (var p in _a.Points)
        {
            var expected = _a.Points.Where(q => q.Profile == p.Profile && q.AppEnv == p.AppEnv).SelectMany(_a.At).Select(s => s.Scenario).Distinct();
            foreach (var s in expected.Where(s => _a.Get(p, s) is null))
            {
                _missing.Add($"No `{s}` result at {p.Label}, though other points have one: its run wrote no result file (build or start failure, or a busy port; see sweep.log or the run-local logs).");
            }
        }
        foreach (var r in runs.Where(r => r.Failed || r.Load.Rps is null))
        {
            _missing.Add($"Failed run: `{Path.GetRelativePath(resultsDir, r.File)}` ({r.Scenario}, round {r.Round}); see the logs beside it.");
        }
        foreach (var r in runs.Where(r => (r.Proxy ?? r.Downstream)?.Steady is { Ok: false }))
        {
            var st = (r.Proxy ?? r.Downstream)!.Steady!;
            var jit = st.JitSharePercent is { } share
                ? string.Create(CultureInfo.InvariantCulture, $"; JIT-compiling took {share:F2} % of its CPU time in the window (limit {st.JitShareLimit:F2} %, {st.JitMethods ?? 0:F0} methods)")
                : "";
            _missing.Add(string.Create(CultureInfo.InvariantCulture,
                $"**Not steady** after {r.Attempts} attempt(s): `{Path.GetRelativePath(resultsDir, r.File)}` ({r.Scenario}, round {r.Round}): CPU µs/request {st.FirstHalf:F1} in the first half of the measured window, {st.SecondHalf:F1} in the second ({st.ChangePercent:+0.0;-0.0} %, tolerance ±{st.TolerancePercent:F0} %){jit}.") +
                (r.AttemptHistory is { Length: > 0 } h ? $" Attempts: {Format.Inline(h)}." : ""));
        }
        foreach (var r in runs.Where(r => r.Attempts > 1 && (r.Proxy ?? r.Downstream)?.Steady is not { Ok: false }))
        {
            _missing.Add($"Run again until steady: `{Path.GetRelativePath(resultsDir, r.File)}` ({r.Scenario}, round {r.Round}) is attempt {r.Attempts}" +
                (r.AttemptHistory is { Length: > 0 } h ? $"; attempts: {Format.Inline(h)}." : "."));
        }
        foreach (var r in runs.Where(r => r.WarmupCapped))
        {
            _missing.Add(string.Create(CultureInfo.InvariantCulture,
                $"Warm-up capped: `{Path.GetRelativePath(resultsDir, r.File)}` ({r.Scenario}, round {r.Round}) reached the adaptive warm-up's cap ({r.WarmupSeconds:F0} s) before the proxy's JIT went quiet."));
        }
        var warmups = metas.Select(m => m.Warmup).OfType<int>().Distinct().ToList();
        if (warmups.Count > 1)
        {
            _missing.Add($"The runs used different warm-ups ({string.Join(", ", warmups.Order())} s): points measured after different warm-ups are not comparable.");
        }
        if (warmups.Any(w => w < 15))
        {
            _missing.Add($"Warm-up below 15 s ({string.Join(", ", warmups.Where(w => w < 15).Order())} s): the .NET variants may still run tier-0 code (docs/methodology.md).");
        }
        _missing.AddRange(_chartErrors);
        if (_missing.Count == 0)
        {
            return;
        }
        _md.AppendLine("## Missing or not comparable").AppendLine();
        foreach (var m in _missing)
        {
            _md.AppendLine("- " + m);
        }
        _md.AppendLine();
    }

    private void RunList()
    {
        _md.AppendLine("## Runs").AppendLine();
        _md.AppendLine("<details><summary>every run file</summary>").AppendLine();
        _md.AppendLine("| file | scenario | round | connections | size | profile | RPS | p99 ms | CPU µs/req | origin CPU µs/req | bad+socket | return |");
        _md.AppendLine("|---|---|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|");
        var pointOrder = _a.Points.Select((p, i) => (p, i)).ToDictionary(x => x.p, x => x.i);
        foreach (var r in runs.OrderBy(r => pointOrder[r.Point]).ThenBy(r => RoundKey(r.Round)).ThenBy(r => r.Round, StringComparer.Ordinal)
                     .ThenBy(r => Analysis.OrderOf(r.Scenario)))
        {
            var proc = r.Proxy ?? r.Downstream;
            _md.AppendLine(CultureInfo.InvariantCulture,
                $"| `{Path.GetRelativePath(resultsDir, r.File)}` | {r.Scenario} | {r.Round} | {r.Point.Connections} | {Format.Bytes(r.Point.ResponseBytes)} | {r.Point.ProfileLabel} | " +
                $"{Format.N0(r.Load.Rps)} | {Format.Auto(r.Load.P99Ms)} | {Format.F(proc?.CpuUsPerRequest, 1)} | {Format.F(r.Downstream?.CpuUsPerRequest, 1)} | {Format.N0((r.Load.BadResponses ?? 0) + (r.Load.SocketErrors ?? 0))} | {(r.Failed ? "failed" : "0")} |");
        }
        _md.AppendLine().AppendLine("</details>").AppendLine();
    }

    /// <summary>First line of a tool's version text, without wrk's copyright notice.</summary>
    private static string FirstLine(string s)
    {
        var line = s.Split('\n')[0].Trim();
        var copyright = line.IndexOf(" Copyright", StringComparison.Ordinal);
        return copyright > 0 ? line[..copyright] : line;
    }

    private static int RoundKey(string round) => int.TryParse(round, NumberStyles.None, CultureInfo.InvariantCulture, out var n) ? n : int.MaxValue;

    /// <summary>Writes NAME.png and returns the Markdown image link (or a note when the chart could not be drawn).</summary>
    private string Image(Chart chart, string name, string alt)
    {
        var pngPath = Path.Combine(outDir, name + ".png");
        try
        {
            chart.SavePng(pngPath);
        }
        catch (Exception e) when (e is DllNotFoundException or TypeInitializationException or IOException or UnauthorizedAccessException)
        {
            // SkiaSharp's native library missing or unloadable: say so in the report instead of failing it.
            _chartErrors.Add($"{name}.png not made: {e.GetType().Name}: {e.Message}");
            return $"({alt}: chart not drawn)";
        }
        ChartFiles.Add(pngPath);
        return $"![{alt}]({name}.png)";
    }
}
