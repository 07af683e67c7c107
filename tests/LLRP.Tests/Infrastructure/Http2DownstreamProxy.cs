namespace LLRP.Tests.Infrastructure;

/// <summary>
/// A proxy in-process in front of a <see cref="GrpcOrigin"/>, HTTP/2 on both sides: over TLS (an https:// listener, ALPN
/// h2 from the client; --downstreamProtocol h2 to the origin over https, trusting the suite's CA) or in cleartext
/// (--protocols h2, h2c with prior knowledge from the client; --downstreamProtocol h2c to the origin).
/// </summary>
public sealed class Http2DownstreamProxy : IAsyncDisposable
{
    private readonly Microsoft.AspNetCore.Builder.WebApplication _app;

    private Http2DownstreamProxy(Microsoft.AspNetCore.Builder.WebApplication app, GrpcOrigin origin, Uri url)
    {
        _app = app;
        Origin = origin;
        Url = url;
    }

    public GrpcOrigin Origin { get; }

    public Uri Url { get; }

    /// <summary>
    /// The client's side and the origin's side: h2 over TLS (tls) or h2c. A cleartext listener speaks h2c alone unless
    /// <paramref name="options"/> name --protocols.
    /// </summary>
    public static async Task<Http2DownstreamProxy> StartAsync(string client, bool tls, params string[] options)
    {
        var origin = await GrpcOrigin.StartAsync(tls);
        try
        {
            string[] listen = tls
                ? ["--urls", "https://127.0.0.1:0", "--certificate", TestCertificates.LocalhostPem, "--certificateKey", TestCertificates.LocalhostKeyPem,
                   "--downstreamTrust", TestCertificates.AuthorityPem]
                : ["--urls", "http://127.0.0.1:0", .. options.Contains("--protocols") ? Array.Empty<string>() : ["--protocols", "h2"]];
            var app = LLRP.Hosting.ProxyHost.Build(
            [
                .. listen,
                "--downstream", origin.Url.GetLeftPart(UriPartial.Authority),
                "--downstreamProtocol", tls ? "h2" : "h2c",
                "--client", client,
                .. options,
            ]);
            await app.StartAsync(Wire.Deadline(TimeSpan.FromSeconds(30)));
            return new Http2DownstreamProxy(app, origin, new Uri(LLRP.Hosting.ProxyHost.Addresses(app).First()));
        }
        catch
        {
            await origin.DisposeAsync();
            throw;
        }
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            await _app.StopAsync(Wire.Deadline());
        }
        finally
        {
            await _app.DisposeAsync();
            await Origin.DisposeAsync();
        }
    }
}
