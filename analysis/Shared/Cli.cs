using System.CommandLine;
using System.CommandLine.Help;
using System.CommandLine.Parsing;
using System.Globalization;

namespace LLRP.Analysis;

/// <summary>Bad usage: one line on stderr, exit status 2. <see cref="SeeHelp"/> adds " (see --help)".</summary>
internal sealed class UsageException(string message, bool seeHelp = true) : Exception(message)
{
    public bool SeeHelp { get; } = seeHelp;
}

/// <summary>The harness's command lines on System.CommandLine: each option declared once with its description and
/// default (the generated --help shows both); whole numbers and choices are checked with one line that names the option.</summary>
internal static class Cli
{
    // No response files: a value such as "@host" stays a value, as it was for the hand-written parsers.
    private static readonly ParserConfiguration Config = new() { ResponseFileTokenReplacer = null };

    /// <summary>A command whose only built-in option is --help (no --version, no directives). Its action does nothing:
    /// the caller acts on the parse result (a command with subcommands and no action would be refused).</summary>
    public static Command Command(string name, string description, params IEnumerable<Symbol> symbols)
    {
        var command = new Command(name, description) { new HelpOption() };
        command.SetAction(_ => 0);
        foreach (var symbol in symbols)
        {
            switch (symbol)
            {
                case Option o: command.Add(o); break;
                case Argument a: command.Add(a); break;
                case Command c: command.Add(c); break;
            }
        }
        return command;
    }

    /// <summary>The parsed command line, or null when it asks for --help; a bad option or value is a
    /// <see cref="UsageException"/> with the parser's first message.</summary>
    public static ParseResult? Parse(Command command, IReadOnlyList<string> args)
    {
        var result = command.Parse(args, Config);
        // An unknown option lands among the command's arguments (SCENARIO...) when they take any number of words; the
        // words after "--" are arguments whatever they look like.
        var tokens = result.Tokens.ToList();
        var dashDash = tokens.FindIndex(t => t.Type == TokenType.DoubleDash);
        var unknown = result.UnmatchedTokens.Concat(command.Arguments.Concat(result.CommandResult.Command.Arguments)
                .SelectMany(a => result.GetResult(a)?.Tokens.Where(t => dashDash < 0 || tokens.IndexOf(t) < dashDash).Select(t => t.Value) ?? []))
            .FirstOrDefault(t => t.StartsWith('-'));
        return result.Action is HelpAction ? null
            : unknown is not null ? throw new UsageException($"unknown option {unknown}")
            : result.UnmatchedTokens is [var t, ..] ? throw new UsageException($"unexpected argument '{t}'")
            : result.Errors.Count > 0 ? throw new UsageException(result.Errors[0].Message)
            : result;
    }

    /// <summary>Writes the generated help of <paramref name="command"/> (of the subcommand <paramref name="args"/> name)
    /// to stdout.</summary>
    public static void WriteHelp(Command command, IReadOnlyList<string>? args = null) =>
        command.Parse(args ?? ["--help"], Config).Invoke(new InvocationConfiguration { Output = Console.Out });

    /// <summary>Parses, prints the help (exit 0) or the one-line refusal "<paramref name="prefix"/>: message (see --help)"
    /// (exit 2), or runs <paramref name="run"/>.</summary>
    public static int Run(string prefix, Command command, IReadOnlyList<string> args, Func<ParseResult, int> run)
    {
        try
        {
            if (Parse(command, args) is not { } parsed)
            {
                WriteHelp(command, args);
                return 0;
            }
            return run(parsed);
        }
        catch (UsageException e)
        {
            Console.Error.WriteLine($"{prefix}: {e.Message}{(e.SeeHelp ? " (see --help)" : "")}");
            return 2;
        }
    }

    public static bool Given(this ParseResult result, Option option) => result.GetResult(option) is { Implicit: false };

    /// <summary>An option given more than once takes its last value, as the hand-written parsers did (crank/smoke.sh
    /// gives --connections twice); each mention takes one word.</summary>
    public static Option<T> LastWins<T>(Option<T> option, Func<ArgumentResult, T>? parse = null)
    {
        option.Arity = ArgumentArity.OneOrMore;
        option.AllowMultipleArgumentsPerToken = false;
        option.CustomParser = parse ?? (r => (T)(object)r.Tokens[^1].Value);
        return option;
    }

    /// <summary>A whole number (digits only), <paramref name="min"/> to <paramref name="max"/>.</summary>
    public static Option<int> Int(string name, int @default, string description, int min = 0, string helpName = "N", int max = int.MaxValue) =>
        LastWins(new Option<int>(name) { Description = description, HelpName = helpName, DefaultValueFactory = _ => @default }, r => Whole(r, name, min, max) ?? 0);

    /// <summary>A whole number without a default (null when not given).</summary>
    public static Option<int?> OptionalInt(string name, string description, int min = 0, string helpName = "N") =>
        LastWins(new Option<int?>(name) { Description = description, HelpName = helpName }, r => Whole(r, name, min));

    private static int? Whole(ArgumentResult r, string name, int min, int max = int.MaxValue)
    {
        var text = r.Tokens.Count > 0 ? r.Tokens[^1].Value : "";
        var n = 0;
        var whole = text.Length > 0 && text.All(char.IsAsciiDigit) && int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out n);
        if (whole && n >= min && n <= max)
        {
            return n;
        }
        r.AddError(whole && n > max ? $"{name}: at most {max}" : $"{name} needs a whole number{(min > 0 ? $" >= {min}" : "")}, got '{text}'");
        return null;
    }

    /// <summary>A text value; <paramref name="problem"/> says what is wrong with a given one (null: nothing).</summary>
    public static Option<string> Text(string name, string @default, string description, string helpName, Func<string, string?>? problem = null)
    {
        var option = LastWins(new Option<string>(name) { Description = description, HelpName = helpName, DefaultValueFactory = _ => @default });
        return problem is null ? option : Checked(option, r => problem(r.GetValueOrDefault<string>() ?? ""));
    }

    /// <summary>The option refused with what <paramref name="problem"/> says of it when it is given (null: nothing).</summary>
    private static T Checked<T>(T option, Func<OptionResult, string?> problem) where T : Option
    {
        option.Validators.Add(r =>
        {
            if (!r.Implicit && problem(r) is { } message)
            {
                r.AddError(message);
            }
        });
        return option;
    }

    /// <summary>"NAME needs a value" for an empty one.</summary>
    public static Func<string, string?> NonEmpty(string name, string what = "a value") => v => v.Length > 0 ? null : $"{name} needs {what}";

    /// <summary>One of <paramref name="allowed"/>.</summary>
    public static Option<string> Choice(string name, string @default, string description, params string[] allowed) =>
        Text(name, @default, description, string.Join('|', allowed), v => allowed.Contains(v) ? null : $"{name} must be {Words(allowed)}, not '{v}'");

    public static Option<bool> Flag(string name, string description) => new(name) { Description = description, Arity = ArgumentArity.Zero };

    /// <summary>A repeatable option: every value given, in order.</summary>
    public static Option<string[]> Many(string name, string description, string helpName) =>
        new(name) { Description = description, HelpName = helpName, DefaultValueFactory = _ => [] };

    /// <summary>A retired option: refused with <paramref name="message"/>, absent from the help.</summary>
    public static Option<bool> Refused(string name, string message) =>
        Checked(new Option<bool>(name) { Hidden = true, Arity = ArgumentArity.Zero }, _ => message);

    /// <summary>"a, b or c".</summary>
    public static string Words(string[] w) => w.Length == 1 ? w[0] : string.Join(", ", w[..^1]) + " or " + w[^1];
}

/// <summary>What each option sets in <typeparamref name="T"/>: declared next to the option, applied after parsing.</summary>
internal sealed class Binder<T>
{
    private readonly List<Action<T, ParseResult>> _apply = [];

    public Option<V> Bind<V>(Option<V> option, Action<T, V> apply) => Bind(option, (o, v, _) => apply(o, v));

    /// <summary><c>given</c> tells a value on the command line from the default.</summary>
    public Option<V> Bind<V>(Option<V> option, Action<T, V, bool> apply)
    {
        _apply.Add((o, r) => apply(o, r.GetValue(option)!, r.Given(option)));
        return option;
    }

    public T Apply(T o, ParseResult result)
    {
        foreach (var apply in _apply)
        {
            apply(o, result);
        }
        return o;
    }
}
