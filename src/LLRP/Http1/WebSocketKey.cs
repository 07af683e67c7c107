using System.Buffers.Text;
using System.Security.Cryptography;

namespace LLRP.Http1;

/// <summary>
/// The WebSocket opening handshake's key and answer (RFC 6455 §4.1, §4.2.2), for the requests whose key the proxy makes
/// itself: an HTTP/2 client's WebSocket (RFC 8441 §5: no Sec-WebSocket-Key over HTTP/2) forwarded as an HTTP/1.1 upgrade.
/// </summary>
internal static class WebSocketKey
{
    /// <summary>The length of a key: 16 random bytes in base64.</summary>
    public const int Length = 24;

    // RFC 6455 §1.3: the GUID the server appends to the key before hashing it.
    private static ReadOnlySpan<byte> Guid => "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"u8;

    /// <summary>RFC 6455 §4.1: a nonce of 16 bytes, random for each connection, base64-encoded.</summary>
    public static void Generate(Span<byte> destination)
    {
        Span<byte> nonce = stackalloc byte[16];
        RandomNumberGenerator.Fill(nonce);
        Base64.EncodeToUtf8(nonce, destination, out _, out _);
    }

    /// <summary>RFC 6455 §4.2.2: whether <paramref name="accept"/> is base64(SHA-1(key + GUID)) for <paramref name="key"/>.</summary>
    public static bool IsAcceptFor(ReadOnlySpan<byte> key, ReadOnlySpan<byte> accept)
    {
        if (key.Length != Length)
        {
            return false;
        }
        Span<byte> input = stackalloc byte[Length + 36];
        key.CopyTo(input);
        Guid.CopyTo(input[Length..]);
        Span<byte> hash = stackalloc byte[SHA1.HashSizeInBytes];
        SHA1.HashData(input, hash);
        Span<byte> expected = stackalloc byte[28];
        Base64.EncodeToUtf8(hash, expected, out _, out var written);
        return accept.SequenceEqual(expected[..written]);
    }
}
