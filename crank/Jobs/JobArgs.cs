using System.Globalization;

namespace LLRP.Jobs;

/// <summary>A job's command line, read left to right: options take their value from the next argument.</summary>
internal sealed class JobArgs(IReadOnlyList<string> args)
{
    private int _next;

    /// <summary>Moves to the next argument; false at the end.</summary>
    public bool Next(out string arg)
    {
        if (_next >= args.Count)
        {
            arg = "";
            return false;
        }
        arg = args[_next++];
        return true;
    }

    /// <summary>The value of <paramref name="option"/>, the argument after it.</summary>
    public string Value(string option)
    {
        if (_next >= args.Count || args[_next].Length == 0)
        {
            throw JobFailure.BadUsage($"{option} needs a value");
        }
        return args[_next++];
    }

    /// <summary>A whole number of <paramref name="option"/>; crank passes seconds, also written "15s".</summary>
    public int WholeNumber(string option) => WholeNumberOf(Value(option));

    /// <summary>A whole number of <paramref name="option"/> that is a count, not seconds: no trailing "s".</summary>
    public int Count(string option)
    {
        var value = Value(option);
        return value.EndsWith('s') ? throw JobFailure.BadUsage($"not a whole number: {value}") : WholeNumberOf(value);
    }

    /// <summary><paramref name="value"/> as a whole number (a trailing "s" allowed: seconds).</summary>
    public static int WholeNumberOf(string value)
    {
        var digits = value.EndsWith('s') ? value[..^1] : value;
        if (digits.Length == 0 || !digits.All(char.IsAsciiDigit)
            || !int.TryParse(digits, NumberStyles.None, CultureInfo.InvariantCulture, out var n))
        {
            throw JobFailure.BadUsage($"not a whole number: {value}");
        }
        return n;
    }

    /// <summary>A load job's one positional argument, its URL: <paramref name="arg"/>, when it is not an option and no
    /// URL was given before it (<paramref name="given"/> null or empty).</summary>
    public static string Url(string? given, string arg)
    {
        if (arg.StartsWith('-'))
        {
            throw JobFailure.BadUsage($"unknown option {arg}");
        }
        return string.IsNullOrEmpty(given) ? arg : throw JobFailure.BadUsage($"more than one URL ({given}, {arg})");
    }

    /// <summary>The figure as crank's block writes it: invariant culture.</summary>
    public static string I(double value) => value.ToString(CultureInfo.InvariantCulture);
}
