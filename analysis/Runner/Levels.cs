using System.CommandLine;
using System.CommandLine.Help;
using System.CommandLine.Parsing;
using System.Globalization;
using System.Text.Json;
using System.Text.Json.Nodes;

namespace LLRP.Runner;

/// <summary>How a study over levels calls run-local and the report (tests give their own).</summary>
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

/// <summary>What every study over levels takes: the scenarios, run-local's options passed on, --out and --no-report.</summary>
internal abstract class LevelOptions
{
    public string Out = "";
    public bool Report, Help;
    public List<string> Pass = [];
    public readonly List<string> Scenarios = [];
}

/// <summary>One level of a study: its offered rate, its results folder (under the study's), the line announcing it,
/// and why it is skipped (null: it runs).</summary>
internal sealed record Level(long Rate, string Folder, string Label, string? Skip = null);

/// <summary>A study over levels as a configuration of <see cref="Levels.Drive"/>: its name (log prefix, results
/// folder prefix, plan and report file stem), the report's flag, the run-local options it sets before the passed ones
/// (so a later one wins) and those it fixes after them at a rate, and the verdict on a scenario's runs at a level
/// (results folder, scenario, rate: "ok" or why it failed; null keeps every scenario at every level).</summary>
internal sealed record LevelStudy(string Name, string ReportFlag, string[] SetBefore, Func<long, IEnumerable<string>> SetAfter,
    Func<string, string, long, string>? Verdict = null);

/// <summary>The driver of a study over levels (the fixed-rate shares, <see cref="FixedRateStudy"/>; the stepped
/// comparison's offered rates, <see cref="SteppedStudy"/>): one run-local call per level into DIR/&lt;folder&gt;/
/// with the scenarios still standing, a scenario that fails a level left out of the next ones, then the report.</summary>
internal static class Levels
{

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

    /// <summary>A run's result file, or null when it is not JSON (a file run-local did not finish).</summary>
    public static JsonNode? ReadRun(string file)
    {
        try
        {
            return JsonNode.Parse(File.ReadAllText(file));
        }
        catch (JsonException)
        {
            return null;
        }
    }

    /// <summary>The number in a JSON value, or null (absent, null, a string...).</summary>
    public static double? Num(JsonNode? node) =>
        node is JsonValue v && v.GetValueKind() == JsonValueKind.Number ? v.GetValue<double>() : null;

    /// <summary>The scenarios argument, its default named in the help.</summary>
    public static Argument<string[]> Scenarios(string[] defaults) =>
        new("SCENARIO") { Arity = ArgumentArity.ZeroOrMore, Description = $"default: {string.Join(' ', defaults)}" };

    /// <summary>--out and --no-report, as every study over levels has them.</summary>
    public static IEnumerable<Symbol> OutAndReport<T>(Binder<T> b, string name, string levelFolder, string level, string planAdds) where T : LevelOptions =>
    [
        b.Bind(Cli.Text("--out", "", $"results (default artifacts/crank/{name}-<date>-<time>): DIR/{levelFolder}/ is one run-local.sh folder per " +
            $"{level}, DIR/{name}.json the plan{planAdds}, DIR/{name}.md + PNGs the report", "DIR", Cli.NonEmpty("--out", "a folder")),
            (o, v) => o.Out = v),
        b.Bind(Cli.Flag("--no-report", "do not write the report"), (o, v) => o.Report = !v),
    ];

    /// <summary>A study's options from its command line: run-local's passed on, each scenario word through
    /// <paramref name="scenario"/>, <paramref name="defaults"/> when none is named.</summary>
    public static T Parse<T>(Command command, Binder<T> b, Argument<string[]> scenarios, string[] defaults, IReadOnlyList<string> args,
        Action<T, string> scenario) where T : LevelOptions, new()
    {
        if (Cli.Parse(command, args) is not { } parsed)
        {
            return new T { Help = true };
        }
        var o = b.Apply(new T(), parsed);
        o.Pass = Passed(parsed);
        foreach (var a in parsed.GetValue(scenarios) ?? [])
        {
            scenario(o, a);
        }
        if (o.Scenarios.Count == 0)
        {
            o.Scenarios.AddRange(defaults);
        }
        return o;
    }

    /// <summary>Runs the levels in order while a scenario stands; each level's failures land in
    /// <paramref name="failed"/> (scenario: rate and reason), each level run in <paramref name="ran"/>. Exit status 1
    /// when a level was skipped or a run-local call failed.</summary>
    public static int Drive(LevelStudy study, LevelOptions o, LevelHooks hooks, string dir, IEnumerable<Level> levels, List<long> ran, JsonObject failed)
    {
        var rc = 0;
        var standing = o.Scenarios.ToList();
        foreach (var level in levels.TakeWhile(_ => standing.Count > 0))
        {
            if (level.Skip is { } skip)
            {
                Console.Error.WriteLine($"{study.Name}: {skip}; skipped");
                rc = 1;
                continue;
            }
            ran.Add(level.Rate);
            Console.Out.WriteLine($"{study.Name}: {level.Label}{(study.Verdict is null ? "" : $" offered to {string.Join(' ', standing)}")}");
            var folder = Path.Combine(dir, level.Folder);
            List<string> call = ["--no-report", .. study.SetBefore, .. o.Pass, .. study.SetAfter(level.Rate), "--json-dir", folder, .. standing];
            if (hooks.RunLocal(call) != 0)
            {
                rc = 1;
            }
            foreach (var s in standing.ToList())
            {
                if (study.Verdict?.Invoke(folder, s, level.Rate) is { } why && why != "ok")
                {
                    Console.Out.WriteLine($"{study.Name}: {s} failed at {level.Rate} requests/s: {why}");
                    failed[s] = new JsonObject { ["rate"] = level.Rate, ["reason"] = why };
                    standing.Remove(s);
                }
            }
        }
        if (study.Verdict is not null && standing.Count > 0)
        {
            Console.Out.WriteLine($"{study.Name}: still standing after the last step: {string.Join(' ', standing)}");
        }
        return rc;
    }

    /// <summary>The study's plan, DIR/&lt;name&gt;.json.</summary>
    public static void WritePlan(LevelStudy study, string dir, JsonObject plan) =>
        Program.WriteJson(Path.Combine(dir, study.Name + ".json"), plan);

    /// <summary>The report, when asked for: 0, or 1 when it failed.</summary>
    public static int Report(LevelStudy study, LevelOptions o, LevelHooks hooks, string dir) =>
        o.Report ? Report(hooks, study.Name, study.ReportFlag, dir, study.Name + ".md") : 0;

    /// <summary>A list as a JSON array.</summary>
    public static JsonArray Array(IEnumerable<long> values) => new([.. values.Select(v => JsonValue.Create(v))]);

    /// <inheritdoc cref="Array(IEnumerable{long})"/>
    public static JsonArray Array(IEnumerable<string> values) => new([.. values.Select(v => JsonValue.Create(v))]);
}
