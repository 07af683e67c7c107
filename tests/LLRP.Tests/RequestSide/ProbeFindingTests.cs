using LLRP.Http1;
using LLRP.Tests.Infrastructure;

namespace LLRP.Tests.RequestSide;

/// <summary>
/// Requests an external HTTP/1.1 probe suite answered wrongly or unsteadily, decided on the shared request side (so
/// every variant answers alike) and held to one answer across every split of the input.
/// </summary>
public sealed class ProbeFindingTests
{
    private const string Host = "Host: example.com\r\n";

    public static TheoryData<string, string, int> Rejections => new()
    {
        // RFC 9112 §3.2 and RFC 9110 §4.2.1, §7.2: with origin-form the Host is the target URI's authority, and an http
        // URI with an empty host MUST be rejected as invalid (a proxy filling in its downstream's authority hides that).
        { "empty Host, origin-form", "GET / HTTP/1.1\r\nHost:\r\n\r\n", 400 },
        { "Host of whitespace only", "GET / HTTP/1.1\r\nHost: \t \r\n\r\n", 400 },
        { "empty Host, asterisk-form", "OPTIONS * HTTP/1.1\r\nHost:\r\n\r\n", 400 },
        { "empty Host, HTTP/1.0", "GET / HTTP/1.0\r\nHost:\r\n\r\n", 400 },
        // RFC 9112 §2.3: HTTP-version = "HTTP/" DIGIT "." DIGIT, case-sensitive; anything else is a malformed request line
        // (RFC 9112 §3: 400). RFC 9110 §15.6.6: 505 is for a well-formed version the server does not support.
        { "lower-case version", $"GET / http/1.1\r\n{Host}\r\n", 400 },
        { "mixed-case version", $"GET / Http/1.1\r\n{Host}\r\n", 400 },
        { "two-digit minor", $"GET / HTTP/1.32\r\n{Host}\r\n", 400 },
        { "no minor", $"GET / HTTP/1\r\n{Host}\r\n", 400 },
        { "letter for minor", $"GET / HTTP/1.x\r\n{Host}\r\n", 400 },
        { "no dot", $"GET / HTTP/11\r\n{Host}\r\n", 400 },
        { "other protocol", $"GET / HTTPS/1.1\r\n{Host}\r\n", 400 },
        { "HTTP/2.0", $"GET / HTTP/2.0\r\n{Host}\r\n", 505 },
        { "HTTP/1.2", $"GET / HTTP/1.2\r\n{Host}\r\n", 505 },
        { "HTTP/0.9 written as a version", $"GET / HTTP/0.9\r\n{Host}\r\n", 505 },
        // RFC 9112 §3: a method longer than any the server implements SHOULD get 501; one that fills the request-line
        // limit is longer than any the proxy forwards (RequestHead.CheckMethodWithinLimit).
        { "100 KB method", $"{new string('A', 100_000)} / HTTP/1.1\r\n{Host}\r\n", 501 },
        { "method of exactly maxRequestLineSize", $"{new string('A', 8192)} / HTTP/1.1\r\n{Host}\r\n", 501 },
        { "100 KB method with a separator in it", $"{new string('A', 100)}({new string('A', 99_900)} / HTTP/1.1\r\n{Host}\r\n", 400 },
        // RFC 9110 §15.5.15: a target longer than the proxy interprets is 414, however the line arrives (not 431).
        { "100 KB target", $"GET /{new string('a', 100_000)} HTTP/1.1\r\n{Host}\r\n", 414 },
        { "100 KB target, malformed version", $"GET /{new string('a', 100_000)} http/1.1\r\n{Host}\r\n", 414 },
        // RFC 9112 §3.2: a Host with an invalid value MUST get 400. "]" belongs to an IP-literal only (RFC 3986 §3.2.2).
        { "Host a]b", "GET / HTTP/1.1\r\nHost: a]b\r\n\r\n", 400 },
        { "Host [::1", "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", 400 },
        { "Host [::1]x", "GET / HTTP/1.1\r\nHost: [::1]x\r\n\r\n", 400 },
        { "Host port not digits", "GET / HTTP/1.1\r\nHost: a:8a\r\n\r\n", 400 },
        { "Host two ports", "GET / HTTP/1.1\r\nHost: a:80:80\r\n\r\n", 400 },
        { "Host port only", "GET / HTTP/1.1\r\nHost: :80\r\n\r\n", 400 },
        { "Host bad percent-encoding", "GET / HTTP/1.1\r\nHost: a%zzb\r\n\r\n", 400 },
        { "Host with a zone identifier", "GET / HTTP/1.1\r\nHost: [fe80::1%25eth0]\r\n\r\n", 400 },
        { "Host obs-text", "GET / HTTP/1.1\r\nHost: \u00e9.example\r\n\r\n", 400 },
        // RFC 3986 §3.2.2 allows sub-delims in a reg-name, but no variant built on HttpRequestMessage can send them (its
        // Host refuses them, which used to surface as 502): refused for every variant with 400 (HostCheck.NotForwardable).
        { "Host a!b", "GET / HTTP/1.1\r\nHost: a!b\r\n\r\n", 400 },
        { "Host a;", "GET / HTTP/1.1\r\nHost: a;\r\n\r\n", 400 },
        { "Host a~b", "GET / HTTP/1.1\r\nHost: a~b\r\n\r\n", 400 },
        { "Host percent-encoded", "GET / HTTP/1.1\r\nHost: a%41b\r\n\r\n", 400 },
        { "Host empty label", "GET / HTTP/1.1\r\nHost: a..b\r\n\r\n", 400 },
        { "Host IPvFuture", "GET / HTTP/1.1\r\nHost: [v1.x]\r\n\r\n", 400 },
        { "Host port above 65535", "GET / HTTP/1.1\r\nHost: a:65536\r\n\r\n", 400 },
        { "absolute-form authority a!b", "GET http://a!b/ HTTP/1.1\r\nHost: a\r\n\r\n", 400 },
        { "absolute-form authority a]b", "GET http://a]b/ HTTP/1.1\r\nHost: a\r\n\r\n", 400 },
        // RFC 9112 §3.2: an invalid Host is refused even where absolute-form makes the proxy ignore it.
        { "absolute-form with Host a]b", "GET http://a/ HTTP/1.1\r\nHost: a]b\r\n\r\n", 400 },
    };

    [Theory, MemberData(nameof(Rejections))]
    public async Task Every_split_gets_one_answer(string label, string raw, int status)
    {
        foreach (var pieces in RequestSideDriver.Splits(Wire.Bytes(raw)))
        {
            var outcome = await RequestSideDriver.RunAsync(pieces);
            Assert.True(outcome.RejectStatus == status && !outcome.BodyRejected,
                $"{label} split as [{string.Join(", ", pieces.Select(p => p.Length))}]: {outcome}, expected {status}");
        }
    }

    public static TheoryData<string, string, string> Forwards => new()
    {
        // RFC 9112 §3.2.2: with absolute-form the proxy ignores the received Host, empty or not forwardable, and sends
        // the target's authority.
        { "empty Host, absolute-form", "GET http://a.example/p HTTP/1.1\r\nHost:\r\n\r\n", "a.example" },
        { "Host a!b, absolute-form", "GET http://a.example/p HTTP/1.1\r\nHost: a!b\r\n\r\n", "a.example" },
        { "Host trailing dot, empty port", "GET / HTTP/1.1\r\nHost: a.example.:\r\n\r\n", "a.example.:" },
        { "Host underscore, leading zeros", "GET / HTTP/1.1\r\nHost: a_b-c:0080\r\n\r\n", "a_b-c:0080" },
        { "Host IPv4-mapped IPv6", "GET / HTTP/1.1\r\nHost: [::ffff:1.2.3.4]:65535\r\n\r\n", "[::ffff:1.2.3.4]:65535" },
        { "method just under the limit", $"{new string('A', 8000)} / HTTP/1.1\r\n{Host}\r\n", "example.com" },
    };

    [Theory, MemberData(nameof(Forwards))]
    public async Task Every_split_forwards(string label, string raw, string authority)
    {
        foreach (var pieces in RequestSideDriver.Splits(Wire.Bytes(raw)))
        {
            var outcome = await RequestSideDriver.RunAsync(pieces);
            Assert.True(outcome.RejectStatus is null && outcome.Authority == authority,
                $"{label} split as [{string.Join(", ", pieces.Select(p => p.Length))}]: {outcome}, expected Host '{authority}'");
        }
    }

    // The rule is "what every variant can send": each value the proxy forwards must pass HttpRequestMessage's Host (which
    // the HttpClient, HttpContext and YARP variants go through), and each RFC-valid value it refuses must fail there.
    public static TheoryData<string, string> Hosts => new()
    {
        { "example.com", nameof(HostCheck.Forwardable) },
        { "EXAMPLE.com:8080", nameof(HostCheck.Forwardable) },
        { "127.0.0.1:80", nameof(HostCheck.Forwardable) },
        { "1.2.3.999", nameof(HostCheck.Forwardable) },
        { "[::1]", nameof(HostCheck.Forwardable) },
        { "[::1]:", nameof(HostCheck.Forwardable) },
        { "[2001:db8::ffff:1.2.3.4]:65535", nameof(HostCheck.Forwardable) },
        { "xn--bcher-kva.example", nameof(HostCheck.Forwardable) },
        { "a_b", nameof(HostCheck.Forwardable) },
        { "-", nameof(HostCheck.Forwardable) },
        { "a.-b", nameof(HostCheck.Forwardable) },
        { "_a._b", nameof(HostCheck.Forwardable) },
        // Labels opening with "-" or "_" that Uri refuses (found by fuzz/ host target).
        { "1.-b", nameof(HostCheck.NotForwardable) },
        { "a.b._c", nameof(HostCheck.NotForwardable) },
        { "d1a.b.-N:80", nameof(HostCheck.NotForwardable) },
        { new string('1', 68), nameof(HostCheck.NotForwardable) },
        { "a" + new string('1', 70), nameof(HostCheck.Forwardable) },
        { "a.", nameof(HostCheck.Forwardable) },
        { "a:000065535", nameof(HostCheck.Forwardable) },
        { "a!b", nameof(HostCheck.NotForwardable) },
        { "a;", nameof(HostCheck.NotForwardable) },
        { "a$b", nameof(HostCheck.NotForwardable) },
        { "a&b", nameof(HostCheck.NotForwardable) },
        { "a'b", nameof(HostCheck.NotForwardable) },
        { "a(b)", nameof(HostCheck.NotForwardable) },
        { "a*b", nameof(HostCheck.NotForwardable) },
        { "a+b", nameof(HostCheck.NotForwardable) },
        { "a,b", nameof(HostCheck.NotForwardable) },
        { "a=b", nameof(HostCheck.NotForwardable) },
        { "a~b", nameof(HostCheck.NotForwardable) },
        { "a%41b", nameof(HostCheck.NotForwardable) },
        { "a..b", nameof(HostCheck.NotForwardable) },
        { ".a", nameof(HostCheck.NotForwardable) },
        { "[v1.x]", nameof(HostCheck.NotForwardable) },
        { "[V1F.a:b]:80", nameof(HostCheck.NotForwardable) },
        { "a:65536", nameof(HostCheck.NotForwardable) },
        { "a]b", nameof(HostCheck.Invalid) },
        { "x[y", nameof(HostCheck.Invalid) },
        { "[::1", nameof(HostCheck.Invalid) },
        { "[1::2::3]", nameof(HostCheck.Invalid) },
        { "[1.2.3.4]", nameof(HostCheck.Invalid) },
        { "[v1]", nameof(HostCheck.Invalid) },
        { "[fe80::1%eth0]", nameof(HostCheck.Invalid) },
        { "a%4", nameof(HostCheck.Invalid) },
        { "a@b", nameof(HostCheck.Invalid) },
        { "a/b", nameof(HostCheck.Invalid) },
        { "a b", nameof(HostCheck.Invalid) },
        { ":80", nameof(HostCheck.Invalid) },
        { "", nameof(HostCheck.Invalid) },
    };

    [Theory, MemberData(nameof(Hosts))]
    public void Host_rule_matches_what_HttpClient_can_send(string host, string verdict)
    {
        var expected = Enum.Parse<HostCheck>(verdict);
        Assert.Equal(expected, HostSyntax.Check(Wire.Bytes(host)));
        if (expected == HostCheck.Invalid)
        {
            return;
        }
        using var request = new HttpRequestMessage(HttpMethod.Get, "http://127.0.0.1/");
        var sendable = Record.Exception(() => request.Headers.Host = host) is null;
        Assert.Equal(expected == HostCheck.Forwardable, sendable);
    }
}
