using System.Globalization;
using System.Text.Json;

namespace LLRP.Analysis;

/// <summary>
/// Lookups that tolerate both spellings of crank's output: its --json camel-cases dictionary keys
/// (docs/crank-offline.md), run-local.sh writes them as given, and property names may differ in case.
/// </summary>
internal static class JsonExtensions
{
    public static JsonElement? Prop(this JsonElement element, string name)
    {
        if (element.ValueKind != JsonValueKind.Object)
        {
            return null;
        }
        if (element.TryGetProperty(name, out var exact))
        {
            return exact;
        }
        foreach (var property in element.EnumerateObject())
        {
            if (string.Equals(property.Name, name, StringComparison.OrdinalIgnoreCase))
            {
                return property.Value;
            }
        }
        return null;
    }

    public static JsonElement? Prop(this JsonElement? element, string name) => element is { } e ? e.Prop(name) : null;

    /// <summary>A number, a numeric string, or the last number of an array (crank's "All" aggregate).</summary>
    public static double? Number(this JsonElement? element)
    {
        if (element is not { } e)
        {
            return null;
        }
        switch (e.ValueKind)
        {
            case JsonValueKind.Number:
                return e.GetDouble();
            case JsonValueKind.String:
                return double.TryParse(e.GetString(), NumberStyles.Float, CultureInfo.InvariantCulture, out var d) ? d : null;
            case JsonValueKind.Array:
                double? last = null;
                foreach (var item in e.EnumerateArray())
                {
                    last = ((JsonElement?)item).Number() ?? last;
                }
                return last;
            default:
                return null;
        }
    }

    /// <summary>A string, a number's text, or an array of those joined by spaces; null for anything else.</summary>
    public static string? Text(this JsonElement? element)
    {
        if (element is not { } e)
        {
            return null;
        }
        return e.ValueKind switch
        {
            JsonValueKind.String => e.GetString(),
            JsonValueKind.Number or JsonValueKind.True or JsonValueKind.False => e.GetRawText(),
            JsonValueKind.Array => string.Join(' ', e.EnumerateArray().Select(i => ((JsonElement?)i).Text()).Where(t => !string.IsNullOrEmpty(t))),
            _ => null,
        };
    }

    /// <summary>The first of <paramref name="names"/> that <paramref name="results"/> holds as a number.</summary>
    public static double? FirstNumber(this JsonElement? results, params ReadOnlySpan<string> names)
    {
        foreach (var name in names)
        {
            if (results.Prop(name).Number() is { } value)
            {
                return value;
            }
        }
        return null;
    }
}
