using LLRP.Tests.Infrastructure;

namespace LLRP.Tests.RequestSide;

/// <summary>
/// The conformance corpus through the request side in memory (no sockets): every head and body of the desync-guardian
/// cases and of the test rows on field syntax and chunked bodies, cut at every byte boundary (and one byte at a
/// time), must get the verdict the whole-proxy tests expect, and every split the same verdict as the unsplit input,
/// whether the body is copied out or read where the input holds it.
/// </summary>
public sealed class RequestSplitTests
{
    private static readonly Lazy<IReadOnlyDictionary<string, (string Raw, ExpectedVerdict Expected)>> s_corpus = new(Build);

    public static TheoryData<string> Cases => new(s_corpus.Value.Keys);

    [Theory, MemberData(nameof(Cases))]
    public async Task Every_split_gets_the_whole_proxy_verdict(string label)
    {
        var (raw, expected) = s_corpus.Value[label];
        var bytes = Wire.Bytes(raw);
        RequestOutcome? whole = null;
        foreach (var pieces in RequestSideDriver.Splits(bytes))
        {
            var outcome = await RequestSideDriver.RunAsync(pieces);
            var what = $"{label} '{Wire.Show(raw, 200)}' split as [{string.Join(", ", pieces.Select(p => p.Length))}]";
            if (whole is null)
            {
                RequestSideVerdict.AssertMatches(expected, outcome, what);
                whole = outcome;
            }
            else
            {
                RequestSideVerdict.AssertSame(whole, outcome, what);
            }
            RequestSideVerdict.AssertSame(whole, await RequestSideDriver.RunAsync(pieces, inPlace: true), $"{what}, body read in place");
        }
    }

    [Fact]
    public async Task Driver_reports_what_the_request_side_decided()
    {
        var raw = "POST /u HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nTransfer-Encoding: chunked\r\n\r\n5;e=1\r\nhello\r\n3\r\n th\r\n0\r\n\r\n";
        var forwarded = await RequestSideDriver.RunAsync([Wire.Bytes(raw)]);
        Assert.Equal("hello th", Wire.Text(forwarded.Body));
        Assert.Equal([new("X-A", "1")], forwarded.Fields);
        Assert.Equal("h", forwarded.Authority);
        var rejected = await RequestSideDriver.RunAsync([Wire.Bytes(raw.Replace("5;e=1", "5 ", StringComparison.Ordinal))]);
        Assert.Equal((400, true), (rejected.RejectStatus, rejected.BodyRejected));
        var head = await RequestSideDriver.RunAsync([Wire.Bytes("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n")]);
        Assert.Equal((400, false), (head.RejectStatus, head.BodyRejected));
    }

    [Fact]
    public void Corpus_holds_every_guardian_case_and_the_checklist_rows()
    {
        var labels = s_corpus.Value.Keys;
        Assert.Equal(159, labels.Count(l => l.StartsWith("guardian ", StringComparison.Ordinal)));
        Assert.True(labels.Count(l => l.StartsWith("chunked ", StringComparison.Ordinal)) >= 40);
        Assert.True(labels.Count(l => l.StartsWith("field ", StringComparison.Ordinal)) >= 30);
    }

    private static Dictionary<string, (string, ExpectedVerdict)> Build()
    {
        var corpus = new Dictionary<string, (string, ExpectedVerdict)>();
        foreach (var label in DesyncGuardianTests.CaseNames)
        {
            var c = DesyncGuardianTests.Case(label);
            var expected =
                DesyncGuardianTests.AcceptableButRejected.TryGetValue(c.Id, out var a) || DesyncGuardianTests.CompliantButRejected.TryGetValue(c.Id, out a)
                    ? ExpectedVerdict.Reject(a.Statuses)
                    : c.Tier is "Severe" or "Ambiguous"
                        ? ExpectedVerdict.Reject(Verdict.AnyRejection)
                        : ExpectedVerdict.Forwarded(DesyncGuardianTests.Expected(c));
            corpus.Add($"guardian {c.Id}", (c.Request(), expected));
        }

        // The raw requests RequestBodyTests and HeaderFieldTests build around their rows (Post and Get there).
        static string Post(string fields, string body) => $"POST /upload HTTP/1.1\r\nHost: example.com\r\n{fields}\r\n{body}";
        static string Get(string fields) => $"GET /h HTTP/1.1\r\nHost: example.com\r\n{fields}\r\n";
        var index = 0;
        foreach (var body in Rows(RequestBodyTests.ValidChunkedBodies))
        {
            var raw = Post("Transfer-Encoding: chunked\r\n", body);
            corpus.Add($"chunked valid #{index++}", (raw, ExpectedVerdict.Forwarded(ExpectedForward.FromClientRequest(raw))));
        }
        foreach (var trailers in Rows(RequestBodyTests.Trailers))
        {
            var raw = Post("Transfer-Encoding: chunked\r\n", $"5\r\nhello\r\n0\r\n{trailers}\r\n");
            corpus.Add($"chunked trailers #{index++}", (raw, ExpectedVerdict.Forwarded(ExpectedForward.FromClientRequest(raw))));
        }
        foreach (var body in Rows(RequestBodyTests.BadChunkedBodies))
        {
            corpus.Add($"chunked malformed #{index++}", (Post("Transfer-Encoding: chunked\r\n", body), ExpectedVerdict.Reject(Verdict.BadRequest)));
        }
        foreach (var field in Rows(HeaderFieldTests.InvalidNames).Concat(Rows(HeaderFieldTests.InvalidValues)))
        {
            corpus.Add($"field invalid #{index++}", (Get(field), ExpectedVerdict.Reject(Verdict.BadRequest)));
        }
        foreach (var field in Rows(HeaderFieldTests.ValidValues))
        {
            var raw = Get(field);
            corpus.Add($"field valid #{index++}", (raw, ExpectedVerdict.Forwarded(ExpectedForward.FromClientRequest(raw))));
        }
        return corpus;
    }

    // The rows of a variant-crossed TheoryData, once each.
    private static IEnumerable<string> Rows(TheoryData<string, string> data) =>
        data.Select(row => (string)row[1]).Distinct();
}
