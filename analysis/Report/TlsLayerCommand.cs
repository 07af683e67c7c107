namespace LLRP.Analysis;

/// <summary>
/// <c>Report --tls-layer DIR_HTTP DIR_HTTPS [DIR_HTTPS_HTTPS] --out DIR</c>: one report over the results of the same
/// scenarios run once per scheme pair (one crank/run-local.sh call each: http → http, https → http and, optionally,
/// https → https), so that its layer table has the TLS layer: each scenario with TLS on a side − without it, paired by
/// round (LayerCosts). Each folder must hold runs of its scheme pair only; the message names the folder otherwise.
/// </summary>
internal static class TlsLayerCommand
{
    private static readonly (string Server, string Downstream)[] Expected =
        [(Point.Http, Point.Http), (Point.Https, Point.Http), (Point.Https, Point.Https)];

    public static int Run(IEnumerable<string> given, string outDir, bool png)
    {
        var dirs = given.Select(Path.GetFullPath).ToList();
        outDir = Path.GetFullPath(outDir);
        return ReportCommand.Run(() =>
        {
            var (runs, metas) = Read(dirs, outDir);
            Directory.CreateDirectory(outDir);
            var report = new MarkdownReport(CommonParent(dirs), outDir, runs, metas, drawCharts: png);
            var path = Path.Combine(outDir, "report.md");
            File.WriteAllText(path, report.Build());
            Console.WriteLine($"report: {runs.Count} run(s) of {dirs.Count} scheme pairs -> {path} ({report.ChartFiles.Count} PNG chart(s){(png ? "" : "; --no-png")})");
        });
    }

    /// <summary>Every directory's runs and metas, each directory checked to hold its scheme pair only.</summary>
    internal static (List<Run> Runs, List<RunMeta> Metas) Read(IReadOnlyList<string> dirs, string? skipDirectory)
    {
        var runs = new List<Run>();
        var metas = new List<RunMeta>();
        for (var i = 0; i < dirs.Count; i++)
        {
            var (dirRuns, dirMetas, _) = ResultsReader.ReadAll(dirs[i], skipDirectory);
            var (server, downstream) = Expected[i];
            if (dirRuns.Count == 0)
            {
                throw new ReportException($"{dirs[i]}: no result files (the {server} → {downstream} runs were expected here)");
            }
            var wrong = dirRuns.FirstOrDefault(r => r.Point.ServerScheme != server || r.Point.DownstreamScheme != downstream);
            if (wrong is not null)
            {
                throw new ReportException($"{wrong.File}: ran {wrong.Point.Schemes}, but its directory is argument {i + 1} of --tls-layer, " +
                    $"the {server} → {downstream} runs (--tls-layer <dir http→http> <dir https→http> [<dir https→https>])");
            }
            runs.AddRange(dirRuns);
            metas.AddRange(dirMetas);
        }
        return (runs, metas);
    }

    private static string CommonParent(IReadOnlyList<string> dirs)
    {
        var parent = dirs[0];
        while (dirs.Any(d => !IsUnder(d, parent)) && Path.GetDirectoryName(parent) is { } up)
        {
            parent = up;
        }
        return parent;

        static bool IsUnder(string dir, string parent) =>
            dir == parent || dir.StartsWith(parent.EndsWith(Path.DirectorySeparatorChar) ? parent : parent + Path.DirectorySeparatorChar, StringComparison.Ordinal);
    }
}
