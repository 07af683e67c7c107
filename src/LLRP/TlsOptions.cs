using System.Net;
using System.Security.Cryptography.X509Certificates;

namespace LLRP;

/// <summary>One --urls address: where to listen, and whether clients speak TLS there.</summary>
public sealed record ListenEndPoint(IPEndPoint EndPoint, bool Tls);

/// <summary>TLS from clients (docs/tls.md): what https listeners present. The downstream side's trust is
/// <see cref="BalancingOptions.DownstreamTrust"/>, with the downstreams.</summary>
public sealed record TlsOptions
{
    /// <summary>The certificate https listeners present; null when every listener is cleartext.</summary>
    public X509Certificate2? ServerCertificate { get; init; }

    /// <summary>A client that opens a TLS connection and stalls its handshake holds a connection this long at most.</summary>
    public TimeSpan HandshakeTimeout { get; init; } = Option.TlsHandshakeTimeout.DefaultValue;
}
