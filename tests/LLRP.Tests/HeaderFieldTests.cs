using LLRP.Tests.Infrastructure;

namespace LLRP.Tests;

/// <summary>Header field syntax and Host: RFC 9112 §3.2, §5.1, §5.2; RFC 9110 §5.5, §5.6.2.</summary>
public sealed class HeaderFieldTests(DefaultProxies farm) : IClassFixture<DefaultProxies>
{
    public static TheoryData<string> Variant => Variants.Each();

    private static string Get(string fields) => $"GET /h HTTP/1.1\r\nHost: example.com\r\n{fields}\r\n";

    // RFC 9112 §5.1: "A server MUST reject, with a response status code of 400 (Bad Request), any received request
    // message that contains whitespace between a header field name and colon."
    public static TheoryData<string, string> WhitespaceBeforeColon => Variants.Cross(new[]
    {
        "X-Foo : 1\r\n",
        "X-Foo\t: 1\r\n",
        "Transfer-Encoding : chunked\r\n",
        "Content-Length : 0\r\n",
        "Host : example.com\r\n",
    });

    [Theory, MemberData(nameof(WhitespaceBeforeColon))]
    public async Task Rejects_whitespace_before_colon(string variant, string field)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, Get(field), Verdict.BadRequest);
    }

    // RFC 9112 §5.2: obs-fold in a request MUST be rejected with 400 or replaced by SP; the contract rejects.
    public static TheoryData<string, string> ObsFolds => Variants.Cross(new[]
    {
        "X-Foo: a\r\n b\r\n",
        "X-Foo: a\r\n\tb\r\n",
        "Transfer-Encoding:\r\n chunked\r\n",
        "X-Foo: a\r\n \r\n",
    });

    [Theory, MemberData(nameof(ObsFolds))]
    public async Task Rejects_obs_fold(string variant, string field)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, Get(field), Verdict.BadRequest);
    }

    // RFC 9112 §2.2: a whitespace-led line right after the request-line MUST be rejected or ignored.
    [Theory, MemberData(nameof(Variant))]
    public async Task Rejects_whitespace_led_first_header_line(string variant)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, "GET / HTTP/1.1\r\n Host: example.com\r\n\r\n", Verdict.BadRequest);
    }

    // RFC 9110 §5.1 / §5.6.2: field-name = token.
    public static TheoryData<string, string> InvalidNames => Variants.Cross(new[]
    {
        ": empty-name\r\n",
        "X@Foo: 1\r\n",
        "X\"Foo: 1\r\n",
        "X(Foo): 1\r\n",
        "X/Foo: 1\r\n",
        "X{Foo}: 1\r\n",
        "X=Foo: 1\r\n",
        "X Foo: 1\r\n",
        "X\u0080Foo: 1\r\n",
        "X\u0085Foo: 1\r\n",
        "X\u0000Foo: 1\r\n",
        "X\u000bFoo: 1\r\n",
        "X\u0001Foo: 1\r\n",
        "X\u007fFoo: 1\r\n",
        "NoColonHere\r\n",
    });

    [Theory, MemberData(nameof(InvalidNames))]
    public async Task Rejects_invalid_token_chars_in_field_name(string variant, string field)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, Get(field), Verdict.BadRequest);
    }

    // RFC 9110 §5.5: CR, LF and NUL MUST be rejected or replaced; other CTLs are not field-vchar.
    public static TheoryData<string, string> InvalidValues => Variants.Cross(new[]
    {
        "X-Foo: a\u0000b\r\n",
        "X-Foo: \u0000\r\n",
        "X-Foo: a\u0001b\r\n",
        "X-Foo: a\u000bb\r\n",
        "X-Foo: a\u000cb\r\n",
        "X-Foo: a\u001fb\r\n",
        "X-Foo: a\u007fb\r\n",
        "Host2: a\u0000.b\r\n",
    });

    [Theory, MemberData(nameof(InvalidValues))]
    public async Task Rejects_ctl_in_field_value(string variant, string field)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, Get(field), Verdict.BadRequest);
    }

    // RFC 9110 §5.5: field-vchar includes obs-text; HTAB and SP inside a value are fine; OWS around it is not part of it.
    public static TheoryData<string, string> ValidValues => Variants.Cross(new[]
    {
        "X-Foo: a\tb c\r\n",
        "X-Foo: caf\u00e9\r\n",
        "X-Foo:   padded   \r\n",
        "X-Foo:\tx\t\r\n",
        "X-Empty:\r\n",
        "X-Empty: \r\n",
        // The shortest field line there is; one that crossed reads was once refused (RequestSplitTests cuts it everywhere).
        "X:\r\n",
        "My-Custom-Header.!#$%&'*+^_`|~0123456789: tchars\r\n",
        "X-Multi: a\r\nX-Multi: b\r\n",
        "Proxy-Authorization: Basic Zm9vOmJhcg==\r\n",
        "Cookie: a=1; b=2\r\n",
    });

    [Theory, MemberData(nameof(ValidValues))]
    public async Task Forwards_valid_fields_unchanged(string variant, string field)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.ForwardedAsync(p, Get(field));
    }

    // RFC 9112 §3.2: "A server MUST respond with a 400... to any HTTP/1.1 request message that lacks a Host header
    // field and to any request message that contains more than one Host header field line or a Host header field with
    // an invalid field value."
    public static TheoryData<string, string> BadHosts => Variants.Cross(new[]
    {
        "GET / HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nX-Foo: 1\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: example.com\r\nHost: example.com\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a.example, b.example\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: user@example.com\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: example.com/path\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: example.com?q\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: example.com#f\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: exa\"mple.com\r\n\r\n",
        // RFC 9110 §4.2.1, §7.2: with origin-form an empty Host is an http URI with an empty host, which is invalid.
        "GET / HTTP/1.1\r\nHost:\r\n\r\n",
        // RFC 3986 §3.2.2: "]" only closes an IP-literal.
        "GET / HTTP/1.1\r\nHost: a]b\r\n\r\n",
        // Valid reg-names HttpRequestMessage cannot send: 400 in every variant, never 502 (HostSyntax).
        "GET / HTTP/1.1\r\nHost: a!b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a;\r\n\r\n",
        // Labels opening with "-" or "_" that HttpRequestMessage refuses (found by fuzz/ host target).
        "GET / HTTP/1.1\r\nHost: 1.-b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a.b._c:80\r\n\r\n",
    });

    [Theory, MemberData(nameof(BadHosts))]
    public async Task Rejects_missing_duplicate_or_invalid_host(string variant, string raw)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, raw, Verdict.BadRequest);
    }

    public static TheoryData<string, string> GoodHosts => Variants.Cross(new[]
    {
        "example.com", "example.com:8080", "127.0.0.1:80", "[::1]:8080", "EXAMPLE.com", "xn--bcher-kva.example",
    });

    [Theory, MemberData(nameof(GoodHosts))]
    public async Task Forwards_valid_host(string variant, string host)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.ForwardedAsync(p, $"GET / HTTP/1.1\r\nHost: {host}\r\n\r\n");
    }

    // RFC 9112 §3.2: Host is required in HTTP/1.1 only; the proxy still forwards exactly one Host.
    [Theory, MemberData(nameof(Variant))]
    public async Task Forwards_http10_request_without_host_with_one_host(string variant)
    {
        var p = await farm.GetAsync(variant);
        var expected = ExpectedForward.FromClientRequest("GET /old HTTP/1.0\r\n\r\n");
        await Verdict.ForwardedAsync(p, "GET /old HTTP/1.0\r\n\r\n", expected, keepAlive: false);
    }
}
