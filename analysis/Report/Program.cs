using LLRP.Analysis;

// usage: dotnet run --project analysis/Report -- <results-dir> [--out <dir>] [--no-png] [--print-table]
//        dotnet run --project analysis/Report -- --comparisons <results-dir> [--out <dir>] [--no-png]
//        dotnet run --project analysis/Report -- --fixed-rate <results-dir> [--out <dir>] [--no-png]
//        dotnet run --project analysis/Report -- --stepped <results-dir> [--out <dir>] [--no-png]
//        dotnet run --project analysis/Report -- --headline <sitting-dir>...
//        dotnet run --project analysis/Report -- --aggregate [--prune] <sitting-dir>   (analysis/aggregate.sh)
//        dotnet run --project analysis/Report -- --index [--print]
//        dotnet run --project analysis/Report -- --tls-layer <dir http→http> <dir https→http> [<dir https→https>] --out <dir> [--no-png]
// Reads every crank --json / run-local.sh result under <results-dir> (recursively) and writes <dir>/report.md
// with PNG charts (default <dir>: the results directory itself). --print-table also prints the headline table
// (the README's columns) between <!-- table:start --> and <!-- table:end --> lines.
// Exit status: 0 written, 1 input it cannot use (the message names the file), 2 bad usage.

const string Usage = "usage: Report <results-dir> [--out <dir>] [--no-png] [--print-table]";
// The published comparisons (crank/run-local.sh scaling|sweep|ab|ramp|comparisons) have their own report: comparisons.md.
if (args is ["--comparisons", ..])
{
    return Comparisons.Run(args[1..]);
}
// The open-loop runs (crank/run-local.sh fixed-rate) have their own report too: fixedrate.md.
if (args is ["--fixed-rate", ..])
{
    return FixedRate.Run(args[1..]);
}
// The stepped comparison (crank/run-local.sh stepped) has its own report too: stepped.md.
if (args is ["--stepped", ..])
{
    return Stepped.Run(args[1..]);
}
// The README's headline table from one or more sittings, printed (pasted into README.md between its headline markers;
// tests/Report.Tests/HeadlineTests holds the two equal).
if (args is ["--headline", ..])
{
    return Headline.Run(args[1..]);
}
// A sitting folded into DIR/sitting.json, the form it is committed in (analysis/aggregate.sh runs this).
if (args is ["--aggregate", ..])
{
    return Aggregate.Run(args[1..]);
}
// The index of analysis/results/ in docs/results.md, a row per folder (the headline's ratios for a crank sitting).
if (args is ["--index", ..])
{
    return ResultsIndex.Run(args[1..]);
}
// One report over the same scenarios run once per scheme pair: its layer table gains the TLS layer.
if (args is ["--tls-layer", ..])
{
    return TlsLayerCommand.Run(args[1..]);
}
var command = ReportCommand.Parse(args, Usage, allowPrintTable: true, out var usageExit);
if (command is null)
{
    return usageExit;
}

return ReportCommand.Run(() =>
{
    var (resultsDir, outDir) = (command.ResultsDir, command.OutDir);
    var (runs, metas, ignored) = ResultsReader.ReadAll(resultsDir, outDir == resultsDir ? null : outDir);
    foreach (var f in ignored)
    {
        Console.Error.WriteLine($"report: ignoring {Path.GetRelativePath(resultsDir, f)}: not a crank result, run.json or sweep.json");
    }
    if (runs.Count == 0)
    {
        throw new ReportException($"{resultsDir}: no result files (*.json with a \"jobResults\" object, as crank --json and crank/run-local.sh write)");
    }
    Directory.CreateDirectory(outDir);
    var report = new MarkdownReport(resultsDir, outDir, runs, metas, drawCharts: command.Png);
    var markdown = report.Build();
    var path = Path.Combine(outDir, "report.md");
    File.WriteAllText(path, markdown);
    if (command.PrintTable && report.HeadlineTable.Length > 0)
    {
        Console.Write($"<!-- table:start -->\n{report.Headline!.Label}\n\n{report.HeadlineTable}<!-- table:end -->\n");
    }
    Console.WriteLine($"report: {runs.Count} run(s) -> {path} ({report.ChartFiles.Count} PNG chart(s){(command.Png ? "" : "; --no-png")})");
});
