using System.Globalization;
using System.Text;

namespace LLRP.Analysis;

/// <summary>
/// What each scenario of an https point negotiated with the load (crank/wrk-job.sh's probe of its target): the TLS
/// version, cipher suite and key exchange group, which every proxy must share for their figures to compare, and whether
/// the target resumed a session, which decides what a handshake point measured.
/// </summary>
internal static class TlsNegotiated
{
    public const string NotProbed = "not probed";

    public static void Write(StringBuilder md, Point p, IReadOnlyList<ScenarioSummary> rows)
    {
        if (p.ServerScheme != Point.Https || rows.Count == 0)
        {
            return;
        }
        // direct's target is the origin, reached with the origin's scheme: its TLS is not a proxy's.
        var proxies = rows.Where(s => s.Scenario != Analysis.Direct).Select(s => (s.Scenario, Suites: SuitesOf(s), Resumed: ResumedOf(s))).ToList();
        if (proxies.Count == 0)
        {
            return;
        }
        var probed = proxies.SelectMany(x => x.Suites).Where(x => x != NotProbed).Distinct().ToList();
        var unprobed = proxies.Where(x => x.Suites.Contains(NotProbed)).Select(x => x.Scenario).ToList();
        if (probed.Count == 0)
        {
            // Runs from before crank/wrk-job.sh's probe: nothing to compare, no table.
            md.AppendLine("TLS from the load to the proxy: not probed (the load job recorded no `tls/*` figures).").AppendLine();
            return;
        }
        if (probed.Count == 1)
        {
            md.AppendLine(unprobed.Count == 0
                ? $"TLS from the load to the proxy: every proxy negotiated **{Format.Inline(probed[0])}** in every run."
                : $"TLS from the load to the proxy: every run probed negotiated **{Format.Inline(probed[0])}**; some runs of {string.Join(", ", unprobed)} were not probed.");
        }
        else
        {
            md.AppendLine(CultureInfo.InvariantCulture,
                $"**The proxies did not all negotiate the same TLS** from the load ({string.Join("; ", probed.Select(Format.Inline))}): their figures compare different work.");
        }
        md.AppendLine().AppendLine("| scenario | negotiated (protocol, cipher suite, group) | resumes a session |").AppendLine("|---|---|---|");
        foreach (var (scenario, scenarioSuites, resumed) in proxies)
        {
            md.AppendLine(CultureInfo.InvariantCulture, $"| {scenario} | {Format.Inline(string.Join("; ", scenarioSuites))} | {resumed} |");
        }
        md.AppendLine();
        if (p.Handshakes)
        {
            md.AppendLine("Every request opened a new connection (header preset `handshake`), so each is one TLS handshake: the rate is handshakes per second " +
                "and CPU per handshake is the proxy's CPU for the whole request, handshake included. wrk keeps a connection's TLS session when it reconnects: " +
                "a proxy that resumes sessions did resumed handshakes (no certificate, no signature), one that does not did full handshakes.").AppendLine();
        }
    }

    private static List<string> SuitesOf(ScenarioSummary s) =>
        s.Runs.Select(r => r.Tls?.Suite is { Length: > 0 } suite ? suite : NotProbed).Distinct().Order(StringComparer.Ordinal).ToList();

    private static string ResumedOf(ScenarioSummary s)
    {
        var values = s.Runs.Select(r => r.Tls?.Resumed).Distinct().ToList();
        return values switch
        {
            [true] => "yes",
            [false] => "no",
            [null] => NotProbed,
            _ => $"in {s.Runs.Count(r => r.Tls?.Resumed == true)} of {s.Runs.Count} runs",
        };
    }
}
