using LLRP.Fuzz.Strict;
using LLRP.Fuzz.Support;
using LLRP.Http1;

namespace LLRP.Fuzz.Targets;

/// <summary>
/// The differential target. A request the proxy accepts (head and body) is re-serialised as the proxy forwards it, and
/// <see cref="StrictRequestParser"/> must frame those bytes as exactly one request with the proxy's method, target,
/// Host, fields and body. Where the strict parser also accepts the client's bytes, both must agree on the method, the
/// target, the fields forwarded, the body and where the request ends: any disagreement is a desync.
/// </summary>
internal static class DifferentialTarget
{
    private static readonly RequestHead s_head = RequestSide.NewHead();

    public static void Run(ReadOnlySpan<byte> input)
    {
        var head = RequestSide.ParseHead(s_head, [input.ToArray()]);
        if (!head.Accepted)
        {
            return;
        }
        var body = RequestSide.ReadBody(s_head, Pieces.Split(input[(int)head.Consumed..]), 16 * 1024, out var leftover);
        if (body is null)
        {
            return;
        }
        var forwarded = ForwardedRequest.Forward(s_head, body);
        var via = RequestSide.Latin1(s_head.ViaValue);
        s_head.Reset();

        var others = head.Fields.Where(f => f.Kind == nameof(HeaderKind.Other)).Select(f => (f.Name, f.Value)).ToList();
        var host = head.Authority.Length > 0 ? head.Authority : ForwardedRequest.DownstreamAuthority;
        var sent = StrictRequestParser.Parse(forwarded);
        var shown = RequestSide.Latin1(forwarded);
        Finding.Check(sent is not null, $"The strict parser refuses the forwarded request:\n{shown}");
        Finding.Check(sent!.Length == forwarded.Length, $"The forwarded bytes hold more than one request ({sent.Length} of {forwarded.Length}):\n{shown}");
        Finding.Check(sent.Method == head.Method && sent.Target == head.Target && sent.Version == "HTTP/1.1",
            $"Forwarded request line '{sent.Method} {sent.Target} {sent.Version}', the proxy parsed '{head.Method} {head.Target}'.");
        var sentHosts = sent.Fields.Where(f => IsNamed(f.Name, "Host")).Select(f => f.Value).ToList();
        Finding.Check(sentHosts.Count == 1 && sentHosts[0] == host, $"Forwarded Host '{string.Join(",", sentHosts)}', expected '{host}'.");
        var sentOthers = sent.Fields.Where(f => !IsNamed(f.Name, "Host") && !IsNamed(f.Name, "Content-Length") && !IsNamed(f.Name, "Transfer-Encoding")).ToList();
        var expected = others.Append(("Via", via)).Append(("X-Forwarded-For", ForwardedRequest.ForwardedFor)).ToList();
        Finding.Check(sentOthers.SequenceEqual(expected),
            $"Forwarded fields [{Show(sentOthers)}], the proxy meant [{Show(expected)}].");
        Finding.Check(sent.Body.AsSpan().SequenceEqual(body), $"Forwarded body of {sent.Body.Length} bytes, the proxy read {body.Length}.");

        // The client's own bytes, where the strict reading also takes them.
        var original = StrictRequestParser.Parse(input);
        if (original is null)
        {
            return;
        }
        var proxyLength = input.Length - leftover;
        Finding.Check(original.Length == proxyLength, $"The request ends after {proxyLength} bytes for the proxy, after {original.Length} strictly.");
        Finding.Check(original.Method == head.Method, $"Method '{head.Method}' for the proxy, '{original.Method}' strictly.");
        Finding.Check(!original.Target.StartsWith('/') || original.Target == head.Target, $"Target '{head.Target}' for the proxy, '{original.Target}' strictly.");
        Finding.Check(original.Body.AsSpan().SequenceEqual(body), $"Body of {body.Length} bytes for the proxy, {original.Body.Length} strictly.");
        Finding.Check(IsSubsequence(others, original.Fields), $"Forwarded fields [{Show(others)}] are not among the client's [{Show(original.Fields)}].");
    }

    private static bool IsNamed(string name, string wanted) => name.Equals(wanted, StringComparison.OrdinalIgnoreCase);

    private static bool IsSubsequence(IReadOnlyList<(string, string)> part, IReadOnlyList<(string, string)> whole)
    {
        var j = 0;
        foreach (var field in whole)
        {
            if (j < part.Count && part[j] == field)
            {
                j++;
            }
        }
        return j == part.Count;
    }

    private static string Show(IEnumerable<(string Name, string Value)> fields) => string.Join(" | ", fields.Select(f => $"{f.Name}: {f.Value}"));
}
