using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace LLRP.Tls;

/// <summary>The certificate TLS listeners present: a PEM certificate with its PEM key, or one PKCS#12 file.</summary>
public static class ServerCertificate
{
    /// <summary>
    /// Loads and checks the certificate; throws <see cref="TlsSetupException"/> with one line naming the file and what is
    /// wrong (missing, unreadable, not a certificate, no private key, key not matching).
    /// </summary>
    public static X509Certificate2 Load(string certificatePath, string? keyPath)
    {
        Readable(certificatePath, "--certificate");
        if (!string.IsNullOrEmpty(keyPath))
        {
            Readable(keyPath, "--certificateKey");
        }
        X509Certificate2 certificate;
        try
        {
            certificate = IsPem(certificatePath)
                ? X509Certificate2.CreateFromPemFile(certificatePath, string.IsNullOrEmpty(keyPath) ? null : keyPath)
                : X509CertificateLoader.LoadPkcs12FromFile(certificatePath, password: null);
        }
        // ArgumentException: a key that belongs to another certificate.
        catch (Exception e) when (e is CryptographicException or ArgumentException)
        {
            throw new TlsSetupException(string.IsNullOrEmpty(keyPath)
                ? $"--certificate '{certificatePath}' is not a PEM certificate with its key, nor a PKCS#12 file without a password: {e.Message}"
                : $"--certificate '{certificatePath}' and --certificateKey '{keyPath}' are not a PEM certificate and its matching private key: {e.Message}");
        }
        if (!certificate.HasPrivateKey)
        {
            certificate.Dispose();
            throw new TlsSetupException($"--certificate '{certificatePath}' holds no private key: give it with --certificateKey.");
        }
        return certificate;
    }

    private static bool IsPem(string path)
    {
        // PEM is text that starts with (or contains) a "-----BEGIN" line; PKCS#12 is DER, starting with 0x30.
        Span<byte> start = stackalloc byte[64];
        using var file = File.OpenRead(path);
        var read = file.ReadAtLeast(start, start.Length, throwOnEndOfStream: false);
        return read == 0 || start[0] != 0x30;
    }

    internal static void Readable(string path, string option)
    {
        if (!File.Exists(path))
        {
            throw new TlsSetupException($"{option} '{path}' does not exist.");
        }
        try
        {
            using var _ = File.OpenRead(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException or NotSupportedException)
        {
            throw new TlsSetupException($"{option} '{path}' cannot be read: {e.Message}");
        }
    }
}

/// <summary>A TLS file named on the command line cannot be used; the message is the one line the user sees.</summary>
public sealed class TlsSetupException(string message) : Exception(message);
