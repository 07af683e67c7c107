using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using LLRP.Tests.Infrastructure;
using Microsoft.Extensions.Configuration;

namespace LLRP.Tests;

/// <summary>
/// TLS on both sides: https:// listeners terminate TLS in front of the same request loop (every variant), https://
/// downstreams are authenticated against the system store plus --downstreamTrust (every variant), and what is not TLS
/// or not trusted gets a closed connection or a 502, never a downgrade.
/// </summary>
public sealed class TlsTests
{
    private static readonly string[] TrustSuiteAuthority = ["--downstreamTrust", TestCertificates.AuthorityPem];

    [Theory]
    [MemberData(nameof(Variants.Each), MemberType = typeof(Variants))]
    public async Task Every_variant_answers_over_tls_and_forwards_in_cleartext(string variant)
    {
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get(variant), [], unreachableDownstream: false, tls: true);
        Assert.Equal("https", proxy.Url.Scheme);

        await using var client = await proxy.ConnectAsync();
        await client.SendAsync("GET /over-tls HTTP/1.1\r\nHost: tls.example\r\n\r\n");
        var response = await client.ReadResponseAsync();

        Assert.Equal(200, response?.Status);
        var forwarded = Assert.Single(await proxy.Downstream.WaitForForwardedAsync(1));
        Assert.Equal("/over-tls", forwarded.Target);
        Assert.Equal(["https"], forwarded.Values("X-Forwarded-Proto"));
    }

    [Theory]
    [MemberData(nameof(Variants.Each), MemberType = typeof(Variants))]
    public async Task A_cleartext_request_gets_no_forwarded_proto(string variant)
    {
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get(variant), [], unreachableDownstream: false);

        await using var client = await proxy.ConnectAsync();
        await client.SendAsync("GET /cleartext HTTP/1.1\r\nHost: tls.example\r\n\r\n");
        Assert.Equal(200, (await client.ReadResponseAsync())?.Status);

        var forwarded = Assert.Single(await proxy.Downstream.WaitForForwardedAsync(1));
        // The llhttp-tls variant's listener is https, so it says so; every other variant's is cleartext.
        Assert.Equal(Variants.Get(variant).Tls ? ["https"] : [], forwarded.Values("X-Forwarded-Proto"));
    }

    [Fact]
    public async Task A_pkcs12_certificate_alone_serves_tls()
    {
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get("llhttp"), [], unreachableDownstream: false, tls: true,
            certificateArguments: ["--certificate", TestCertificates.LocalhostPfx]);

        await using var client = await proxy.ConnectAsync();
        Assert.Equal(200, (await client.PingAsync())?.Status);
    }

    [Theory]
    [MemberData(nameof(Variants.Each), MemberType = typeof(Variants))]
    public async Task Every_variant_forwards_to_an_https_downstream_it_trusts(string variant)
    {
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get(variant), TrustSuiteAuthority, unreachableDownstream: false,
            downstreamCertificate: TestCertificates.Localhost);

        await using var client = await proxy.ConnectAsync();
        await client.SendAsync("GET /to-https HTTP/1.1\r\nHost: tls.example\r\n\r\n");
        var first = await client.ReadResponseAsync();
        // A second request on the same client connection reuses (or reopens) the downstream TLS connection.
        await client.SendAsync("GET /to-https-again HTTP/1.1\r\nHost: tls.example\r\n\r\n");
        var second = await client.ReadResponseAsync();

        Assert.Equal(200, first?.Status);
        Assert.Equal(200, second?.Status);
        var forwarded = await proxy.Downstream.WaitForForwardedAsync(2);
        Assert.Equal(["/to-https", "/to-https-again"], forwarded.Select(r => r.Target));
    }

    public static TheoryData<string, string> BadDownstreamCertificates() =>
        Variants.Cross(["untrusted", "expired", "wrong host"]);

    [Theory]
    [MemberData(nameof(BadDownstreamCertificates))]
    public async Task A_downstream_certificate_that_is_not_trusted_expired_or_for_another_host_is_a_502(string variant, string problem)
    {
        var (certificate, options) = problem switch
        {
            // The suite's CA is in no system store: without --downstreamTrust the valid leaf is untrusted.
            "untrusted" => (TestCertificates.Localhost, Array.Empty<string>()),
            "expired" => (TestCertificates.Expired, TrustSuiteAuthority),
            _ => (TestCertificates.OtherHost, TrustSuiteAuthority),
        };
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get(variant), options, unreachableDownstream: false,
            downstreamCertificate: certificate);

        await using var client = await proxy.ConnectAsync();
        await client.SendAsync("GET /refused HTTP/1.1\r\nHost: tls.example\r\n\r\n");
        var response = await client.ReadResponseAsync();

        Assert.Equal(502, response?.Status);
        Assert.Empty(proxy.Downstream.Forwarded);
    }

    [Theory]
    [InlineData("plaintext request", "GET / HTTP/1.1\r\nHost: tls.example\r\n\r\n")]
    // A TLS record header announcing a handshake, then bytes that are no ClientHello.
    [InlineData("garbage ClientHello", "\x16\x03\x01\x00\x20garbage-garbage-garbage-garbage!")]
    public async Task What_is_not_a_tls_handshake_on_an_https_listener_is_closed_unanswered(string what, string bytes)
    {
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get("llhttp"), [], unreachableDownstream: false, tls: true);

        await using var client = await RawClient.ConnectAsync(new Uri($"http://127.0.0.1:{proxy.Url.Port}"));
        await client.SendAsync(bytes);
        var ending = await client.WaitForEndAsync();

        // The documented answer is a closed connection (after a TLS alert, if the TLS library sends one): never HTTP.
        Assert.NotEqual(Ending.StillOpen, ending);
        Assert.DoesNotContain("HTTP/", Wire.Text(client.ExtraBytes), StringComparison.Ordinal);
        await proxy.CanaryAsync();
        Assert.DoesNotContain(proxy.Downstream.Requests, r => r.Target != Wire.CanaryPath);
        _ = what;
    }

    [Fact]
    public async Task A_stalled_handshake_is_closed_by_tlsHandshakeTimeout()
    {
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get("llhttp"), ["--tlsHandshakeTimeout", "1"], unreachableDownstream: false, tls: true);

        await using var client = await RawClient.ConnectAsync(new Uri($"http://127.0.0.1:{proxy.Url.Port}"));
        // The first bytes of a handshake record, then nothing: slowloris during TLS.
        await client.SendAsync("\x16\x03\x01");

        Assert.NotEqual(Ending.StillOpen, await client.WaitForEndAsync());
    }

    [Fact]
    public async Task No_client_certificate_is_asked_for()
    {
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get("llhttp"), ["--protocols", "http1"], unreachableDownstream: false, tls: true);
        var asked = false;
        var options = TestCertificates.ClientOptions("localhost");
        // Offered both: the listener speaks HTTP/1.1 only (--protocols http1), and ALPN must say so.
        options.ApplicationProtocols = [SslApplicationProtocol.Http2, SslApplicationProtocol.Http11];
        options.LocalCertificateSelectionCallback = (_, _, _, _, issuers) =>
        {
            // Called with the server's acceptable issuers only when it sent a CertificateRequest.
            asked |= issuers.Length > 0;
            return null!;
        };

        using var tcp = new System.Net.Sockets.TcpClient();
        await tcp.ConnectAsync("127.0.0.1", proxy.Url.Port);
        await using var tls = new SslStream(tcp.GetStream());
        await tls.AuthenticateAsClientAsync(options, Wire.Deadline());

        Assert.False(asked);
        Assert.False(tls.IsMutuallyAuthenticated);
        Assert.Equal("http/1.1", tls.NegotiatedApplicationProtocol.ToString());
    }

    [Fact]
    public async Task A_client_initiated_renegotiation_is_refused()
    {
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get("llhttp"), [], unreachableDownstream: false, tls: true);
        // OpenSSL's own client, over TLS 1.2 (TLS 1.3 has no renegotiation): "R" on its input asks for one.
        var start = new System.Diagnostics.ProcessStartInfo("openssl")
        {
            ArgumentList = { "s_client", "-connect", $"127.0.0.1:{proxy.Url.Port}", "-tls1_2", "-CAfile", TestCertificates.AuthorityPem, "-servername", "localhost" },
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        using var client = System.Diagnostics.Process.Start(start)!;
        var output = client.StandardOutput.ReadToEndAsync();
        var errors = client.StandardError.ReadToEndAsync();
        using var cap = new CancellationTokenSource(Wire.Cap);
        // The first handshake is done once the session summary is printed; then ask for a second one.
        await Task.Delay(TimeSpan.FromSeconds(1), cap.Token);
        await client.StandardInput.WriteLineAsync("R");
        await client.StandardInput.FlushAsync(cap.Token);
        await Task.Delay(TimeSpan.FromSeconds(1), cap.Token);
        client.StandardInput.Close();
        await client.WaitForExitAsync(cap.Token);
        var text = await output + await errors;

        Assert.Contains("Verify return code: 0 (ok)", text, StringComparison.Ordinal);
        var renegotiation = text.IndexOf("RENEGOTIATING", StringComparison.Ordinal);
        Assert.True(renegotiation >= 0, text);
        // A second handshake would verify the certificate again; the proxy closes the connection instead.
        Assert.DoesNotContain("verify return:1", text[renegotiation..], StringComparison.Ordinal);
    }

    // docs/request-side.md: a ChaCha20-Poly1305 suite is offered over TLS 1.3, not over TLS 1.2 (the runtime's default
    // list; a CipherSuitesPolicy that added it would turn off the cached SSL_CTX and with it session resumption). The
    // suite's certificates are ECDSA: the TLS 1.2 suites are ECDHE-ECDSA ones.
    [Theory]
    [InlineData("-tls1_3", "-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256", true)]
    [InlineData("-tls1_2", "-cipher", "ECDHE-ECDSA-CHACHA20-POLY1305", false)]
    [InlineData("-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-GCM-SHA256", true)]
    public async Task Chacha20_is_offered_over_tls13_and_not_over_tls12(string version, string option, string suite, bool offered)
    {
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get("llhttp"), [], unreachableDownstream: false, tls: true);
        var start = new System.Diagnostics.ProcessStartInfo("openssl")
        {
            ArgumentList = { "s_client", "-connect", $"127.0.0.1:{proxy.Url.Port}", version, option, suite, "-CAfile", TestCertificates.AuthorityPem, "-servername", "localhost" },
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        using var client = System.Diagnostics.Process.Start(start)!;
        client.StandardInput.Close();
        using var cap = new CancellationTokenSource(Wire.Cap);
        var output = client.StandardOutput.ReadToEndAsync(cap.Token);
        var errors = client.StandardError.ReadToEndAsync(cap.Token);
        await client.WaitForExitAsync(cap.Token);
        var text = await output + await errors;

        Assert.True(text.Contains($"Cipher is {suite}", StringComparison.Ordinal) == offered, text);
    }

    [Theory]
    [InlineData("urls", "https://127.0.0.1:0", "--urls has an https:// address: --certificate is required (and --certificateKey for a PEM key file).")]
    [InlineData("certificate", "localhost.pem", "--certificate is given but --urls has no https:// address.")]
    public void A_certificate_and_an_https_listener_come_together(string name, string value, string expected)
    {
        var settings = new Dictionary<string, string?>
        {
            ["downstream"] = "http://127.0.0.1:9",
            [name] = value == "localhost.pem" ? TestCertificates.LocalhostPem : value,
            ["certificateKey"] = name == "certificate" ? TestCertificates.LocalhostKeyPem : null,
        };

        var e = Assert.Throws<OptionsException>(() => CommandLine.Read(new ConfigurationBuilder().AddInMemoryCollection(settings).Build()));

        Assert.Equal(expected, e.Message);
    }

    [Fact]
    public void A_key_that_does_not_match_the_certificate_is_refused_in_one_line()
    {
        var settings = new Dictionary<string, string?>
        {
            ["downstream"] = "http://127.0.0.1:9",
            ["urls"] = "https://127.0.0.1:0",
            ["certificate"] = TestCertificates.LocalhostPem,
            ["certificateKey"] = TestCertificates.OtherKeyPem,
        };

        var e = Assert.Throws<OptionsException>(() => CommandLine.Read(new ConfigurationBuilder().AddInMemoryCollection(settings).Build()));

        Assert.StartsWith($"--certificate '{TestCertificates.LocalhostPem}' and --certificateKey '{TestCertificates.OtherKeyPem}' are not a PEM certificate and its matching private key", e.Message);
        Assert.DoesNotContain('\n', e.Message);
    }

    [Fact]
    public void A_trust_bundle_without_an_https_downstream_is_refused()
    {
        var settings = new Dictionary<string, string?>
        {
            ["downstream"] = "http://127.0.0.1:9",
            ["downstreamTrust"] = TestCertificates.AuthorityPem,
        };

        var e = Assert.Throws<OptionsException>(() => CommandLine.Read(new ConfigurationBuilder().AddInMemoryCollection(settings).Build()));

        Assert.Equal("--downstreamTrust is given but --downstream has no https:// address.", e.Message);
    }

    [Fact]
    public void The_suite_certificates_are_what_the_tests_say()
    {
        Assert.True(TestCertificates.Expired.NotAfter < DateTime.Now);
        Assert.Contains("other.example", TestCertificates.OtherHost.Subject, StringComparison.Ordinal);
        Assert.True(TestCertificates.Localhost.Extensions.OfType<X509SubjectAlternativeNameExtension>().Single().EnumerateIPAddresses().Any());
    }
}
