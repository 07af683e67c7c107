using System.CommandLine;
using LLRP.Analysis;

return ReportCli.Run(args);

namespace LLRP.Analysis
{
    /// <summary>Report's command line: the benchmark report on a results folder, or one of the other reports and tools as
    /// a "--name" command. Exit status: 0 written, 1 input it cannot use (the message names the file), 2 bad usage.</summary>
    internal static class ReportCli
    {
        private static Argument<string> Folder(string name, string description) => new(name) { Description = description };

        private static Option<string?> Out() =>
            Cli.LastWins(new Option<string?>("--out") { Description = "where the report goes (default: the results folder)", HelpName = "DIR" });

        private static Option<bool> NoPng() => Cli.Flag("--no-png", "write no PNG charts");

        /// <summary>A report on one results folder: --out and --no-png, then <paramref name="write"/>.</summary>
        private static Command Study(string name, string description, Func<ReportCommand, int> write)
        {
            var (dir, @out, noPng) = (Folder("results-dir", "the runs' folder"), Out(), NoPng());
            var command = Cli.Command(name, description, dir, @out, noPng);
            Actions[command] = p => write(ReportCommand.Of(p.GetValue(dir)!, p.GetValue(@out), !p.GetValue(noPng)));
            return command;
        }

        private static readonly Dictionary<Command, Func<ParseResult, int>> Actions = [];

        internal static readonly Command Command = Build();

        private static Command Build()
        {
            var (dir, @out, noPng) = (new Argument<string>("results-dir")
            {
                Arity = ArgumentArity.ZeroOrOne,
                Description = "every crank --json / run-local.sh result under it (recursively)",
            }, Out(), NoPng());
            var printTable = Cli.Flag("--print-table", "also print the headline table (the README's columns) between <!-- table:start --> and " +
                "<!-- table:end --> lines");
            var headline = new Argument<string[]>("sitting-dir") { Arity = ArgumentArity.OneOrMore, Description = "the sittings" };
            var prune = Cli.Flag("--prune", "leave only sitting.json (before a sitting is committed)");
            var aggregate = Folder("dir", "the sitting");
            var print = Cli.Flag("--print", "write the rows to standard output, leave docs/results.md");
            var (tlsDirs, tlsOut, tlsNoPng) = (new Argument<string[]>("dir")
            {
                Arity = new ArgumentArity(2, 3),
                Description = "the runs http → http, https → http and, optionally, https → https",
            }, Out(), NoPng());
            tlsOut.Required = true;
            Command headlineCommand = Cli.Command("--headline", "print the README's headline table as Markdown", headline),
                aggregateCommand = Cli.Command("--aggregate", "fold a sitting into DIR/sitting.json, the form it is committed in (analysis/aggregate.sh)",
                    prune, aggregate),
                indexCommand = Cli.Command("--index", "write the index of analysis/results/ into docs/results.md, a row per folder", print),
                tlsCommand = Cli.Command("--tls-layer", "one report over the same scenarios run once per scheme pair, whose layer table has the " +
                    "TLS layer (docs/tls.md)", tlsDirs, tlsOut, tlsNoPng);
            var root = Cli.Command("Report", "Reads every crank --json / run-local.sh result under <results-dir> and writes <dir>/report.md " +
                "with PNG charts (default <dir>: the results folder). Exit status: 0 written, 1 input it cannot use (the message names " +
                "the file), 2 bad usage.", dir, @out, noPng, printTable,
                Study("--comparisons", "comparisons.md of crank/run-local.sh scaling|sweep|ab|ramp|comparisons", Comparisons.Run),
                Study("--fixed-rate", "fixedrate.md of crank/run-local.sh fixed-rate", FixedRate.Run),
                Study("--stepped", "stepped.md of crank/run-local.sh stepped", Stepped.Run),
                headlineCommand, aggregateCommand, indexCommand, tlsCommand);
            Actions[root] = p => p.GetValue(dir) is { } d
                ? Benchmarks(ReportCommand.Of(d, p.GetValue(@out), !p.GetValue(noPng)), p.GetValue(printTable))
                : throw new UsageException("give the results folder");
            Actions[headlineCommand] = p => Headline.Run(p.GetValue(headline)!);
            Actions[aggregateCommand] = p => Aggregate.Run(p.GetValue(aggregate)!, p.GetValue(prune));
            Actions[indexCommand] = p => ResultsIndex.Run(p.GetValue(print));
            Actions[tlsCommand] = p => TlsLayerCommand.Run(p.GetValue(tlsDirs)!, p.GetValue(tlsOut)!, !p.GetValue(tlsNoPng));
            return root;
        }

        public static int Run(string[] args) => Cli.Run("report", Command, args, p => Actions[p.CommandResult.Command](p));

        /// <summary>report.md over every run under the results folder.</summary>
        private static int Benchmarks(ReportCommand command, bool printTable) => ReportCommand.Run(() =>
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
            if (printTable && report.HeadlineTable.Length > 0)
            {
                Console.Write($"<!-- table:start -->\n{report.Headline!.Label}\n\n{report.HeadlineTable}<!-- table:end -->\n");
            }
            Console.WriteLine($"report: {runs.Count} run(s) -> {path} ({report.ChartFiles.Count} PNG chart(s){(command.Png ? "" : "; --no-png")})");
        });
    }
}
