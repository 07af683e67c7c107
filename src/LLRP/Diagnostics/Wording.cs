using System.Globalization;

namespace LLRP.Diagnostics;

/// <summary>Counts in the lines the proxy prints, with the noun in the right number ("1 request", "2 requests").</summary>
internal static class Wording
{
    public static string Count(long count, string singular, string plural) =>
        string.Create(CultureInfo.InvariantCulture, $"{count} {(count == 1 ? singular : plural)}");
}
