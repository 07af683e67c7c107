using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Security;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using LLHttp.Sockets;
using Xunit;

namespace LLHttp.Tests;

/// <summary>
/// LLHttp over TLS against an independent TLS server, OpenSSL's own `openssl s_server -www` (Debian's openssl), whose
/// status page says whether each connection's session was new or resumed: over both socket engines, a second
/// connection resumes the first one's session, and a certificate the client does not trust fails the handshake.
/// </summary>
public sealed class TlsTests
{
    public static TheoryData<LLHttpSocketEngine> Engines() => [LLHttpSocketEngine.Runtime, LLHttpSocketEngine.Epoll];

    [Theory]
    [MemberData(nameof(Engines))]
    public async Task A_reconnect_resumes_the_tls_session(LLHttpSocketEngine engine)
    {
        await using var server = await OpenSslServer.StartAsync(connections: 2);
        var options = new LLHttpOptions { SocketEngine = engine };
        var tls = server.TrustingClientOptions();

        var first = await GetStatusPageAsync(server.EndPoint, tls, options);
        var second = await GetStatusPageAsync(server.EndPoint, tls, options);

        // s_server -www prints "New, <protocol>, Cipher is ..." or "Reused, ..." for each connection's session.
        Assert.Contains("New, TLSv1.3", first, StringComparison.Ordinal);
        Assert.Contains("Reused, TLSv1.3", second, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(Engines))]
    public async Task An_untrusted_certificate_fails_the_handshake_before_any_request(LLHttpSocketEngine engine)
    {
        await using var server = await OpenSslServer.StartAsync(connections: 1);

        var e = await Assert.ThrowsAsync<LLHttpException>(async () =>
            await LLHttpConnection.ConnectAsync(server.EndPoint, new SslClientAuthenticationOptions { TargetHost = "localhost" },
                new LLHttpOptions { SocketEngine = engine }));

        Assert.Equal(LLHttpError.TlsHandshakeFailed, e.Error);
    }

    [Theory]
    [MemberData(nameof(Engines))]
    public async Task An_idle_connection_closes_with_close_notify_and_an_aborted_one_without(LLHttpSocketEngine engine)
    {
        await using var server = await OpenSslServer.StartAsync(connections: 2, www: false);
        var tls = server.TrustingClientOptions();
        var options = new LLHttpOptions { SocketEngine = engine };
        using var cancel = new CancellationTokenSource(TimeSpan.FromSeconds(10));

        var idle = await LLHttpConnection.ConnectAsync(server.EndPoint, tls, options, cancel.Token);
        idle.Dispose();
        var aborted = await LLHttpConnection.ConnectAsync(server.EndPoint, tls, options, cancel.Token);
        aborted.Abort();
        aborted.Dispose();
        var output = await server.OutputAsync();

        // s_server -msg prints each alert it receives ("<<<"); the idle connection's is the only one.
        var received = output.Split('\n').Where(l => l.StartsWith("<<< ", StringComparison.Ordinal) && l.Contains("close_notify", StringComparison.Ordinal));
        Assert.True(received.Count() == 1, output);
    }

    private static async Task<string> GetStatusPageAsync(EndPoint endPoint, SslClientAuthenticationOptions tls, LLHttpOptions options)
    {
        using var cancel = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        using var connection = await LLHttpConnection.ConnectAsync(endPoint, tls, options, cancel.Token);
        connection.StartRequest("GET"u8, "/"u8, "localhost"u8);
        await connection.SendRequestAsync(cancel.Token);
        var head = await connection.ReadResponseHeadAsync(cancel.Token);
        Assert.Equal(200, head.StatusCode);
        var body = new MemoryStream();
        var buffer = new byte[16 * 1024];
        int read;
        while ((read = await connection.ReadBodyAsync(buffer, cancel.Token)) > 0)
        {
            body.Write(buffer, 0, read);
        }
        return Encoding.Latin1.GetString(body.ToArray());
    }

    /// <summary>`openssl s_server -www` on a port of its choosing, serving a fixed number of connections.</summary>
    private sealed class OpenSslServer : IAsyncDisposable
    {
        private readonly Process _process;
        private readonly string _folder;
        private readonly X509Certificate2 _certificate;

        private OpenSslServer(Process process, string folder, X509Certificate2 certificate, IPEndPoint endPoint)
        {
            _process = process;
            _folder = folder;
            _certificate = certificate;
            EndPoint = endPoint;
        }

        public IPEndPoint EndPoint { get; }

        /// <summary>Trusts exactly the server's self-signed certificate.</summary>
        public SslClientAuthenticationOptions TrustingClientOptions()
        {
            var policy = new X509ChainPolicy { TrustMode = X509ChainTrustMode.CustomRootTrust, RevocationMode = X509RevocationMode.NoCheck };
            policy.CustomTrustStore.Add(_certificate);
            return new SslClientAuthenticationOptions { TargetHost = "localhost", CertificateChainPolicy = policy };
        }

        /// <summary>
        /// <paramref name="www"/>: answer each connection with the status page and close it; otherwise (-msg) keep it
        /// open and print every TLS message received, until the client closes.
        /// </summary>
        public static async Task<OpenSslServer> StartAsync(int connections, bool www = true)
        {
            var folder = Directory.CreateTempSubdirectory("llhttp-tls-").FullName;
            using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
            var request = new CertificateRequest("CN=localhost", key, HashAlgorithmName.SHA256);
            var names = new SubjectAlternativeNameBuilder();
            names.AddDnsName("localhost");
            request.CertificateExtensions.Add(names.Build());
            var certificate = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(7));
            await File.WriteAllTextAsync(Path.Combine(folder, "cert.pem"), certificate.ExportCertificatePem());
            await File.WriteAllTextAsync(Path.Combine(folder, "key.pem"), key.ExportPkcs8PrivateKeyPem());

            var start = new ProcessStartInfo("openssl")
            {
                ArgumentList = { "s_server", "-accept", "127.0.0.1:0", "-cert", "cert.pem", "-key", "key.pem", www ? "-www" : "-msg", "-naccept", connections.ToString(CultureInfo.InvariantCulture) },
                WorkingDirectory = folder,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                RedirectStandardInput = true,
            };
            var process = Process.Start(start)!;
            // "ACCEPT 127.0.0.1:PORT" once it listens.
            using var cancel = new CancellationTokenSource(TimeSpan.FromSeconds(10));
            while (await process.StandardOutput.ReadLineAsync(cancel.Token) is { } line)
            {
                if (line.StartsWith("ACCEPT ", StringComparison.Ordinal))
                {
                    return new OpenSslServer(process, folder, certificate, IPEndPoint.Parse(line["ACCEPT ".Length..]));
                }
            }
            process.Kill();
            throw new InvalidOperationException($"openssl s_server did not start: {await process.StandardError.ReadToEndAsync()}");
        }

        /// <summary>What s_server printed after it started listening, once it served its connections and exited.</summary>
        public async Task<string> OutputAsync()
        {
            using var cancel = new CancellationTokenSource(TimeSpan.FromSeconds(10));
            var output = await _process.StandardOutput.ReadToEndAsync(cancel.Token);
            await _process.WaitForExitAsync(cancel.Token);
            return output;
        }

        public async ValueTask DisposeAsync()
        {
            if (!_process.HasExited)
            {
                _process.Kill();
            }
            await _process.WaitForExitAsync();
            _process.Dispose();
            _certificate.Dispose();
            Directory.Delete(_folder, recursive: true);
        }
    }
}
