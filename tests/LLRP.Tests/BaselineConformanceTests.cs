using LLRP.Tests.Infrastructure;

namespace LLRP.Tests;

/// <summary>One running instance of each full-stack baseline, each in front of its own recording downstream.</summary>
public sealed class BaselineProxies : ProxyFarm
{
    protected override Task<ProxyUnderTest> StartAsync(string name) => ProxyUnderTest.StartBaselineAsync(Baseline.Get(name));
}

/// <summary>
/// The full-stack baselines (src/Baselines: full YARP and the ASP.NET Core + HttpClient proxy) through the same
/// request cases as LLRP: the 159 desync-guardian cases and the forwarding contract (hop-by-hop removal, Via,
/// X-Forwarded-For, Host, 502 for an unreachable downstream). A baseline is what its stack does, so where it differs
/// from the RFC or from LLRP's contract the difference is listed by name below. The test asserts the listed
/// differences and nothing else: a new difference fails, and so does a listed one that no longer occurs.
/// </summary>
public sealed class BaselineConformanceTests(BaselineProxies farm) : IClassFixture<BaselineProxies>
{
    public static TheoryData<string> Baselines => new(Baseline.All.Select(b => b.Name));

    public static TheoryData<string, string> GuardianCases
    {
        get
        {
            var data = new TheoryData<string, string>();
            foreach (var b in Baseline.All)
            {
                foreach (var c in DesyncGuardianTests.CaseNames)
                {
                    data.Add(b.Name, c);
                }
            }
            return data;
        }
    }

    /// <summary>Desync-guardian cases the baselines answer differently from LLRP: baseline → case id → (outcome, reason).</summary>
    public static readonly IReadOnlyDictionary<string, IReadOnlyDictionary<string, (Outcome Observed, string Reason)>> GuardianDifferences =
        new Dictionary<string, IReadOnlyDictionary<string, (Outcome, string)>>
        {
            ["yarp"] = KestrelDifferences(rawCrInTarget: (Outcome.Forwarded,
                "Kestrel accepts a CR in the request-target; YARP percent-encodes it on the way out (RFC 9112 §2.2: a bare CR is invalid)")),
            ["httpclientproxy"] = KestrelDifferences(rawCrInTarget: (Outcome.Other,
                "Kestrel accepts a CR in the request-target and the proxy sends it on raw, breaking the downstream's request line (RFC 9112 §2.2)")),
        };

    /// <summary>
    /// Both baselines parse with Kestrel's HTTP/1.1 server and re-frame the body with HttpClient, so they share Kestrel's
    /// reading of the corpus: a server's (lenient where RFC 9112 allows a server to be) where LLRP takes a proxy's
    /// strict one. Re-framing means none of these forwards a desynchronising message; the differences are what each
    /// stack accepts, not smuggling.
    /// </summary>
    private static Dictionary<string, (Outcome, string)> KestrelDifferences((Outcome, string) rawCrInTarget)
    {
        var list = new Dictionary<string, (Outcome, string)> { ["uri-specific-test-cases.yaml#5"] = rawCrInTarget };
        void Add(Outcome observed, string reason, params string[] ids)
        {
            foreach (var id in ids)
            {
                list.Add(id, (observed, reason));
            }
        }
        Add(Outcome.Forwarded, "Kestrel takes a field name with a control byte (not a token, RFC 9110 §5.1) as an ordinary field and forwards it; LLRP answers 400",
            "acceptable.yaml#2", "ambiguous.yaml#2", "ambiguous.yaml#3", "ambiguous.yaml#4", "ambiguous.yaml#5", "bad-header-characters.yaml#0",
            "bad-header-characters.yaml#5", "bad-header-characters.yaml#6", "bad-header-characters.yaml#7", "bad-header-characters.yaml#11",
            "bad-header-characters.yaml#12");
        Add(Outcome.Other, "Kestrel passes a control byte in a field value (RFC 9110 §5.5) on to the downstream; LLRP answers 400",
            "bad-header-characters.yaml#13", "bad-header-characters.yaml#14");
        Add(Outcome.Other, "Kestrel accepts content on GET/HEAD and a control byte in a field value, and both reach the downstream; LLRP answers 400",
            "edge-cases.yaml#3", "edge-cases.yaml#4");
        Add(Outcome.Other, "Kestrel accepts a TAB in the request-target, content on GET and a control byte in a value; LLRP answers 400",
            "edge-cases.yaml#7");
        Add(Outcome.Forwarded, "Kestrel takes a framing look-alike name (Transfer_Encoding, Content_Length, Transfer---Encoding) as an ordinary field; LLRP rejects such names, which other servers may read as framing",
            "ambiguous.yaml#7", "ambiguous.yaml#8", "ambiguous.yaml#30", "ambiguous.yaml#31");
        Add(Outcome.Forwarded, "Kestrel lets Transfer-Encoding override Content-Length (RFC 9112 §6.3 allows a server to); LLRP rejects the message as ambiguous",
            "ambiguous.yaml#10", "single-case.yaml#0", "real-life-test-cases.yaml#5", "real-life-test-cases.yaml#19", "real-life-test-cases.yaml#23");
        Add(Outcome.Forwarded, "Kestrel frames by the final chunked coding and ignores the rest of the Transfer-Encoding list (a repeated chunked, RFC 9112 §7.1; codings it does not decode, which SHOULD get 501, §6.1)",
            "more-compliant-tests.yaml#5", "more-compliant-tests.yaml#7", "more-compliant-tests.yaml#8", "rfc-compliant.yaml#8", "rfc-compliant.yaml#9",
            "severe.yaml#8", "severe.yaml#9", "real-life-test-cases.yaml#4", "real-life-test-cases.yaml#16", "real-life-test-cases.yaml#18");
        Add(Outcome.Forwarded, "Kestrel accepts content on GET/HEAD and the baseline forwards it; LLRP rejects it (RFC 9110 §9.3.1, §9.3.2: no defined semantics)",
            "ambiguous.yaml#12", "ambiguous.yaml#13", "ambiguous.yaml#14", "ambiguous.yaml#15", "real-life-test-cases.yaml#0", "real-life-test-cases.yaml#1");
        Add(Outcome.Forwarded, "Kestrel decodes chunked on HTTP/1.0, which RFC 9112 §6.1 says MUST be treated as faulty framing; LLRP answers 400",
            "ambiguous.yaml#23", "real-life-test-cases.yaml#2");
        Add(Outcome.Forwarded, "Kestrel accepts a TAB or a control byte in the request-target (RFC 9112 §3.2, RFC 3986 §2); LLRP answers 400",
            "uri-specific-test-cases.yaml#0", "uri-specific-test-cases.yaml#2");
        Add(Outcome.Forwarded, "Kestrel accepts a '#' fragment and raw non-ASCII in the request-target; origin-form has neither (RFC 9112 §3.2) and LLRP answers 400",
            "rfc-compliant.yaml#11");
        Add(Outcome.Rejected, "Kestrel answers 400 to obs-text (bytes 0x80-0xFF) in a field value unless the app opts into another encoding; RFC 9110 §5.5 allows obs-text and LLRP forwards it",
            "rfc-compliant.yaml#3", "rfc-compliant.yaml#4", "rfc-compliant.yaml#5", "rfc-compliant.yaml#6", "rfc-compliant.yaml#7");
        return list;
    }

    /// <summary>How each baseline departs from the forwarding contract (see <see cref="Contract_deviations"/>): baseline → name → reason.</summary>
    public static readonly IReadOnlyDictionary<string, IReadOnlyDictionary<string, string>> ContractDifferences =
        new Dictionary<string, IReadOnlyDictionary<string, string>>
        {
            ["yarp"] = new Dictionary<string, string>
            {
                ["host-rewritten"] = "YARP's default transforms send the destination's authority as Host (RequestHeaderOriginalHost is off by default)",
                ["no-via"] = "YARP adds no Via (RFC 9110 §7.6.3 says a proxy MUST); it adds X-Forwarded-* instead",
                ["adds-x-forwarded-proto-and-host"] = "YARP's default transforms add X-Forwarded-Proto and X-Forwarded-Host",
                ["x-forwarded-for-not-appended"] = "YARP's default X-Forwarded action is Set: a client's X-Forwarded-For is replaced, not appended to",
                ["adds-traceparent"] = "ASP.NET Core's hosting Activity is propagated to the downstream (W3C traceparent)",
                ["nominated-request-field-forwarded"] = "YARP removes a static list of hop-by-hop names, not the fields Connection nominates (RFC 9110 §7.6.1)",
                ["nominated-response-field-forwarded"] = "the same static list on responses: fields the downstream's Connection nominates are relayed",
                ["upgrade-insecure-requests-dropped"] = "YARP's static list drops Upgrade-Insecure-Requests, an end-to-end field",
                ["proxy-authorization-dropped"] = "YARP's static list drops Proxy-Authorization, which a proxy may relay (RFC 9110 §11.7.2)",
                ["proxy-authenticate-dropped"] = "YARP's static list drops Proxy-Authenticate from responses",
            },
            ["httpclientproxy"] = new Dictionary<string, string>
            {
                ["host-rewritten"] = "HttpClient sends the downstream's authority as Host (the proxy does not copy the client's)",
                ["no-via"] = "the proxy adds no Via (RFC 9110 §7.6.3 says a proxy MUST)",
                ["x-forwarded-for-not-appended"] = "the proxy adds no X-Forwarded-For",
                ["adds-traceparent"] = "ASP.NET Core's hosting Activity is propagated to the downstream (W3C traceparent)",
            },
        };

    public enum Outcome
    {
        /// <summary>Exactly one request reached the downstream, with the case's body, and the client got the downstream's 200.</summary>
        Forwarded,
        /// <summary>The client got a 4xx/5xx (or a closed connection) and nothing complete reached the downstream.</summary>
        Rejected,
        /// <summary>Anything else: something reached the downstream but not as sent, or the client got no clear answer.</summary>
        Other,
    }

    [Fact]
    public void Difference_lists_name_real_cases_and_every_baseline()
    {
        Assert.Equal(Baseline.All.Select(b => b.Name).Order(), GuardianDifferences.Keys.Order());
        Assert.Equal(Baseline.All.Select(b => b.Name).Order(), ContractDifferences.Keys.Order());
        var ids = DesyncGuardianTests.CaseIds;
        foreach (var (baseline, cases) in GuardianDifferences)
        {
            foreach (var id in cases.Keys)
            {
                Assert.True(ids.Contains(id), $"{baseline}: the difference list names '{id}', which is not in cases.json");
            }
        }
    }

    [Theory, MemberData(nameof(GuardianCases))]
    public async Task Desync_guardian_case(string baseline, string @case)
    {
        var c = DesyncGuardianTests.Case(@case);
        var expected = DesyncGuardianTests.MustReject(c) ? Outcome.Rejected : Outcome.Forwarded;
        var p = await farm.GetAsync(baseline);
        // The de-framed body a forwarding proxy delivers: the chunked case's "hello", else the Content-Length bytes.
        var sent = c.Body();
        var body = Wire.Bytes(sent.StartsWith("5\r\nhello\r\n", StringComparison.Ordinal) ? "hello" : sent);
        var (observed, detail) = await ObserveAsync(p, c.Request(), body, c.Method);

        if (GuardianDifferences[baseline].TryGetValue(c.Id, out var known))
        {
            Assert.True(observed == known.Observed,
                $"{baseline}, {c.Id} ({c.Name}): listed as a known difference ({known.Observed}: {known.Reason}) but now {observed}: {detail}");
            return;
        }
        Assert.True(observed == expected, $"{baseline}, {c.Id} ({c.Name}, {c.Tier}): expected {expected}, got {observed}: {detail}");
    }

    /// <summary>
    /// One request that exercises every rule of the forwarding contract at once; each rule the baseline breaks is a
    /// named deviation, and the set of deviations must be exactly the listed one.
    /// </summary>
    [Theory, MemberData(nameof(Baselines))]
    public async Task Contract_deviations(string baseline)
    {
        var p = await farm.GetAsync(baseline);
        p.Downstream.Responder = _ => DownstreamReply.Raw(
            "HTTP/1.1 200 OK\r\nConnection: X-Resp-Hop\r\nX-Resp-Hop: 1\r\nKeep-Alive: timeout=5\r\nProxy-Authenticate: Basic\r\n" +
            "X-Resp-End: 2\r\nContent-Length: 2\r\n\r\nok");
        const string raw = "GET /model?q=1 HTTP/1.1\r\nHost: client.example\r\nConnection: X-Hop\r\nX-Hop: 1\r\nKeep-Alive: timeout=5\r\n" +
            "TE: trailers\r\nUpgrade-Insecure-Requests: 1\r\nProxy-Authorization: Basic Zm9v\r\nVia: 1.1 edge\r\n" +
            "X-Forwarded-For: 192.0.2.1\r\nX-End: 2\r\n\r\n";
        await using var client = await p.ConnectAsync();
        await client.SendAsync(raw);
        var response = await client.ReadResponseAsync();
        Assert.True(response?.Status == 200, $"{baseline}: expected the downstream's 200, got {response?.ToString() ?? "no response"}");
        var forwarded = await p.Downstream.WaitForForwardedAsync(1);
        Assert.True(forwarded.Count == 1, $"{baseline}: expected one forwarded request; {p.Downstream.Describe()}");
        var r = forwarded[0];

        var deviations = new SortedSet<string>(StringComparer.Ordinal);
        void Check(bool holds, string name)
        {
            if (!holds)
            {
                deviations.Add(name);
            }
        }
        Check(r.Target == "/model?q=1", "target-changed");
        Check(r.Joined("Host") == "client.example", "host-rewritten");
        Check(r.Values("X-Hop").Any() == false, "nominated-request-field-forwarded");
        Check(!r.Values("Keep-Alive").Any() && !r.Values("TE").Any() && !r.Values("Connection").Any(), "hop-by-hop-request-field-forwarded");
        Check(r.Joined("X-End") == "2", "end-to-end-request-field-dropped");
        Check(r.Joined("Upgrade-Insecure-Requests") == "1", "upgrade-insecure-requests-dropped");
        Check(r.Joined("Proxy-Authorization") == "Basic Zm9v", "proxy-authorization-dropped");
        Check((r.Joined("Via") ?? "").StartsWith("1.1 edge,", StringComparison.Ordinal), "no-via");
        Check((r.Joined("X-Forwarded-For") ?? "").Replace(" ", "", StringComparison.Ordinal) == "192.0.2.1,127.0.0.1", "x-forwarded-for-not-appended");
        Check(!r.Values("X-Forwarded-Proto").Any() && !r.Values("X-Forwarded-Host").Any(), "adds-x-forwarded-proto-and-host");
        Check(!r.Values("traceparent").Any(), "adds-traceparent");
        Check(response!.Header("X-Resp-Hop") is null, "nominated-response-field-forwarded");
        Check(response.Header("Keep-Alive") is null, "hop-by-hop-response-field-forwarded");
        Check(response.Header("X-Resp-End") == "2", "end-to-end-response-field-dropped");
        Check(response.Header("Proxy-Authenticate") == "Basic", "proxy-authenticate-dropped");

        var known = ContractDifferences[baseline];
        var unexpected = deviations.Where(d => !known.ContainsKey(d)).ToList();
        var gone = known.Keys.Where(k => !deviations.Contains(k)).ToList();
        Assert.True(unexpected.Count == 0 && gone.Count == 0,
            $"{baseline}: deviations [{string.Join(", ", deviations)}]; not listed: [{string.Join(", ", unexpected)}]; listed but gone: [{string.Join(", ", gone)}]\n" +
            $"forwarded: {r}\nresponse: {response}");
    }

    /// <summary>RFC 9110 §15.6.3: a gateway that cannot reach the downstream answers 502.</summary>
    [Theory, MemberData(nameof(Baselines))]
    public async Task Unreachable_downstream_is_502(string baseline)
    {
        using var refusing = new RefusingPort();
        await using var process = await BaselineProcess.StartAsync(Baseline.Get(baseline), refusing.Url);
        await using var client = await RawClient.ConnectAsync(process.Url);
        await client.SendAsync("GET /down HTTP/1.1\r\nHost: example.com\r\n\r\n");
        var response = await client.ReadResponseAsync();
        Assert.True(response?.Status == 502, $"{baseline}: expected 502, got {response?.ToString() ?? "no response"}");
    }

    private static async Task<(Outcome, string)> ObserveAsync(ProxyUnderTest p, string raw, byte[] body, string method)
    {
        RawResponse? response;
        await using (var client = await p.ConnectAsync())
        {
            await client.SendAsync(raw);
            response = await client.ReadResponseAsync(method);
        }
        await p.CanaryAsync();
        var forwarded = p.Downstream.Forwarded;
        var complete = p.Downstream.Partials.Count == 0 && p.Downstream.InFlight.Count == 0;
        var detail = $"response {response?.ToString() ?? "none"}; {p.Downstream.Describe()}";
        if ((response is null || response.Status >= 400) && forwarded.Count == 0)
        {
            return (Outcome.Rejected, detail);
        }
        if (response?.Status == 200 && forwarded.Count == 1 && complete && forwarded[0].Violations.Count == 0 && forwarded[0].Body.AsSpan().SequenceEqual(body))
        {
            return (Outcome.Forwarded, detail);
        }
        return (Outcome.Other, detail);
    }
}
