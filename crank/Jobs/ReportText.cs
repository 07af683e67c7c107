using System.Globalization;
using System.Numerics;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;

namespace LLRP.Jobs;

/// <summary>Reading a tool's text report the way the bash jobs' awk read it, so that the figures stay the same: fields
/// split at blanks, a field's leading number, and figures kept to ten significant digits.</summary>
internal static partial class ReportText
{
    /// <summary>The digits the bash jobs kept of a computed figure (awk's OFMT=%.10g; its default, six, lost digits
    /// of a rate like 24683.12 when converted).</summary>
    public const int SignificantDigits = 10;

    // 2^53: up to it a double holds every whole number exactly; the jobs' counts stay far below it.
    private const double MaxWhole = 9007199254740992;

    /// <summary>The line's fields: awk's default splitting, at runs of blanks, leading and trailing ones dropped.</summary>
    public static string[] Fields(string line) => line.Split([' ', '\t'], StringSplitOptions.RemoveEmptyEntries);

    /// <summary>The number <paramref name="text"/> starts with (awk's "$2 + 0": "12.57k" is 12.57), 0 when none.</summary>
    public static double Number(string text)
    {
        var m = LeadingNumber().Match(text);
        return m.Success ? double.Parse(m.Value, NumberStyles.Float, CultureInfo.InvariantCulture) : 0;
    }

    /// <summary><paramref name="value"/> as the bash jobs' awk printed it with OFMT=%.10g and jq copied it: a whole
    /// number whole (awk prints an integral value with "%d"), any other to <see cref="SignificantDigits"/>.</summary>
    public static double AwkPrinted(double value) =>
        value == Math.Floor(value) && Math.Abs(value) < MaxWhole ? value : TenDigits(value);

    /// <summary><paramref name="value"/> rounded to <see cref="SignificantDigits"/> as C's printf "%.10g" rounds (to
    /// nearest, an exact tie to even), so the JSON number (System.Text.Json writes the shortest text that reads back
    /// the same) is the one awk printed and jq copied.</summary>
    public static double TenDigits(double value)
    {
        if (value == 0 || !double.IsFinite(value))
        {
            return value;
        }
        // The exact decimal expansion of the double: at most 767 significant digits.
        var exact = Math.Abs(value).ToString("E800", CultureInfo.InvariantCulture);
        var e = exact.IndexOf('E');
        var digits = exact[0] + exact[2..e];
        var exponent = int.Parse(exact[(e + 1)..], NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture);
        var kept = BigInteger.Parse(digits[..SignificantDigits], CultureInfo.InvariantCulture);
        var rest = digits[SignificantDigits..];
        var up = rest[0] > '5' || (rest[0] == '5' && (rest.AsSpan(1).ContainsAnyExcept('0') || !kept.IsEven));
        var rounded = (up ? kept + 1 : kept).ToString(CultureInfo.InvariantCulture);
        var result = double.Parse($"{rounded}E{exponent - (SignificantDigits - 1)}", NumberStyles.Float, CultureInfo.InvariantCulture);
        return value < 0 ? -result : result;
    }

    /// <summary>A numeric figure of a report with both descriptions, its value <see cref="AwkPrinted"/>.</summary>
    public static Measurement Row(string name, string aggregate, string reduce, string shortDescription, string longDescription,
        string format, double value) =>
        new(name, aggregate, reduce, shortDescription, longDescription, format, JsonValue.Create(AwkPrinted(value)));

    [GeneratedRegex(@"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")]
    private static partial Regex LeadingNumber();
}
