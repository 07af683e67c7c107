using System.Text;

namespace LLRP.Http1;

/// <summary>The field names the proxy acts on (character classes and field syntax are LLHttp.Syntax's).</summary>
internal static class FieldNames
{
    public static HeaderKind Classify(ReadOnlySpan<byte> name)
    {
        switch (name.Length)
        {
            case 2 when Ascii.EqualsIgnoreCase(name, "te"u8):
                return HeaderKind.HopByHop;
            case 4 when Ascii.EqualsIgnoreCase(name, "host"u8):
                return HeaderKind.Host;
            case 6 when Ascii.EqualsIgnoreCase(name, "expect"u8):
                return HeaderKind.Expect;
            case 7 when Ascii.EqualsIgnoreCase(name, "upgrade"u8):
                return HeaderKind.HopByHop;
            case 10 when Ascii.EqualsIgnoreCase(name, "connection"u8):
                return HeaderKind.Connection;
            case 10 when Ascii.EqualsIgnoreCase(name, "keep-alive"u8):
                return HeaderKind.HopByHop;
            case 14 when Ascii.EqualsIgnoreCase(name, "content-length"u8):
                return HeaderKind.ContentLength;
            case 16 when Ascii.EqualsIgnoreCase(name, "proxy-connection"u8):
                return HeaderKind.HopByHop;
            case 17 when Ascii.EqualsIgnoreCase(name, "transfer-encoding"u8):
                return HeaderKind.TransferEncoding;
            default:
                return HeaderKind.Other;
        }
    }

    /// <summary>
    /// A name that is not Content-Length or Transfer-Encoding but becomes one when '_' and '-' are ignored
    /// ("Transfer_Encoding", "Content--Length"): servers that map '_' to '-' (CGI-style) would see framing the proxy did
    /// not, a desync lever (desync-guardian's Ambiguous cases), so such names are refused.
    /// </summary>
    public static bool IsFramingLookalike(ReadOnlySpan<byte> name)
    {
        if (name.Length is < 13 or > 32 || (name.IndexOf((byte)'_') < 0 && name.IndexOf("--"u8) < 0))
        {
            return false;
        }
        Span<byte> folded = stackalloc byte[name.Length];
        var length = 0;
        foreach (var b in name)
        {
            if (b is not ((byte)'_' or (byte)'-'))
            {
                folded[length++] = (byte)(b | 0x20);
            }
        }
        folded = folded[..length];
        return folded.SequenceEqual("contentlength"u8) || folded.SequenceEqual("transferencoding"u8);
    }
}
