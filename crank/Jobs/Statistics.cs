using System.Globalization;
using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Nodes;

namespace LLRP.Jobs;

/// <summary>One figure of crank's statistics block. A <see cref="Name"/> "a;b" is stored by crank under both names;
/// <see cref="Value"/> is a number or a string (string figures aggregate with "First").</summary>
internal sealed record Measurement(
    string Name, string Aggregate, string Reduce, string ShortDescription, string LongDescription, string Format, JsonNode Value)
{
    /// <summary>A number with crank's usual operations: the job aggregates by <paramref name="aggregate"/> and
    /// reduces across jobs by <paramref name="reduce"/>; the description serves as both texts.</summary>
    public static Measurement Number(string name, string aggregate, string reduce, string description, string format, double value) =>
        new(name, aggregate, reduce, description, description, format, JsonValue.Create(value));
}

/// <summary>crank's stdout statistics block: "#StartJobStatistics", one line of JSON {Metadata, Measurements},
/// "#EndJobStatistics". A crank agent reads it from a job's output; crank/results.jq and the runner read it from a log.
/// Built with System.Text.Json, so a name or a description with a quote or a backslash cannot break it.</summary>
internal static class Statistics
{
    public const string Start = "#StartJobStatistics";
    public const string End = "#EndJobStatistics";

    // jq's escaping (the bash jobs built the block with jq): quotes, backslashes and control characters only, so an
    // apostrophe in a description stays one.
    private static readonly JsonSerializerOptions AsJq = new() { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping };

    /// <summary>The block for <paramref name="rows"/> from <paramref name="source"/> (crank's Source: the job's
    /// tool). A name given several times (aggregate "All": one value per step) gets one metadata entry, the first,
    /// and one measurement per row, in order. Every measurement carries <paramref name="now"/> (UTC).</summary>
    public static string Block(string source, IEnumerable<Measurement> rows, DateTime now)
    {
        var metadata = new JsonArray();
        var measurements = new JsonArray();
        var named = new HashSet<string>(StringComparer.Ordinal);
        var timestamp = now.ToUniversalTime().ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'", CultureInfo.InvariantCulture);
        foreach (var m in rows)
        {
            if (named.Add(m.Name))
            {
                metadata.Add(new JsonObject
                {
                    ["Source"] = source,
                    ["Name"] = m.Name,
                    ["Aggregate"] = m.Aggregate,
                    ["Reduce"] = m.Reduce,
                    ["ShortDescription"] = m.ShortDescription,
                    ["LongDescription"] = m.LongDescription,
                    ["Format"] = m.Format,
                });
            }
            measurements.Add(new JsonObject { ["Timestamp"] = timestamp, ["Name"] = m.Name, ["Value"] = m.Value.DeepClone() });
        }
        var json = new JsonObject { ["Metadata"] = metadata, ["Measurements"] = measurements };
        return $"{Start}\n{json.ToJsonString(AsJq)}\n{End}\n";
    }
}
