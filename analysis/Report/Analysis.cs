namespace LLRP.Analysis;

/// <summary>One scenario at one point: medians over its successful rounds and the ratios of docs/methodology.md.</summary>
internal sealed class ScenarioSummary
{
    public required string Scenario { get; init; }
    public required Point Point { get; init; }
    public required IReadOnlyList<Run> Runs { get; init; }
    public required int FailedRuns { get; init; }

    public double? Rps => Stats.Median(Runs.Select(r => r.Load.Rps));
    public double? RpsMin => Stats.Min(Runs.Select(r => r.Load.Rps));
    public double? RpsMax => Stats.Max(Runs.Select(r => r.Load.Rps));
    public double? MeanMs => Stats.Median(Runs.Select(r => r.Load.MeanMs));
    public double? P50Ms => Stats.Median(Runs.Select(r => r.Load.P50Ms));
    public double? P75Ms => Stats.Median(Runs.Select(r => r.Load.P75Ms));
    public double? P90Ms => Stats.Median(Runs.Select(r => r.Load.P90Ms));
    public double? P99Ms => Stats.Median(Runs.Select(r => r.Load.P99Ms));
    public double? MaxMs => Stats.Max(Runs.Select(r => r.Load.MaxMs));
    public double? BadResponses => Stats.Sum(Runs.Select(r => r.Load.BadResponses));
    public double? SocketErrors => Stats.Sum(Runs.Select(r => r.Load.SocketErrors));

    /// <summary>The proxy's process, or for <c>direct</c> (no proxy) the origin's.</summary>
    public bool FiguresAreDownstream => Runs.All(r => r.Proxy is null);

    private IEnumerable<ProcessFigures> Processes => Runs.Select(r => r.Proxy ?? r.Downstream).OfType<ProcessFigures>();

    public double? CpuPercent => Stats.Median(Processes.Select(p => p.CpuPercent));
    public double? CoresPercent => Stats.Median(Processes.Select(p => p.CoresPercent));
    public double? CpuUsPerRequest => Stats.Median(Processes.Select(p => p.CpuUsPerRequest));

    /// <summary>
    /// The origin's CPU µs per request, median over the runs: the same build serving the same requests in every run, so
    /// it moves only with the machine's speed during the run (and a little with how a proxy talks to it); a control for
    /// the proxy's figure (docs/methodology.md, "The origin as a control").
    /// </summary>
    public double? OriginCpuUsPerRequest => Stats.Median(Runs.Select(r => r.Downstream?.CpuUsPerRequest));
    public bool CpuPerRequestEstimated => Processes.Any(p => p.CpuPerRequestEstimated);
    public double? AllocatedPerRequest => Stats.Median(Processes.Select(p => p.AllocatedPerRequest));
    public double? WorkingSetMb => Stats.Median(Processes.Select(p => p.WorkingSetMb));
    public double? PeakWorkingSetMb => Stats.Max(Processes.Select(p => p.PeakWorkingSetMb));
    public double? Threads => Stats.Median(Processes.Select(p => p.Threads));

    /// <summary>Runs with a steadiness verdict, and how many of them passed.</summary>
    public int SteadyChecked => Processes.Count(p => p.Steady is not null);

    public int SteadyPassed => Processes.Count(p => p.Steady is { Ok: true });

    /// <summary>"3/3 steady", "2/3 steady", or "not checked".</summary>
    public string SteadyLabel => SteadyChecked == 0 ? "not checked" : $"{SteadyPassed}/{SteadyChecked}{(SteadyPassed == SteadyChecked ? "" : " **unsteady**")}";

    /// <summary>Attempts beyond the first over this scenario's runs: unsteady attempts run-local.sh ran again.</summary>
    public int Retries => Runs.Sum(r => r.Attempts - 1);

    public double? JitMethodsInWindow => Stats.Median(Processes.Select(p => p.JitMethodsInWindow));

    /// <summary>Little's law for closed-loop wrk: connections / mean latency should equal RPS (ratio ≈ 1).</summary>
    public double? LittleRatio => Point.Connections is { } c && MeanMs is > 0 && Rps is > 0 ? c / (MeanMs.Value / 1000) / Rps.Value : null;

    public double? SpreadPercent => Rps is > 0 && RpsMin is { } lo && RpsMax is { } hi ? (hi - lo) / Rps.Value * 100 : null;
}

/// <summary>Groups runs into points and scenarios and finds the baselines each ratio is taken against.</summary>
internal sealed class Analysis
{
    // Scenario order of crank/run-local.sh: the ceiling, the native proxies, full YARP, then the .NET variants.
    private static readonly string[] KnownOrder =
        ["direct", "nginx", "haproxy", "caddy", "h2o", "yarp", "llrp-llhttp", "llrp-httpclient", "llrp-httpclientwithcontext", "llrp-yarp", "httpclientproxy"];

    public const string Direct = "direct";
    public const string Yarp = "yarp";
    // The peers (analysis/Runner/Peers.cs): the "vs best peer" ratio is taken against the best of those that ran.
    public static readonly string[] NativeProxies = ["nginx", "haproxy", "caddy", "h2o"];

    public IReadOnlyList<Point> Points { get; }
    public IReadOnlyList<string> Scenarios { get; }
    private readonly Dictionary<(Point, string), ScenarioSummary> _summaries = [];

    public Analysis(IReadOnlyList<Run> runs)
    {
        Scenarios = runs.Select(r => r.Scenario).Distinct().OrderBy(OrderOf).ThenBy(s => s, StringComparer.Ordinal).ToList();
        Points = runs.Select(r => r.Point).Distinct()
            .OrderBy(p => p.Profile.Length == 0 ? 0 : 1).ThenBy(p => p.Profile, StringComparer.Ordinal)
            .ThenBy(p => p.AppEnv, StringComparer.Ordinal)
            .ThenBy(p => p.ServerScheme, StringComparer.Ordinal).ThenBy(p => p.DownstreamScheme, StringComparer.Ordinal)
            .ThenBy(p => p.NewConnectionPerRequest)
            .ThenBy(p => p.ResponseBytes ?? long.MaxValue).ThenBy(p => p.Connections ?? int.MaxValue).ThenBy(p => p.Path, StringComparer.Ordinal)
            .ToList();
        foreach (var g in runs.GroupBy(r => (r.Point, r.Scenario)))
        {
            _summaries[g.Key] = new ScenarioSummary
            {
                Scenario = g.Key.Scenario,
                Point = g.Key.Point,
                Runs = g.Where(r => !r.Failed && r.Load.Rps is not null).ToList(),
                FailedRuns = g.Count(r => r.Failed || r.Load.Rps is null),
            };
        }
    }

    public static int OrderOf(string scenario)
    {
        var i = Array.IndexOf(KnownOrder, scenario);
        return i < 0 ? KnownOrder.Length : i;
    }

    public static bool IsDotNetVariant(string scenario) =>
        scenario.StartsWith("llrp-", StringComparison.Ordinal) || scenario is "httpclientproxy" or Yarp;

    public IEnumerable<ScenarioSummary> At(Point point) =>
        Scenarios.Select(s => Get(point, s)).OfType<ScenarioSummary>();

    public ScenarioSummary? Get(Point point, string scenario) => _summaries.GetValueOrDefault((point, scenario));

    /// <summary>
    /// A baseline scenario's summary for a point: the point's own runs, else (for a pgo/nopgo or proxy-environment
    /// point, which do not change direct, nginx or HAProxy) the default point with the same connections and path.
    /// </summary>
    public ScenarioSummary? Baseline(Point point, string scenario)
    {
        if (Get(point, scenario) is { Rps: not null } own)
        {
            return own;
        }
        var plain = point with { Profile = "", AppEnv = "" };
        return Get(plain, scenario) is { Rps: not null } fallback ? fallback : null;
    }

    public double? R(ScenarioSummary s) => Ratio(s, Baseline(s.Point, Direct));

    public double? VsYarp(ScenarioSummary s) => Ratio(s, Baseline(s.Point, Yarp));

    public ScenarioSummary? BestNative(Point point) =>
        NativeProxies.Select(n => Baseline(point, n)).OfType<ScenarioSummary>().MaxBy(b => b.Rps);

    public double? VsBestNative(ScenarioSummary s) => Ratio(s, BestNative(s.Point));

    private static double? Ratio(ScenarioSummary s, ScenarioSummary? baseline) =>
        s.Rps is { } x && baseline?.Rps is > 0 ? x / baseline.Rps.Value : null;
}
