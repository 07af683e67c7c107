using System.Net.Security;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace LLRP.Tls;

/// <summary>
/// How https downstreams are authenticated, the same for every variant and for active health checks: the system's
/// trust store, plus the CA certificates of --downstreamTrust. A certificate that neither trusts, that has expired, or
/// that names another host fails the handshake (502), never a silent downgrade. SNI and the name checked are the
/// downstream's host.
/// </summary>
public sealed class DownstreamTrust
{
    // ALPN: the downstreams speak HTTP/1.1 here (llhttp, and the HttpClient variants' http1 and h2c connections; their
    // h2 connections are the handler's own handshake, see ForHosts).
    private static readonly List<SslApplicationProtocol> Http11 = [SslApplicationProtocol.Http11];

    private readonly X509Certificate2Collection? _authorities;

    private DownstreamTrust(X509Certificate2Collection? authorities) => _authorities = authorities;

    /// <summary>The system's trust store only.</summary>
    public static DownstreamTrust System { get; } = new(null);

    /// <summary>The system's store and the CA certificates in the PEM bundle at <paramref name="path"/>.</summary>
    public static DownstreamTrust Load(string path)
    {
        ServerCertificate.Readable(path, "--downstreamTrust");
        var authorities = new X509Certificate2Collection();
        try
        {
            authorities.ImportFromPemFile(path);
        }
        catch (CryptographicException e)
        {
            throw new TlsSetupException($"--downstreamTrust '{path}' is not a PEM bundle of certificates: {e.Message}");
        }
        return authorities.Count > 0
            ? new DownstreamTrust(authorities)
            : throw new TlsSetupException($"--downstreamTrust '{path}' holds no PEM certificate.");
    }

    /// <summary>The number of certificates --downstreamTrust added (0: the system store only).</summary>
    public int AddedAuthorities => _authorities?.Count ?? 0;

    /// <summary>The handshake options for one downstream host (its SNI and the name its certificate must carry).</summary>
    public SslClientAuthenticationOptions ClientOptions(string host) => new()
    {
        TargetHost = host,
        ApplicationProtocols = Http11,
        RemoteCertificateValidationCallback = _authorities is null ? null : Validate,
    };

    /// <summary>For a SocketsHttpHandler that runs its own handshakes (active health checks): the same check.</summary>
    public RemoteCertificateValidationCallback? Callback => _authorities is null ? null : Validate;

    /// <summary>
    /// For a handler that names the TLS peer after the request's Host rather than the downstream: SocketsHttpHandler
    /// over HTTP/2 to https:// downstreams, whose SNI and checked name are the request's :authority (the client's Host,
    /// which the proxy forwards). The chain is checked as for every https downstream; the name against the downstreams'
    /// own <paramref name="hosts"/> instead, so the certificate must still be the downstream's.
    /// </summary>
    public RemoteCertificateValidationCallback ForHosts(IReadOnlyCollection<string> hosts) => (sender, certificate, chain, errors) =>
    {
        if (certificate is not X509Certificate2 presented || (errors & SslPolicyErrors.RemoteCertificateNotAvailable) != 0)
        {
            return false;
        }
        var chainErrors = errors & ~SslPolicyErrors.RemoteCertificateNameMismatch;
        if (chainErrors != SslPolicyErrors.None && (_authorities is null || !Validate(sender, certificate, chain, chainErrors)))
        {
            return false;
        }
        return hosts.Any(host => presented.MatchesHostname(host));
    };

    /// <summary>
    /// Trusted by the system store, or chained to one of the added authorities. Any other error (a name mismatch, no
    /// certificate) fails; so does an expired certificate, which the chain rejects whichever root it ends in.
    /// </summary>
    private bool Validate(object sender, X509Certificate? certificate, X509Chain? chain, SslPolicyErrors errors)
    {
        if (errors == SslPolicyErrors.None)
        {
            return true;
        }
        if (errors != SslPolicyErrors.RemoteCertificateChainErrors || certificate is null)
        {
            return false;
        }
        using var custom = new X509Chain();
        custom.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        custom.ChainPolicy.CustomTrustStore.AddRange(_authorities!);
        // Private CAs rarely publish revocation lists a proxy can reach; the system-store path keeps its default.
        custom.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        if (chain is not null)
        {
            // Intermediates the downstream sent.
            foreach (var element in chain.ChainElements)
            {
                custom.ChainPolicy.ExtraStore.Add(element.Certificate);
            }
        }
        return custom.Build(certificate as X509Certificate2 ?? X509CertificateLoader.LoadCertificate(certificate.GetRawCertData()));
    }
}
