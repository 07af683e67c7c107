using LLRP.Tests.Infrastructure;

namespace LLRP.Tests.RequestSide;

/// <summary>The answer the whole-proxy tests expect for a raw request: one of some statuses, or this forwarded request.</summary>
public sealed record ExpectedVerdict(int[]? Statuses, ExpectedForward? Forward)
{
    public static ExpectedVerdict Reject(int[] statuses) => new(statuses, null);

    public static ExpectedVerdict Forwarded(ExpectedForward forward) => new(null, forward);

    public override string ToString() => Statuses is { } s ? $"rejected with {Verdict.Statuses(s)}" : "forwarded";
}

/// <summary>The assertions of the in-memory request-side tests, in one place.</summary>
public static class RequestSideVerdict
{
    private static readonly string[] s_appended = ["Via", "X-Forwarded-For"];

    /// <summary>The outcome is what the whole proxy is expected to do with the same bytes.</summary>
    public static void AssertMatches(ExpectedVerdict expected, RequestOutcome actual, string what)
    {
        if (expected.Statuses is { } statuses)
        {
            Assert.True(actual.RejectStatus is { } status && statuses.Contains(status),
                $"{what}: expected {expected}, got {actual}");
            return;
        }

        var e = expected.Forward!;
        Assert.True(actual.RejectStatus is null, $"{what}: expected it forwarded, got {actual}");
        Assert.True(actual.Method == e.Method && ExpectedForward.TargetMatches(actual.Target!, e.Target),
            $"{what}: expected '{e.Method} {e.Target}', got '{actual.Method} {actual.Target}'");
        Assert.True(e.Host is null || string.Equals(actual.Authority, e.Host, StringComparison.OrdinalIgnoreCase),
            $"{what}: Host: expected '{e.Host}', got '{actual.Authority}'");
        Assert.True(actual.Via == $"{e.ViaProtocol} llrp", $"{what}: Via protocol: expected '{e.ViaProtocol} llrp', got '{actual.Via}'");
        Assert.True(Joined(actual.Fields, "Via") == e.PriorVia, $"{what}: prior Via: expected '{e.PriorVia}', got '{Joined(actual.Fields, "Via")}'");
        Assert.True(Joined(actual.Fields, "X-Forwarded-For") == e.PriorForwardedFor,
            $"{what}: prior X-Forwarded-For: expected '{e.PriorForwardedFor}', got '{Joined(actual.Fields, "X-Forwarded-For")}'");
        var fields = Group(actual.Fields.Where(f => !s_appended.Contains(f.Key, StringComparer.OrdinalIgnoreCase)));
        var expectedFields = Group(e.Fields);
        Assert.True(fields.Count == expectedFields.Count && expectedFields.All(f => fields.TryGetValue(f.Key, out var v) && v == f.Value),
            $"{what}: fields: expected [{Show(expectedFields)}], got [{Show(fields)}]");
        Assert.True(actual.Body.AsSpan().SequenceEqual(e.Body),
            $"{what}: body: expected '{Wire.Show(e.Body, 200)}', got '{Wire.Show(actual.Body, 200)}'");
    }

    /// <summary>A split run decided exactly what the unsplit run decided.</summary>
    public static void AssertSame(RequestOutcome whole, RequestOutcome split, string what)
    {
        Assert.True(whole.RejectStatus == split.RejectStatus && whole.BodyRejected == split.BodyRejected,
            $"{what}: unsplit {whole}, split {split}");
        if (whole.RejectStatus is null)
        {
            Assert.True(whole.Method == split.Method && whole.Target == split.Target && whole.Authority == split.Authority
                && whole.Via == split.Via && whole.Fields.SequenceEqual(split.Fields) && whole.Body.AsSpan().SequenceEqual(split.Body),
                $"{what}: unsplit {whole}, split {split}");
        }
    }

    private static string? Joined(IEnumerable<KeyValuePair<string, string>> fields, string name)
    {
        var values = fields.Where(f => f.Key.Equals(name, StringComparison.OrdinalIgnoreCase)).Select(f => f.Value).ToList();
        return values.Count == 0 ? null : string.Join(", ", values);
    }

    private static Dictionary<string, string> Group(IEnumerable<KeyValuePair<string, string>> fields) =>
        fields.GroupBy(f => f.Key, StringComparer.OrdinalIgnoreCase)
            .ToDictionary(g => g.Key, g => string.Join(", ", g.Select(f => f.Value)), StringComparer.OrdinalIgnoreCase);

    private static string Show(Dictionary<string, string> fields) => string.Join("; ", fields.Select(f => $"{f.Key}: {Wire.Show(f.Value)}"));
}
