namespace LLRP.Analysis;

/// <summary>What the reports on one results folder take from the command line (ReportCli): the folder, --out and
/// --no-png; and how they end: exit status 0 written, 1 input they cannot use (the message names the file).</summary>
internal sealed record ReportCommand(string ResultsDir, string OutDir, bool Png)
{
    public static ReportCommand Of(string resultsDir, string? outDir, bool png) =>
        new(Path.GetFullPath(resultsDir), Path.GetFullPath(outDir ?? resultsDir), png);

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
