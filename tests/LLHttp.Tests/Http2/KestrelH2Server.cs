using System.Net;
using System.Net.Security;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace LLHttp.Tests.Http2;

/// <summary>
/// A real HTTP/2 downstream: Kestrel on a loopback port, h2c with prior knowledge (Protocols = Http2) or h2 over TLS with
/// a self-signed certificate. Routes: /echo (the request body back, its trailer x-req-trailer echoed as a response
/// trailer), /size/N (N bytes), /hold (waits for <see cref="Release"/>), /reset (RST_STREAM INTERNAL_ERROR), anything
/// else 200 "ok".
/// </summary>
internal sealed class KestrelH2Server : IAsyncDisposable
{
    private readonly WebApplication _app;
    private readonly X509Certificate2? _certificate;
    private TaskCompletionSource _hold = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _held;

    private KestrelH2Server(WebApplication app, X509Certificate2? certificate, IPEndPoint endPoint)
    {
        _app = app;
        _certificate = certificate;
        EndPoint = endPoint;
    }

    public IPEndPoint EndPoint { get; }

    /// <summary>Requests waiting in /hold.</summary>
    public int Held => Volatile.Read(ref _held);

    public static async Task<KestrelH2Server> StartAsync(bool tls = false, int maxStreams = 100)
    {
        X509Certificate2? certificate = tls ? CreateCertificate() : null;
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(k =>
        {
            k.Limits.Http2.MaxStreamsPerConnection = maxStreams;
            k.Listen(IPAddress.Loopback, 0, listen =>
            {
                listen.Protocols = HttpProtocols.Http2;
                if (certificate is not null)
                {
                    listen.UseHttps(certificate);
                }
            });
        });
        builder.Services.Configure<HostOptions>(o => o.ShutdownTimeout = TimeSpan.FromSeconds(5));
        var app = builder.Build();
        KestrelH2Server? server = null;
        app.Run(context => server!.HandleAsync(context));
        await app.StartAsync();
        var address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
        server = new KestrelH2Server(app, certificate, new IPEndPoint(IPAddress.Loopback, new Uri(address).Port));
        return server;
    }

    /// <summary>Trusts exactly the server's self-signed certificate.</summary>
    public SslClientAuthenticationOptions TrustingClientOptions()
    {
        var policy = new X509ChainPolicy { TrustMode = X509ChainTrustMode.CustomRootTrust, RevocationMode = X509RevocationMode.NoCheck };
        policy.CustomTrustStore.Add(_certificate!);
        return new SslClientAuthenticationOptions { TargetHost = "localhost", CertificateChainPolicy = policy };
    }

    public void Release() => Interlocked.Exchange(ref _hold, new(TaskCreationOptions.RunContinuationsAsynchronously)).TrySetResult();

    /// <summary>Graceful shutdown: GOAWAY, the streams in progress finish (within the shutdown timeout).</summary>
    public Task StopAsync() => _app.StopAsync();

    public async ValueTask DisposeAsync()
    {
        Release();
        await _app.DisposeAsync();
        _certificate?.Dispose();
    }

    private async Task HandleAsync(HttpContext context)
    {
        string path = context.Request.Path.Value ?? "/";
        if (path == "/echo")
        {
            var body = new MemoryStream();
            await context.Request.Body.CopyToAsync(body);
            string trailer = context.Request.SupportsTrailers() && context.Request.CheckTrailersAvailable()
                ? context.Request.GetTrailer("x-req-trailer").ToString()
                : "";
            context.Response.DeclareTrailer("x-resp-trailer");
            await context.Response.Body.WriteAsync(body.ToArray());
            context.Response.AppendTrailer("x-resp-trailer", trailer.Length == 0 ? "none" : trailer);
            context.Response.AppendTrailer("x-length", body.Length.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }
        else if (path.StartsWith("/size/", StringComparison.Ordinal))
        {
            int size = int.Parse(path["/size/".Length..], System.Globalization.CultureInfo.InvariantCulture);
            var bytes = new byte[size];
            for (int i = 0; i < size; i++)
            {
                bytes[i] = (byte)(i * 7);
            }

            context.Response.ContentLength = size;
            await context.Response.Body.WriteAsync(bytes);
        }
        else if (path == "/hold")
        {
            // Taken before counting: a Release that follows the count must release this request.
            var hold = Volatile.Read(ref _hold);
            Interlocked.Increment(ref _held);
            await hold.Task.WaitAsync(TimeSpan.FromSeconds(20));
            Interlocked.Decrement(ref _held);
            await context.Response.WriteAsync("held");
        }
        else if (path == "/reset")
        {
            context.Features.Get<IHttpResetFeature>()!.Reset(2);
        }
        else
        {
            context.Response.Headers["x-path"] = path;
            await context.Response.WriteAsync("ok");
        }
    }

    private static X509Certificate2 CreateCertificate()
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=localhost", key, HashAlgorithmName.SHA256);
        var names = new SubjectAlternativeNameBuilder();
        names.AddDnsName("localhost");
        request.CertificateExtensions.Add(names.Build());
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.1")], false));
        using var certificate = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(7));
        // Kestrel needs the key in a form the platform's TLS can use: a PFX round trip gives it one.
        return X509CertificateLoader.LoadPkcs12(certificate.Export(X509ContentType.Pfx), null);
    }
}
