using System.Security.Authentication;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Https;

namespace LLRP.Hosting;

/// <summary>
/// TLS termination for https:// listeners: Kestrel's TLS connection middleware in front of the raw connection handler
/// (or of Kestrel's HTTP/2, docs/http2.md), which then reads and writes plaintext as on a cleartext listener.
/// </summary>
internal static class ServerTls
{
    public static void Use(Microsoft.AspNetCore.Server.Kestrel.Core.ListenOptions listen, ProxyOptions options)
    {
        // ALPN offers the listener's Protocols, set by the caller before this (--protocols: http/1.1, h2 or both).
        listen.UseHttps(new HttpsConnectionAdapterOptions
        {
            ServerCertificate = options.Tls.ServerCertificate,
            // TLS 1.2 and 1.3, what nginx and HAProxy enable by default; older versions are refused in the handshake.
            SslProtocols = SslProtocols.Tls12 | SslProtocols.Tls13,
            // No client certificate is asked for, and so TLS 1.2 renegotiation (which Kestrel allows only to ask for one
            // later) is never offered.
            ClientCertificateMode = ClientCertificateMode.NoCertificate,
            HandshakeTimeout = options.Tls.HandshakeTimeout,
        });
    }
}
