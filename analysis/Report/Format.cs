using System.Globalization;
using System.Text;

namespace LLRP.Analysis;

internal static class Format
{
    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;

    public const string None = "-";

    public static string N0(double? v) => v is { } d && double.IsFinite(d) ? d.ToString("N0", Inv) : None;

    public static string F(double? v, int decimals) => v is { } d && double.IsFinite(d) ? d.ToString("F" + decimals.ToString(Inv), Inv) : None;

    /// <summary>Two significant decimals for small values, fewer for large (latencies, µs).</summary>
    public static string Auto(double? v) => v switch
    {
        null => None,
        { } d when !double.IsFinite(d) => None,
        { } d when Math.Abs(d) >= 100 => d.ToString("F0", Inv),
        { } d when Math.Abs(d) >= 10 => d.ToString("F1", Inv),
        { } d => d.ToString("F2", Inv),
    };

    public static string Ratio(double? v) => v is { } d && double.IsFinite(d) ? d.ToString("F2", Inv) : "n/a";

    public static string Percent(double? v) => v is { } d && double.IsFinite(d) ? (d >= 0 ? "+" : "") + d.ToString("F1", Inv) + " %" : None;

    public static string Bytes(long? n) => n switch
    {
        null => "? B",
        >= 1024 * 1024 when n % (1024 * 1024) == 0 => (n / (1024 * 1024))?.ToString(Inv) + " MB",
        >= 1024 when n % 1024 == 0 => (n / 1024)?.ToString(Inv) + " KB",
        _ => n?.ToString(Inv) + " B",
    };

    public static string Inline(string s) => s.Replace("|", "\\|", StringComparison.Ordinal).Replace("\n", " ", StringComparison.Ordinal);

    /// <summary>A table with a row per scenario and a column per level (the level studies' and the comparisons' tables).</summary>
    public static void Table<TLevel>(StringBuilder md, string first, IReadOnlyList<TLevel> levels, Func<TLevel, string> column, IReadOnlyList<string> scenarios,
        Func<string, TLevel, string> cell)
    {
        md.Append(Inv, $"| {first} |").AppendJoin("", levels.Select(l => $" {column(l)} |"))
          .Append("\n|---|").Append(string.Concat(levels.Select(_ => "--:|"))).Append('\n');
        foreach (var s in scenarios)
        {
            md.Append(Inv, $"| {s} |").AppendJoin("", levels.Select(l => $" {cell(s, l)} |")).Append('\n');
        }
        md.Append('\n');
    }
}
