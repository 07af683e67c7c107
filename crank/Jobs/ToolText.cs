using System.Globalization;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;

namespace LLRP.Jobs;

/// <summary>Reading the load tools' text reports (fields split at blanks, a field's leading number) and writing the
/// figures a job computes from them, in .NET's invariant formatting.</summary>
internal static partial class ToolText
{
    /// <summary>Fields split at runs of blanks, leading and trailing ones dropped.</summary>
    public static string[] Fields(string line) => line.Split([' ', '\t'], StringSplitOptions.RemoveEmptyEntries);

    /// <summary>The number <paramref name="text"/> starts with, leading blanks skipped ("12.57k" is 12.57), 0 when
    /// none.</summary>
    public static double Number(string text)
    {
        var m = LeadingNumber().Match(text);
        return m.Success ? double.Parse(m.Value, NumberStyles.Float, CultureInfo.InvariantCulture) : 0;
    }

    /// <summary>Whether <paramref name="text"/> is a number as a whole.</summary>
    public static bool IsNumber(string text) => WholeNumberText().IsMatch(text);

    /// <summary>A figure of the statistics block, the value as computed.</summary>
    public static Measurement Row(string name, string aggregate, string reduce, string brief, string description, string format, double value) =>
        new(name, aggregate, reduce, brief, description, format, JsonValue.Create(value));

    /// <summary><paramref name="value"/> with <paramref name="decimals"/> decimals.</summary>
    public static string F(double value, int decimals) => value.ToString($"F{decimals}", CultureInfo.InvariantCulture);

    [GeneratedRegex(@"^\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")]
    private static partial Regex LeadingNumber();

    [GeneratedRegex(@"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$")]
    private static partial Regex WholeNumberText();
}
