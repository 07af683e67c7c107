using System.Net;
using System.Net.Security;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace LLRP.Tests.Infrastructure;

/// <summary>
/// The suite's private PKI, made once per run with .NET's own APIs (no openssl on the test path): a CA, and leaf
/// certificates it signs for "localhost" and 127.0.0.1 (valid, expired, for another host), written as PEM files
/// for the proxy's --certificate, --certificateKey and --downstreamTrust. ECDSA P-256 keeps the handshakes cheap.
/// </summary>
public static class TestCertificates
{
    private static readonly Lazy<Set> Files = new(Create);

    /// <summary>The folder the PEM files are in (removed at process exit).</summary>
    public static string Folder => Files.Value.Folder;

    /// <summary>The CA that signs every leaf, as a PEM file: what --downstreamTrust takes.</summary>
    public static string AuthorityPem => Path.Combine(Folder, "ca.pem");

    /// <summary>A valid leaf for localhost and 127.0.0.1: certificate and key as separate PEM files.</summary>
    public static string LocalhostPem => Path.Combine(Folder, "localhost.pem");
    public static string LocalhostKeyPem => Path.Combine(Folder, "localhost.key");

    /// <summary>The same leaf as one PKCS#12 file without a password.</summary>
    public static string LocalhostPfx => Path.Combine(Folder, "localhost.pfx");

    /// <summary>A key that belongs to no certificate here.</summary>
    public static string OtherKeyPem => Path.Combine(Folder, "other.key");

    public static X509Certificate2 Authority => Files.Value.Authority;
    public static X509Certificate2 Localhost => Files.Value.Localhost;
    public static X509Certificate2 Expired => Files.Value.Expired;
    public static X509Certificate2 OtherHost => Files.Value.OtherHost;

    /// <summary>Client handshake options that trust the suite's CA (and nothing else), for test clients.</summary>
    public static SslClientAuthenticationOptions ClientOptions(string host) => new()
    {
        TargetHost = host,
        CertificateChainPolicy = TrustingAuthority(),
    };

    /// <summary>An HttpClient for https:// proxy listeners that trusts the suite's CA.</summary>
    public static HttpClient HttpClient() => new(Handler())
    {
        Timeout = Wire.Cap,
    };

    /// <summary>A handler that trusts the suite's CA (and nothing else), for clients that take a handler (gRPC's channel).</summary>
    public static SocketsHttpHandler Handler() => new()
    {
        UseProxy = false,
        SslOptions = new SslClientAuthenticationOptions { CertificateChainPolicy = TrustingAuthority() },
    };

    private static X509ChainPolicy TrustingAuthority()
    {
        var policy = new X509ChainPolicy { TrustMode = X509ChainTrustMode.CustomRootTrust, RevocationMode = X509RevocationMode.NoCheck };
        policy.CustomTrustStore.Add(Authority);
        return policy;
    }

    private sealed record Set(string Folder, X509Certificate2 Authority, X509Certificate2 Localhost, X509Certificate2 Expired, X509Certificate2 OtherHost);

    private static Set Create()
    {
        var folder = Directory.CreateTempSubdirectory("llrp-tls-").FullName;
        AppDomain.CurrentDomain.ProcessExit += (_, _) => Directory.Delete(folder, recursive: true);

        using var caKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var caRequest = new CertificateRequest("CN=LLRP test CA", caKey, HashAlgorithmName.SHA256);
        caRequest.CertificateExtensions.Add(new X509BasicConstraintsExtension(true, false, 0, true));
        caRequest.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, true));
        caRequest.CertificateExtensions.Add(new X509SubjectKeyIdentifierExtension(caRequest.PublicKey, false));
        var now = DateTimeOffset.UtcNow;
        var authority = caRequest.CreateSelfSigned(now.AddDays(-30), now.AddYears(5));

        var localhost = Leaf(authority, "localhost", now.AddDays(-1), now.AddYears(1));
        var expired = Leaf(authority, "localhost", now.AddDays(-20), now.AddDays(-10));
        var otherHost = Leaf(authority, "other.example", now.AddDays(-1), now.AddYears(1));

        File.WriteAllText(Path.Combine(folder, "ca.pem"), authority.ExportCertificatePem());
        File.WriteAllText(Path.Combine(folder, "localhost.pem"), localhost.ExportCertificatePem());
        File.WriteAllText(Path.Combine(folder, "localhost.key"), localhost.GetECDsaPrivateKey()!.ExportPkcs8PrivateKeyPem());
        File.WriteAllBytes(Path.Combine(folder, "localhost.pfx"), localhost.Export(X509ContentType.Pkcs12));
        using var other = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        File.WriteAllText(Path.Combine(folder, "other.key"), other.ExportPkcs8PrivateKeyPem());
        return new Set(folder, authority, localhost, expired, otherHost);
    }

    private static X509Certificate2 Leaf(X509Certificate2 authority, string host, DateTimeOffset notBefore, DateTimeOffset notAfter)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest($"CN={host}", key, HashAlgorithmName.SHA256);
        var names = new SubjectAlternativeNameBuilder();
        names.AddDnsName(host);
        if (host == "localhost")
        {
            names.AddIpAddress(IPAddress.Loopback);
        }
        request.CertificateExtensions.Add(names.Build());
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(false, false, 0, false));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature, true));
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.1")], false));
        var serial = RandomNumberGenerator.GetBytes(12);
        using var signed = request.Create(authority, notBefore, notAfter, serial);
        return signed.CopyWithPrivateKey(key);
    }
}
