using System.Globalization;
using System.Text;
using System.Text.Json;
using LLRP.Tests.Infrastructure;

namespace LLRP.Tests;

/// <summary>One request case of aws/http-desync-guardian (tests/*.yaml, Apache-2.0), as kept in cases.json.</summary>
public sealed record GuardianCase(string Id, string File, int Index, string Name, string Method, string Uri, string Version,
    IReadOnlyList<KeyValuePair<string, string>> Headers, string Tier, string Reason)
{
    /// <summary>
    /// The raw request: `method SP uri SP version`, then `Host: example.com` unless the case has a Host (the corpus
    /// leaves Host out; without it every HTTP/1.1 case would be a missing-Host 400), then each header as
    /// `name: value` with the case's raw name and value bytes, then a body matching the framing a strict reader would
    /// use: `5\r\nhello\r\n0\r\n\r\n` when a Transfer-Encoding field ends in chunked, else Content-Length bytes when
    /// a Content-Length field is 1*DIGIT, else none.
    /// </summary>
    public string Request()
    {
        var sb = new StringBuilder();
        sb.Append(Method).Append(' ').Append(Uri).Append(' ').Append(Version).Append("\r\n");
        if (!Headers.Any(h => h.Key.Trim().Equals("Host", StringComparison.OrdinalIgnoreCase)))
        {
            sb.Append("Host: example.com\r\n");
        }
        foreach (var (name, value) in Headers)
        {
            sb.Append(name).Append(": ").Append(value).Append("\r\n");
        }
        sb.Append("\r\n");
        sb.Append(Body());
        return sb.ToString();
    }

    public string Body()
    {
        var te = Headers.Where(h => h.Key.Equals("Transfer-Encoding", StringComparison.OrdinalIgnoreCase)).ToList();
        if (te.Count > 0 && te[^1].Value.Split(',')[^1].Split(';')[0].Trim(' ', '\t').Equals("chunked", StringComparison.OrdinalIgnoreCase))
        {
            return "5\r\nhello\r\n0\r\n\r\n";
        }
        foreach (var cl in Headers.Where(h => h.Key.Equals("Content-Length", StringComparison.OrdinalIgnoreCase)))
        {
            // A list of identical values ("1000,1000") is sent with that many bytes, so a proxy that collapses it
            // answers instead of waiting for a body that never comes.
            var values = cl.Value.Split(',').Select(v => v.Trim(' ', '\t')).Distinct().ToList();
            if (values.Count == 1 && values[0].Length is > 0 and < 9 && values[0].All(char.IsAsciiDigit))
            {
                return Wire.BodyText(int.Parse(values[0], CultureInfo.InvariantCulture));
            }
        }
        return "";
    }

    public override string ToString() => Id;
}

/// <summary>
/// The 159 desync-guardian cases: Severe and Ambiguous must be rejected (4xx/501/505) with the connection closed and
/// nothing forwarded (the strict reading: an ambiguous message is refused rather than guessed at); Compliant and
/// Acceptable are forwarded —
/// except the named known differences below, where RFC 9112 or the proxy's contract requires a rejection.
/// </summary>
public sealed class DesyncGuardianTests(DefaultProxies farm) : IClassFixture<DefaultProxies>
{

    /// <summary>Acceptable in the corpus, but the proxy MUST (or by contract does) reject: id → (statuses, reason).</summary>
    public static readonly IReadOnlyDictionary<string, (int[] Statuses, string Reason)> AcceptableButRejected =
        new Dictionary<string, (int[], string)>
        {
            ["acceptable.yaml#0"] = ([400], "RFC 9112 §5.1: whitespace between field name and colon MUST get 400"),
            ["acceptable.yaml#1"] = ([400], "RFC 9112 §5.1: whitespace between field name and colon MUST get 400"),
            ["acceptable.yaml#2"] = ([400], "RFC 9110 §5.1: field-name = token; \\x01 is not a tchar"),
            ["acceptable.yaml#3"] = ([400], "RFC 9112 §5.1: whitespace between field name and colon MUST get 400"),
            ["acceptable.yaml#6"] = ([400, 505], "RFC 9112 §2.3: HTTP/0.9 is not supported (contract: 505 for unsupported versions)"),
            ["acceptable.yaml#7"] = ([400, 505], "RFC 9112 §3: request-line = method SP request-target SP HTTP-version; no version is HTTP/0.9, unsupported"),
            ["acceptable.yaml#8"] = ([505], "contract: HTTP/1.2 is answered 505 (RFC 9110 §15.6.6)"),
            ["bad-header-characters.yaml#11"] = ([400], "RFC 9110 §5.1: field-name = token; \\x01 is not a tchar"),
            ["bad-header-characters.yaml#12"] = ([400], "RFC 9110 §5.1: field-name = token; \\x01 is not a tchar"),
            ["bad-header-characters.yaml#13"] = ([400], "RFC 9110 §5.5: field-vchar excludes CTLs; contract: CTL in values → 400"),
            ["bad-header-characters.yaml#14"] = ([400], "RFC 9110 §5.5: field-vchar excludes CTLs; contract: CTL in values → 400"),
            ["uri-specific-test-cases.yaml#1"] = ([400], "RFC 9112 §3: a trailing SP after the version is not a valid request-line"),
            ["uri-specific-test-cases.yaml#3"] = ([400], "RFC 9112 §3 / §3.2: SP inside the request-target makes an invalid request-line (SHOULD 400)"),
        };

    /// <summary>Compliant in the corpus, but the proxy by RFC 9112 or by contract rejects: id → (statuses, reason).</summary>
    public static readonly IReadOnlyDictionary<string, (int[] Statuses, string Reason)> CompliantButRejected =
        new Dictionary<string, (int[], string)>
        {
            ["more-compliant-tests.yaml#5"] = ([400, 501], "RFC 9112 §6.1: codings other than chunked are not implemented (SHOULD 501); the proxy re-chunks and cannot forward gzip"),
            ["more-compliant-tests.yaml#7"] = ([400, 501], "RFC 9112 §6.1: deflate/identity codings not implemented (SHOULD 501)"),
            ["more-compliant-tests.yaml#8"] = ([400, 501], "RFC 9112 §6.1: gzip/deflate/identity/compress codings not implemented (SHOULD 501)"),
            ["more-compliant-tests.yaml#9"] = ([400, 501], "RFC 9112 §7: chunked takes no parameters, 'SHOULD be treated as an error'"),
            ["rfc-compliant.yaml#8"] = ([400, 501], "RFC 9112 §6.1: gzip/deflate/identity/compress codings not implemented (SHOULD 501)"),
            ["rfc-compliant.yaml#9"] = ([400, 501], "RFC 9112 §6.1: gzip/deflate/identity/compress codings not implemented (SHOULD 501)"),
            ["rfc-compliant.yaml#10"] = ([400, 501], "RFC 9112 §6.1, §7: gzip/deflate not implemented; chunked with a parameter is an error"),
            ["rfc-compliant.yaml#11"] = ([400], "RFC 9112 §3.2: origin-form has no fragment ('#') → 400"),
            ["rfc-compliant.yaml#12"] = ([400], "RFC 9112 §3.2 / RFC 3986 §2: a request-target is ASCII; raw UTF-8 octets make an invalid request-line"),
            ["rfc-compliant.yaml#13"] = ([400], "RFC 9112 §3: an empty request-target leaves 'GET  HTTP/1.1' (two SP), an invalid request-line"),
        };

    /// <summary>The corpus as the test project ships it (TestData/http-desync-guardian/SOURCE.md says where it comes from).</summary>
    public static readonly string CorpusPath = Path.Combine(AppContext.BaseDirectory, "TestData", "http-desync-guardian", "cases.json");

    private static readonly Lazy<IReadOnlyList<GuardianCase>> s_cases = new(Load);

    /// <summary>Every case through every variant.</summary>
    public static TheoryData<string, string> Cases => Variants.Cross(CaseNames);

    /// <summary>"id: name" of every case, the test-case label.</summary>
    public static IEnumerable<string> CaseNames => s_cases.Value.Select(c => $"{c.Id}: {c.Name}");

    public static IReadOnlySet<string> CaseIds => s_cases.Value.Select(c => c.Id).ToHashSet();

    /// <summary>The case a label of <see cref="CaseNames"/> names.</summary>
    public static GuardianCase Case(string label)
    {
        return s_cases.Value.Single(x => label.StartsWith(x.Id + ":", StringComparison.Ordinal));
    }

    /// <summary>The strict reading: Severe and Ambiguous, and the named Acceptable/Compliant cases RFC 9112 or the contract reject.</summary>
    public static bool MustReject(GuardianCase c) =>
        c.Tier is "Severe" or "Ambiguous" || AcceptableButRejected.ContainsKey(c.Id) || CompliantButRejected.ContainsKey(c.Id);

    [Fact]
    public void Corpus_is_complete_and_known_difference_lists_name_real_cases()
    {
        var cases = s_cases.Value;
        Assert.Equal(159, cases.Count);
        Assert.Equal(58, cases.Count(c => c.Tier == "Severe"));
        Assert.Equal(58, cases.Count(c => c.Tier == "Ambiguous"));
        Assert.Equal(28, cases.Count(c => c.Tier == "Compliant"));
        Assert.Equal(15, cases.Count(c => c.Tier == "Acceptable"));
        var byId = cases.ToDictionary(c => c.Id);
        void Check(IEnumerable<string> ids, string tier)
        {
            foreach (var id in ids)
            {
                Assert.True(byId.TryGetValue(id, out var c), $"known-difference list names '{id}', which is not in cases.json");
                Assert.True(c.Tier == tier, $"'{id}' ({c.Name}) is listed as {tier} but is {c.Tier}");
            }
        }
        Check(AcceptableButRejected.Keys, "Acceptable");
        Check(CompliantButRejected.Keys, "Compliant");
    }

    [Theory, MemberData(nameof(Cases))]
    public async Task Desync_guardian_case(string variant, string @case)
    {
        var c = Case(@case);
        var p = await farm.GetAsync(variant);
        var raw = c.Request();
        var method = c.Method;

        if (AcceptableButRejected.TryGetValue(c.Id, out var a) || CompliantButRejected.TryGetValue(c.Id, out a))
        {
            await Verdict.RejectedAsync(p, raw, a.Statuses, method: method);
            return;
        }
        if (c.Tier is "Severe" or "Ambiguous")
        {
            await Verdict.RejectedAsync(p, raw, Verdict.AnyRejection, method: method);
            return;
        }
        await Verdict.ForwardedAsync(p, raw, Expected(c), method: method);
    }

    /// <summary>The contract's model of the case: its fields (OWS-trimmed) minus hop-by-hop ones, and its body.</summary>
    public static ExpectedForward Expected(GuardianCase c)
    {
        var expected = ExpectedForward.FromClientRequest(c.Request().Replace(c.Uri + " ", "/placeholder ", StringComparison.Ordinal));
        expected.Target = Wire.Text(Wire.Bytes(c.Uri));
        return expected;
    }

    private static IReadOnlyList<GuardianCase> Load()
    {
        var cases = new List<GuardianCase>();
        using var doc = JsonDocument.Parse(File.ReadAllBytes(CorpusPath));
        foreach (var file in doc.RootElement.EnumerateObject())
        {
            var index = 0;
            foreach (var c in file.Value.EnumerateArray())
            {
                var headers = new List<KeyValuePair<string, string>>();
                if (c.TryGetProperty("headers", out var hs) && hs.ValueKind == JsonValueKind.Array)
                {
                    foreach (var h in hs.EnumerateArray())
                    {
                        headers.Add(new(Scalar(h.GetProperty("name")), Scalar(h.GetProperty("value"))));
                    }
                }
                var expected = c.GetProperty("expected");
                cases.Add(new GuardianCase($"{file.Name}#{index}", file.Name, index, Scalar(c.GetProperty("name")),
                    Scalar(c.GetProperty("method")), Scalar(c.GetProperty("uri")), Scalar(c.GetProperty("version")), headers,
                    Scalar(expected.GetProperty("tier")), expected.TryGetProperty("reason", out var reason) ? Scalar(reason) : ""));
                index++;
            }
        }
        return cases;
    }

    // YAML numbers (Content-Length: 1000) arrive as JSON numbers; their text is the value.
    private static string Scalar(JsonElement e) => e.ValueKind switch
    {
        JsonValueKind.String => e.GetString()!,
        JsonValueKind.Null => "",
        _ => e.GetRawText(),
    };
}
