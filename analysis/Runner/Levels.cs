using System.CommandLine;
using System.CommandLine.Help;
using System.CommandLine.Parsing;
using System.Globalization;
using System.Text.Encodings.Web;
using System.Text.Json;

namespace LLRP.Runner;

/// <summary>How a study that runs run-local once per level calls it and the report: the fixed-rate shares
/// (<see cref="FixedRateStudy"/>) and the stepped comparison's offered rates (<see cref="SteppedStudy"/>). Tests give
/// their own run-local and report.</summary>
/// <param name="RunLocal">runs crank/run-local.sh with these arguments on this console; its exit status</param>
/// <param name="Report">runs analysis/Report with this flag (--fixed-rate, --stepped) on this folder, its output in
/// the folder's report.log; its exit status</param>
internal sealed record LevelHooks(Func<IReadOnlyList<string>, int> RunLocal, Func<string, string, int> Report)
{
    // The bash studies' bound on the report: analysis/Report builds first when it is out of date (a few minutes on the
    // 2-core box) and then draws every chart; 900 s leaves room for both and still ends a report that hangs.
    private const int ReportSeconds = 900;

    /// <summary>The real ones: crank/run-local.sh of this checkout, and `dotnet run --project analysis/Report`.</summary>
    public static LevelHooks For(string root) => new(
        args => ProcessGroups.RunAttached([Path.Combine(root, "crank", "run-local.sh"), .. args]),
        (flag, dir) =>
        {
            var log = Path.Combine(dir, "report.log");
            File.Delete(log);
            return ProcessGroups.Run(["dotnet", "run", "--project", "analysis/Report/Report.csproj", "-c", "Release", "--", flag, dir],
                TimeSpan.FromSeconds(ReportSeconds), root, log).Code;
        });
}

/// <summary>What the per-level studies share besides the hooks.</summary>
internal static class Levels
{
    public static readonly JsonSerializerOptions Indented = new() { WriteIndented = true, Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping };

    /// <summary>The command line as the study's JSON records it.</summary>
    public static string CommandLine(string command, IEnumerable<string> args) => command + ShellWord.Spaced(args);

    /// <summary>The results folder, made and absolute: the given one, else artifacts/crank/<paramref name="prefix"/>-&lt;date&gt;-&lt;time&gt;.</summary>
    public static string OutFolder(string given, string root, string prefix)
    {
        var dir = given.Length > 0 ? given : Path.Combine(root, "artifacts", "crank", $"{prefix}-{DateTime.Now:yyyyMMdd-HHmmss}");
        Directory.CreateDirectory(dir);
        return Path.TrimEndingDirectorySeparator(Path.GetFullPath(dir));
    }

    /// <summary>A study's entry: its options parsed, then its help or the study; a usage error is one line naming the
    /// study and exit status 2.</summary>
    public static int Study<T>(string who, Command command, Func<T> parse, Func<T, bool> help, Func<T, int> execute)
    {
        try
        {
            var o = parse();
            if (help(o))
            {
                Cli.WriteHelp(command);
                return 0;
            }
            return execute(o);
        }
        catch (UsageException e)
        {
            Console.Error.WriteLine($"{who}: {e.Message} (see --help)");
            return 2;
        }
    }

    /// <summary>run-local's options, which a study passes on to each call, except the study's <paramref name="own"/>
    /// and <paramref name="setHere"/>, refused with "OPTION is set by this script<paramref name="why"/>".</summary>
    public static IEnumerable<Symbol> RunLocalOptions(string[] own, string why, params string[] setHere) =>
        OptionParser.Command.Options.Where(o => o is not HelpOption && !setHere.Contains(o.Name) && !own.Contains(o.Name))
            .Concat(setHere.Select(n => Cli.Refused(n, $"{n} is set by this script{why}")));

    /// <summary>The run-local options given on the study's command line, as run-local's words, in their order there.</summary>
    public static List<string> Passed(ParseResult parsed) =>
    [
        .. OptionParser.Command.Options.Select(parsed.GetResult).OfType<OptionResult>()
            .Where(r => r is { Implicit: false, IdentifierToken: not null } && r.Option.Parents.Contains(parsed.CommandResult.Command))
            .OrderBy(r => parsed.Tokens.ToList().IndexOf(r.IdentifierToken!))
            .SelectMany(r => r.Option.Arity.MaximumNumberOfValues == 0 ? [r.Option.Name] : r.Tokens.SelectMany(t => new[] { r.Option.Name, t.Value })),
    ];

    /// <summary>The report on <paramref name="dir"/>: its line, or the failure with report.log's last lines; 0 or 1.</summary>
    public static int Report(LevelHooks hooks, string who, string flag, string dir, string markdown)
    {
        if (hooks.Report(flag, dir) == 0)
        {
            Console.Out.WriteLine($"{who}: report {Path.Combine(dir, markdown)}");
            return 0;
        }
        var log = Path.Combine(dir, "report.log");
        Console.Error.WriteLine($"{who}: the report failed; last lines of {log}:");
        Console.Error.Write(ProcessGroups.Tail(log, 15));
        return 1;
    }

    /// <summary>The number in a JSON value, or null (absent, null, a string...).</summary>
    public static double? Num(System.Text.Json.Nodes.JsonNode? node) =>
        node is System.Text.Json.Nodes.JsonValue v && v.GetValueKind() == JsonValueKind.Number ? v.GetValue<double>() : null;
}
