using System.Globalization;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;

namespace LLRP.Jobs;

/// <summary>Numbers as the bash jobs' awk (mawk) read and printed them, so the statistics stay value for value the
/// same: a field's leading number, and a computed figure printed with OFMT=%.10g (a whole one with %d).</summary>
internal static partial class Awk
{
    /// <summary>The digits the jobs print of a computed figure (their awk's OFMT=%.10g).</summary>
    public const int SignificantDigits = 10;

    // 2^53: below it mawk prints a whole value with %d (and a double holds it exactly); the counts stay far below.
    private const double MaxWhole = 9007199254740992;

    /// <summary>awk's default field splitting: at runs of blanks, leading and trailing ones dropped.</summary>
    public static string[] Fields(string line) => line.Split([' ', '\t'], StringSplitOptions.RemoveEmptyEntries);

    /// <summary>The number <paramref name="text"/> starts with, leading blanks skipped (awk's "$2 + 0": "12.57k" is
    /// 12.57), 0 when none.</summary>
    public static double Number(string text)
    {
        var m = LeadingNumber().Match(text);
        return m.Success ? double.Parse(m.Value, NumberStyles.Float, CultureInfo.InvariantCulture) : 0;
    }

    /// <summary>Whether <paramref name="text"/> is a number as a whole (awk compares it as one).</summary>
    public static bool IsNumber(string text) => WholeNumberText().IsMatch(text);

    /// <summary><paramref name="value"/> as printed with OFMT=%.10g and read back: whole numbers whole, any other to
    /// ten significant digits (.NET's "G10" rounds as C's printf does: to nearest, an exact tie to even).</summary>
    public static double Printed(double value) =>
        value == Math.Floor(value) && Math.Abs(value) < MaxWhole ? value : Round($"G{SignificantDigits}", value);

    /// <summary><paramref name="value"/> as printf "%.Nf" writes it, read back (a figure rounded to N decimals).</summary>
    public static double Fixed(double value, int decimals) => Round($"F{decimals}", value);

    /// <summary>A figure of the statistics block as the bash jobs' awk printed it (<see cref="Printed"/>).</summary>
    public static Measurement Row(string name, string aggregate, string reduce, string brief, string description, string format, double value) =>
        new(name, aggregate, reduce, brief, description, format, JsonValue.Create(Printed(value)));

    /// <summary>printf "%.Nf".</summary>
    public static string F(double value, int decimals) => value.ToString($"F{decimals}", CultureInfo.InvariantCulture);

    private static double Round(string format, double value) =>
        double.IsFinite(value)
            ? double.Parse(value.ToString(format, CultureInfo.InvariantCulture), NumberStyles.Float, CultureInfo.InvariantCulture)
            : value;

    [GeneratedRegex(@"^\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")]
    private static partial Regex LeadingNumber();

    [GeneratedRegex(@"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$")]
    private static partial Regex WholeNumberText();
}
