namespace LLRP.Tests.Infrastructure;

public enum Framing
{
    None,
    ContentLength,
    Chunked,
}

/// <summary>One request as the downstream received it from the proxy.</summary>
public sealed class RecordedRequest
{
    public required int ConnectionId { get; init; }
    public required int IndexOnConnection { get; init; }
    public required byte[] RawHead { get; init; }
    public required string RequestLine { get; init; }
    public required string Method { get; init; }
    public required string Target { get; init; }
    public required string Version { get; init; }
    public required IReadOnlyList<KeyValuePair<string, string>> Headers { get; init; }
    public Framing Framing { get; set; }
    public byte[] Body { get; set; } = [];
    public List<KeyValuePair<string, string>> Trailers { get; } = [];

    /// <summary>Every way the forwarded message departs from canonical HTTP/1.1 (RFC 9112 §2.2, §3, §5, §6, §7).</summary>
    public List<string> Violations { get; } = [];

    public bool IsProbe => Target is Wire.CanaryPath or Wire.PingPath;

    public IEnumerable<string> Values(string name) =>
        Headers.Where(h => string.Equals(h.Key, name, StringComparison.OrdinalIgnoreCase)).Select(h => h.Value);

    /// <summary>All values of a field joined as one list (RFC 9110 §5.3), or null when absent.</summary>
    public string? Joined(string name)
    {
        var values = Values(name).ToList();
        return values.Count == 0 ? null : string.Join(", ", values);
    }

    public override string ToString() =>
        $"[conn {ConnectionId} #{IndexOnConnection}] {Wire.Show(RawHead)}{(Body.Length > 0 ? " +body " + Wire.Show(Body, 120) : "")}" +
        (Violations.Count > 0 ? " VIOLATIONS: " + string.Join("; ", Violations) : "");
}

/// <summary>A request the downstream started to receive but whose connection ended before it was complete.</summary>
public sealed record PartialRequest(int ConnectionId, string Head, int BodyBytes, string Reason);
