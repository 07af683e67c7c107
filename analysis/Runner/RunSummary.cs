using System.Globalization;
using System.Text.Json.Nodes;

namespace LLRP.Runner;

/// <summary>The one line a finished run logs: throughput, latency, CPU per request, the steadiness verdict, the JIT in
/// the window, the warm-up and the errors.</summary>
internal static class RunSummary
{
    public static string Line(JsonNode run, string who)
    {
        var jobs = run["jobResults"]?["jobs"];
        var load = jobs?["load"]?["results"];
        var main = (jobs?["application"] ?? jobs?["downstream"])?["results"];
        string Raw(JsonNode? results, string name) => results?[name] is { } v ? v.ToJsonString() : "?";
        string Rounded(JsonNode? results, string name, int digits) =>
            results?[name] is JsonValue v && v.TryGetValue<double>(out var d)
                ? (Math.Round(d * Math.Pow(10, digits)) / Math.Pow(10, digits)).ToString(CultureInfo.InvariantCulture)
                : results?[name] is { } other ? other.ToJsonString() : "?";
        double? Num(JsonNode? results, string name) => results?[name] is JsonValue v && v.TryGetValue<double>(out var d) ? d : null;

        var rps = Math.Floor(Num(load, "http/rps/mean") ?? 0).ToString(CultureInfo.InvariantCulture);
        var line = $"{rps} rps, p50 {Raw(load, "http/latency/50")} ms, p99 {Raw(load, "http/latency/99")} ms, ";
        if (load?["http/latency/99.9"] is not null)
        {
            // The open loops say what they offered: the fixed-rate job and missed requests, h2load what it really sent.
            var offered = load?["fixedrate/rate"] is not null
                ? $" (offered {Raw(load, "fixedrate/rate")} req/s, missed {Raw(load, "fixedrate/missed")})"
                : load?["h2load/rate"] is not null ? $" (offered {Raw(load, "h2load/rate")} req/s, sent {Rounded(load, "h2load/sent", 0)} req/s)" : "";
            line += $"p99.9 {Raw(load, "http/latency/99.9")} ms{offered}, ";
        }
        line += $"{Rounded(main, "proc/cpu/per-request", 2)} us CPU/request ({who}), ";
        var ok = Num(main, "steady/ok");
        line += $"steady: {(ok is null ? "n/a" : ok == 1 ? "yes" : "NO")} (halves {Rounded(main, "steady/first-half", 1)}/{Rounded(main, "steady/second-half", 1)} us, "
            + $"{Rounded(main, "steady/change", 1)} %), ";
        if (main?["jit/methods-in-window"] is not null)
        {
            line += $"JIT {Raw(main, "jit/methods-in-window")} methods in the window ({Raw(main, "jit/methods/first-half")}+{Raw(main, "jit/methods/second-half")}), "
                + $"{Raw(main, "jit/time-in-window")} ms; JIT {Rounded(main, "steady/jit-share", 2)} % of its CPU under the load, ";
        }
        line += $"warm-up {Raw(load, "warmup/seconds")} s{(Num(load, "warmup/capped") == 1 ? " (CAPPED: JIT not quiet)" : "")}, ";
        return line + $"bad {Raw(load, "http/requests/badresponses")}, socket errors {Raw(load, "http/requests/errors")}";
    }
}
