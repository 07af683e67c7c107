namespace LLRP.Analysis;

/// <summary>What the reports on one results folder take from the command line (ReportCli): the folder, --out and
/// --no-png; and how they end: exit status 0 written, 1 input they cannot use (the message names the file).</summary>
internal sealed record ReportCommand(string ResultsDir, string OutDir, bool Png)
{
    public static ReportCommand Of(string resultsDir, string? outDir, bool png) =>
        new(Path.GetFullPath(resultsDir), Path.GetFullPath(outDir ?? resultsDir), png);

    /// <summary>A study's report (--fixed-rate, --stepped): its runs from the results folder, <paramref name="name"/>.md
    /// (built by <paramref name="build"/>: runs, results folder, out folder, PNGs) in the out folder.</summary>
    public static int RunStudy(ReportCommand command, string name, string missing, Func<string, List<LevelRun>> read,
        Func<List<LevelRun>, string, string, bool, string> build) => Run(() =>
        {
            var runs = read(command.ResultsDir);
            if (runs.Count == 0)
            {
                throw new ReportException($"{command.ResultsDir}: no {name} results ({missing})");
            }
            Directory.CreateDirectory(command.OutDir);
            var path = Path.Combine(command.OutDir, name.Replace("-", "", StringComparison.Ordinal) + ".md");
            File.WriteAllText(path, build(runs, command.ResultsDir, command.OutDir, command.Png));
            Console.WriteLine($"report: {runs.Count} {name} run(s) -> {path}");
        });

    /// <summary>Runs <paramref name="write"/>; input it cannot use ends it with one line naming the problem and exit status 1.</summary>
    public static int Run(Action write)
    {
        try
        {
            write();
            return 0;
        }
        catch (Exception e) when (e is ReportException or IOException or UnauthorizedAccessException or System.Text.Json.JsonException)
        {
            Console.Error.WriteLine($"report: error: {e.Message}");
            return 1;
        }
    }
}
