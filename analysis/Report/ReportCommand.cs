namespace LLRP.Analysis;

/// <summary>
/// What both reports take from the command line (a results directory, --out, --no-png and, for the benchmark report,
/// --print-table) and how both end: exit status 0 written, 1 input they cannot use (the message names the file),
/// 2 bad usage.
/// </summary>
internal sealed record ReportCommand(string ResultsDir, string OutDir, bool Png, bool PrintTable)
{
    /// <summary>
    /// Parses <paramref name="args"/>; on -h/--help or bad usage prints <paramref name="usage"/> and returns null with
    /// the exit status in <paramref name="exitCode"/> (0 for help, 2 otherwise).
    /// </summary>
    public static ReportCommand? Parse(string[] args, string usage, bool allowPrintTable, out int exitCode)
    {
        string? resultsDir = null, outDir = null;
        bool png = true, printTable = false;
        exitCode = 2;
        for (var i = 0; i < args.Length; i++)
        {
            switch (args[i])
            {
                case "--out" when i + 1 < args.Length:
                    outDir = args[++i];
                    break;
                case "--no-png":
                    png = false;
                    break;
                case "--print-table" when allowPrintTable:
                    printTable = true;
                    break;
                case "-h" or "--help":
                    Console.WriteLine(usage);
                    exitCode = 0;
                    return null;
                case var a when a.StartsWith('-'):
                    Console.Error.WriteLine($"report: unknown option {a}\n{usage}");
                    return null;
                case var a when resultsDir is null:
                    resultsDir = a;
                    break;
                default:
                    Console.Error.WriteLine($"report: more than one results directory ({resultsDir}, {args[i]})\n{usage}");
                    return null;
            }
        }
        if (resultsDir is null)
        {
            Console.Error.WriteLine(usage);
            return null;
        }
        resultsDir = Path.GetFullPath(resultsDir);
        exitCode = 0;
        return new ReportCommand(resultsDir, Path.GetFullPath(outDir ?? resultsDir), png, printTable);
    }

    /// <summary>A study's report (--fixed-rate, --stepped): its runs from the results folder, <paramref name="name"/>.md
    /// (built by <paramref name="build"/>: runs, results folder, out folder, PNGs) in the out folder.</summary>
    public static int RunStudy(string[] args, string usage, string name, string missing, Func<string, List<LevelRun>> read,
        Func<List<LevelRun>, string, string, bool, string> build)
    {
        var command = Parse(args, usage, allowPrintTable: false, out var usageExit);
        return command is null ? usageExit : Run(() =>
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
    }

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
