using System.Globalization;
using System.Text;

namespace LLRP.Tests.Infrastructure;

/// <summary>
/// What the downstream must receive for an accepted request, derived from the client's bytes by the contract:
/// request line `METHOD origin-form HTTP/1.1`; one Host; the client's end-to-end fields (hop-by-hop, Connection-named,
/// Expect and framing fields removed); Via and X-Forwarded-For appended (and X-Forwarded-Proto behind a TLS listener);
/// the de-framed body.
/// </summary>
public sealed class ExpectedForward
{
    private static readonly HashSet<string> s_hopByHop = new(StringComparer.OrdinalIgnoreCase)
    {
        // RFC 9110 §7.6.1 and the contract's list; Expect is answered by the proxy itself (RFC 9110 §10.1.1).
        "Connection", "Keep-Alive", "Proxy-Connection", "TE", "Transfer-Encoding", "Upgrade", "Expect",
    };

    public required string Method { get; set; }
    public required string Target { get; set; }
    public string? Host { get; set; }
    public List<KeyValuePair<string, string>> Fields { get; } = [];
    public string? PriorVia { get; set; }

    /// <summary>RFC 9110 §7.6.3: Via's received-protocol is the version of the message the proxy received.</summary>
    public string ViaProtocol { get; set; } = "1.1";
    public string? PriorForwardedFor { get; set; }
    public Framing ClientFraming { get; set; }
    public byte[] Body { get; set; } = [];

    public static ExpectedForward FromClientRequest(string raw)
    {
        var bytes = Wire.Bytes(raw);
        var text = Wire.Text(bytes);
        while (text.StartsWith("\r\n", StringComparison.Ordinal))
        {
            text = text[2..];
        }
        var headEnd = text.IndexOf("\r\n\r\n", StringComparison.Ordinal);
        if (headEnd < 0)
        {
            throw new ArgumentException("the model needs a CRLF-framed request", nameof(raw));
        }
        var lines = text[..headEnd].Split("\r\n");
        var rest = text[(headEnd + 4)..];
        var requestLine = lines[0].Split(' ');
        var headers = lines.Skip(1).Select(l =>
        {
            var colon = l.IndexOf(':', StringComparison.Ordinal);
            return new KeyValuePair<string, string>(l[..colon], l[(colon + 1)..].Trim(' ', '\t'));
        }).ToList();

        var expected = new ExpectedForward
        {
            Method = requestLine[0],
            Target = requestLine[1],
            ViaProtocol = requestLine.Length > 2 && requestLine[2] == "HTTP/1.0" ? "1.0" : "1.1",
        };
        var nominated = headers.Where(h => h.Key.Equals("Connection", StringComparison.OrdinalIgnoreCase))
            .SelectMany(h => h.Value.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries))
            .ToHashSet(StringComparer.OrdinalIgnoreCase);
        foreach (var (name, value) in headers)
        {
            if (name.Equals("Host", StringComparison.OrdinalIgnoreCase))
            {
                expected.Host ??= value;
            }
            else if (name.Equals("Via", StringComparison.OrdinalIgnoreCase))
            {
                expected.PriorVia = expected.PriorVia is null ? value : $"{expected.PriorVia}, {value}";
            }
            else if (name.Equals("X-Forwarded-For", StringComparison.OrdinalIgnoreCase))
            {
                expected.PriorForwardedFor = expected.PriorForwardedFor is null ? value : $"{expected.PriorForwardedFor}, {value}";
            }
            else if (!s_hopByHop.Contains(name) && !nominated.Contains(name) && !name.Equals("Content-Length", StringComparison.OrdinalIgnoreCase))
            {
                expected.Fields.Add(new(name, value));
            }
        }

        // RFC 9112 §3.2.2: absolute-form → origin-form downstream, Host from the target's authority.
        if (expected.Target.StartsWith("http://", StringComparison.OrdinalIgnoreCase))
        {
            var afterScheme = expected.Target[7..];
            var slash = afterScheme.IndexOfAny(['/', '?']);
            expected.Host = slash < 0 ? afterScheme : afterScheme[..slash];
            expected.Target = slash < 0 ? "/" : afterScheme[slash..];
            if (expected.Target.StartsWith('?'))
            {
                expected.Target = "/" + expected.Target;
            }
        }

        var te = headers.Where(h => h.Key.Equals("Transfer-Encoding", StringComparison.OrdinalIgnoreCase)).ToList();
        var cl = headers.Where(h => h.Key.Equals("Content-Length", StringComparison.OrdinalIgnoreCase)).ToList();
        if (te.Count > 0)
        {
            expected.ClientFraming = Framing.Chunked;
            expected.Body = Dechunk(rest);
        }
        else if (cl.Count > 0)
        {
            expected.ClientFraming = Framing.ContentLength;
            var length = int.Parse(cl[0].Value.Split(',')[0].Trim(), CultureInfo.InvariantCulture);
            expected.Body = Wire.Bytes(rest[..length]);
        }
        return expected;
    }

    private static byte[] Dechunk(string chunked)
    {
        var body = new StringBuilder();
        var at = 0;
        while (true)
        {
            var eol = chunked.IndexOf("\r\n", at, StringComparison.Ordinal);
            var sizeText = chunked[at..eol].Split(';')[0].Trim(' ', '\t');
            var size = int.Parse(sizeText, NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture);
            at = eol + 2;
            if (size == 0)
            {
                return Wire.Bytes(body.ToString());
            }
            body.Append(chunked, at, size);
            at += size + 2;
        }
    }

    /// <summary>The forwarded target may equal the sent one, or percent-encode its non-ASCII octets (RFC 3986 §2.1).</summary>
    public static bool TargetMatches(string actual, string expected)
    {
        if (actual == expected)
        {
            return true;
        }
        var encoded = new StringBuilder();
        foreach (var b in Wire.Bytes(expected))
        {
            encoded.Append(b >= 0x80 ? $"%{b:X2}" : ((char)b).ToString());
        }
        return string.Equals(actual, encoded.ToString(), StringComparison.OrdinalIgnoreCase);
    }

    /// <summary>Asserts the recorded request is exactly this expectation (see the type's summary).</summary>
    public void AssertMatches(RecordedRequest actual, Variant variant)
    {
        var context = $"\nforwarded: {actual}";
        Assert.True(actual.Violations.Count == 0, $"the forwarded request is not canonical HTTP/1.1: {string.Join("; ", actual.Violations)}{context}");
        Assert.True(actual.Method == Method && TargetMatches(actual.Target, Target) && actual.Version == "HTTP/1.1",
            $"request line: expected '{Method} {Target} HTTP/1.1', got '{Wire.Show(actual.RequestLine)}'{context}");

        var hosts = actual.Values("Host").ToList();
        Assert.True(hosts.Count == 1, $"expected exactly one Host, got {hosts.Count}{context}");
        if (Host is not null)
        {
            Assert.True(string.Equals(hosts[0], Host, StringComparison.OrdinalIgnoreCase), $"Host: expected '{Host}', got '{hosts[0]}'{context}");
        }

        var via = actual.Joined("Via");
        var expectedVia = PriorVia is null ? $"{ViaProtocol} llrp" : $"{PriorVia}, {ViaProtocol} llrp";
        Assert.True(Normalize(via) == Normalize(expectedVia), $"Via: expected '{expectedVia}', got '{via}' (RFC 9110 §7.6.3){context}");
        var xff = actual.Joined("X-Forwarded-For");
        var expectedXff = PriorForwardedFor is null ? "127.0.0.1" : $"{PriorForwardedFor}, 127.0.0.1";
        Assert.True(Normalize(xff) == Normalize(expectedXff), $"X-Forwarded-For: expected '{expectedXff}', got '{xff}'{context}");

        AssertFraming(actual, variant, context);
        Assert.True(actual.Body.AsSpan().SequenceEqual(Body),
            $"body: expected {Body.Length} bytes '{Wire.Show(Body, 200)}', got {actual.Body.Length} bytes '{Wire.Show(actual.Body, 200)}'{context}");
        Assert.True(actual.Trailers.Count == 0, $"trailers were forwarded: {string.Join(", ", actual.Trailers)} (RFC 9110 §6.5){context}");

        string[] generated = ["Host", "Via", "X-Forwarded-For", "Content-Length", "Transfer-Encoding"];
        var actualFields = actual.Headers.Where(h => !generated.Contains(h.Key, StringComparer.OrdinalIgnoreCase))
            .GroupBy(h => h.Key, StringComparer.OrdinalIgnoreCase)
            .ToDictionary(g => g.Key, g => string.Join(", ", g.Select(h => h.Value)), StringComparer.OrdinalIgnoreCase);
        if (variant.ExpectsContinueForLargeOrChunkedBodies && (ClientFraming == Framing.Chunked ||
            (ClientFraming == Framing.ContentLength && Body.Length >= LLRP.Forwarding.InvokerForwarder.ExpectContinueMinimumContentLength)))
        {
            // The variant's own expectation, not the client's (which is never forwarded): exactly this value.
            Assert.True(actualFields.Remove("Expect", out var expect) && expect == "100-continue",
                $"a {Body.Length}-byte {ClientFraming} body must be forwarded with the variant's own 'Expect: 100-continue'{context}");
        }
        var expectedFields = Fields.GroupBy(h => h.Key, StringComparer.OrdinalIgnoreCase)
            .ToDictionary(g => g.Key, g => string.Join(", ", g.Select(h => h.Value)), StringComparer.OrdinalIgnoreCase);
        if (variant.Tls)
        {
            // A TLS listener says so: X-Forwarded-Proto "https", after whatever the client sent in that field.
            var expectedProto = expectedFields.Remove("X-Forwarded-Proto", out var sent) ? $"{sent}, https" : "https";
            Assert.True(actualFields.Remove("X-Forwarded-Proto", out var proto) && Normalize(proto) == Normalize(expectedProto),
                $"X-Forwarded-Proto: expected '{expectedProto}', got '{proto}'{context}");
        }
        foreach (var (name, value) in expectedFields)
        {
            Assert.True(actualFields.TryGetValue(name, out var got), $"field '{name}: {Wire.Show(value)}' was not forwarded{context}");
            Assert.True(got == value, $"field '{name}': expected '{Wire.Show(value)}', got '{Wire.Show(got!)}'{context}");
        }
        var extra = actualFields.Keys.Where(k => !expectedFields.ContainsKey(k)).ToList();
        Assert.True(extra.Count == 0, $"fields forwarded that the client did not send or that are hop-by-hop: {string.Join(", ", extra.Select(k => $"{k}: {actualFields[k]}"))}{context}");
    }

    private void AssertFraming(RecordedRequest actual, Variant variant, string context)
    {
        var cl = actual.Joined("Content-Length");
        if (variant.CanonicalFraming)
        {
            Assert.True(actual.Framing == ClientFraming, $"framing: the client sent {ClientFraming}, the proxy forwarded {actual.Framing}{context}");
        }
        else if (Body.Length == 0)
        {
            // No body: no framing and Content-Length: 0 mean the same (RFC 9112 §6.3 (7)); HttpClient picks either.
            Assert.True(actual.Framing == Framing.None || cl == "0" || (actual.Framing == Framing.Chunked && ClientFraming == Framing.Chunked),
                $"framing: an empty body was forwarded as {actual.Framing} (Content-Length '{cl}'){context}");
        }
        else
        {
            Assert.True(actual.Framing is Framing.ContentLength or Framing.Chunked, $"framing: a {Body.Length}-byte body was forwarded without framing{context}");
        }
        if (actual.Framing == Framing.ContentLength)
        {
            Assert.True(cl == Body.Length.ToString(CultureInfo.InvariantCulture), $"Content-Length: expected {Body.Length}, got '{cl}'{context}");
        }
    }

    private static string Normalize(string? list) =>
        list is null ? "<absent>" : string.Join(",", list.Split(',').Select(s => s.Trim(' ', '\t')));
}
