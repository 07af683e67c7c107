namespace LLRP.Tests.Infrastructure;

/// <summary>
/// A forwarding variant (`--client`). <paramref name="CanonicalFraming"/>: the variant frames the forwarded body exactly
/// as the contract says (CL when the client sent CL, chunked when it sent chunked, nothing without framing);
/// HttpClient chooses its own framing, so for it only "exactly one framing and identical body bytes" is asserted.
/// <paramref name="RelaysInterim"/> and <paramref name="SupportsAsteriskForm"/> name the known differences of clients
/// that cannot do either (HttpClient): the tests then assert the documented behaviour instead.
/// <paramref name="ExpectsContinueForLargeOrChunkedBodies"/>: the variant adds its own "Expect: 100-continue" to a
/// forwarded chunked body and to a Content-Length body of InvokerForwarder.ExpectContinueMinimumContentLength or more
/// (docs/known-differences.md). <paramref name="Client"/> and <paramref name="Options"/>: a variant that is another variant
/// under other options names its `--client` and the options (by default `--client` is the name, with no options).
/// <paramref name="ResendsSmallBodies"/>: an idempotent request with a small body, unanswered on a reused downstream
/// connection, is sent again; HttpClient streams the body from the client once (docs/known-differences.md).
/// <paramref name="Tls"/>: the proxy listens on https:// and the suite's raw clients speak TLS to it.
/// </summary>
public sealed record Variant(string Name, bool CanonicalFraming, bool RelaysInterim = true, bool SupportsAsteriskForm = true,
    bool ExpectsContinueForLargeOrChunkedBodies = false, string? Client = null, string[]? Options = null, bool ResendsSmallBodies = false,
    bool Tls = false)
{
    /// <summary>The proxy's command line for this variant: `--client` and its options.</summary>
    public string[] Arguments => ["--client", Client ?? Name, .. Options ?? []];
}

public static class Variants
{
    /// <summary>Every variant the suite runs against. Adding one is one line here.</summary>
    public static readonly IReadOnlyList<Variant> All =
    [
        new("httpclient", CanonicalFraming: false, RelaysInterim: false, SupportsAsteriskForm: false, ExpectsContinueForLargeOrChunkedBodies: true),
        new("llhttp", CanonicalFraming: true, ResendsSmallBodies: true),
        // llhttp on the runtime's sockets, both sides: the engine everywhere but Linux x86-64 (there, the same as llhttp).
        new("llhttp-runtime-engine", CanonicalFraming: true, Client: "llhttp", Options: ["--socketEngine", "runtime"], ResendsSmallBodies: true),
        // llhttp behind an https:// listener: every raw request of the suite again, over TLS (RawClient speaks it).
        new("llhttp-tls", CanonicalFraming: true, Client: "llhttp", ResendsSmallBodies: true, Tls: true),
        new("httpclient-httpcontext", CanonicalFraming: false, RelaysInterim: false, SupportsAsteriskForm: false, ExpectsContinueForLargeOrChunkedBodies: true),
        new("yarp", CanonicalFraming: false, RelaysInterim: false, SupportsAsteriskForm: false, ExpectsContinueForLargeOrChunkedBodies: true),
    ];

    public static Variant Get(string name) => All.Single(v => v.Name == name);

    /// <summary>One row per variant: MemberData for tests whose only parameter is the variant.</summary>
    public static TheoryData<string> Each()
    {
        var data = new TheoryData<string>();
        foreach (var v in All)
        {
            data.Add(v.Name);
        }
        return data;
    }

    /// <summary>Every variant crossed with every row.</summary>
    public static TheoryData<string, T> Cross<T>(IEnumerable<T> rows)
    {
        var data = new TheoryData<string, T>();
        var list = rows.ToList();
        foreach (var v in All)
        {
            foreach (var row in list)
            {
                data.Add(v.Name, row);
            }
        }
        return data;
    }

    public static TheoryData<string, T1, T2> Cross<T1, T2>(IEnumerable<(T1, T2)> rows)
    {
        var data = new TheoryData<string, T1, T2>();
        var list = rows.ToList();
        foreach (var v in All)
        {
            foreach (var (a, b) in list)
            {
                data.Add(v.Name, a, b);
            }
        }
        return data;
    }
}
