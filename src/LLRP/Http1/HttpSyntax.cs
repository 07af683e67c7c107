using System.Buffers;
using System.Text;

namespace LLRP.Http1;

/// <summary>RFC 9110 character classes and the field names the proxy acts on.</summary>
internal static class HttpSyntax
{
    // RFC 9110 §5.6.2: tchar.
    private static readonly SearchValues<byte> s_tchar =
        SearchValues.Create("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"u8);

    // RFC 9110 §5.5: field-value is VCHAR, obs-text, SP and HTAB; every other control byte (NUL, CR, LF among them) is invalid.
    private static readonly SearchValues<byte> s_invalidValueBytes = SearchValues.Create(
        [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F,
         0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C, 0x1D, 0x1E, 0x1F, 0x7F]);

    // RFC 3986 §3.2.2-3.2.3 as used by RFC 9110 §7.2 Host: reg-name / IP-literal / IPv4, then ":" port.
    // No userinfo ('@'), path ('/'), query or fragment: those make a Host invalid (RFC 9112 §3.2).
    private static readonly SearchValues<byte> s_hostChars =
        SearchValues.Create("-._~!$&'()*+,;=:[]%0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"u8);

    // RFC 3986 §3.3-3.4: a request-target is printable ASCII without SP; '#' never travels in a request (RFC 9112 §3.2).
    private static readonly SearchValues<byte> s_targetChars = SearchValues.Create(
        "!$%&'()*+,-./0123456789:;=?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~\"<>"u8);

    public static bool IsToken(ReadOnlySpan<byte> span) => span.Length > 0 && span.IndexOfAnyExcept(s_tchar) < 0;

    public static bool IsValidFieldValue(ReadOnlySpan<byte> value) => value.IndexOfAny(s_invalidValueBytes) < 0;

    public static bool IsValidHost(ReadOnlySpan<byte> host) => host.IndexOfAnyExcept(s_hostChars) < 0;

    public static bool IsValidTarget(ReadOnlySpan<byte> target) => target.Length > 0 && target.IndexOfAnyExcept(s_targetChars) < 0;

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

    public static bool IsTokenChar(byte b) => s_tchar.Contains(b);

    /// <summary>
    /// Parses a Content-Length value: exactly 1*DIGIT (RFC 9110 §8.6). RFC 9112 §6.3 rule 5 also lets a recipient
    /// collapse a list of identical values; this proxy takes the strict reading, as nginx does, and the
    /// desync-guardian corpus classifies such lists as Severe. Returns -1 for anything else, including overflow.
    /// </summary>
    public static long ParseContentLength(ReadOnlySpan<byte> value)
    {
        if (value.IsEmpty)
        {
            return -1;
        }
        long n = 0;
        foreach (var b in value)
        {
            var digit = (uint)(b - '0');
            if (digit > 9 || n > (long.MaxValue - digit) / 10)
            {
                return -1;
            }
            n = (n * 10) + digit;
        }
        return n;
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

    /// <summary>
    /// RFC 9112 §7.1.1: chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] ), where the name is a
    /// token and the value a token or quoted-string. Anything else (a bare ';', controls, stray bytes) is invalid.
    /// </summary>
    public static bool IsValidChunkExtensions(ReadOnlySpan<byte> ext)
    {
        var i = 0;
        while (true)
        {
            i = SkipWhitespace(ext, i);
            if (i == ext.Length)
            {
                return true;
            }
            if (ext[i] != ';')
            {
                return false;
            }
            i = SkipWhitespace(ext, i + 1);
            var nameStart = i;
            while (i < ext.Length && IsTokenChar(ext[i]))
            {
                i++;
            }
            if (i == nameStart)
            {
                return false;
            }
            var afterName = SkipWhitespace(ext, i);
            if (afterName == ext.Length || ext[afterName] != '=')
            {
                i = afterName;
                continue;
            }
            i = SkipWhitespace(ext, afterName + 1);
            if (i < ext.Length && ext[i] == '"')
            {
                i = SkipQuotedString(ext, i);
                if (i < 0)
                {
                    return false;
                }
            }
            else
            {
                var valueStart = i;
                while (i < ext.Length && IsTokenChar(ext[i]))
                {
                    i++;
                }
                if (i == valueStart)
                {
                    return false;
                }
            }
        }
    }

    private static int SkipWhitespace(ReadOnlySpan<byte> s, int i)
    {
        while (i < s.Length && (s[i] == ' ' || s[i] == '\t'))
        {
            i++;
        }
        return i;
    }

    // RFC 9110 §5.6.4: quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE; returns the index after it, or -1.
    private static int SkipQuotedString(ReadOnlySpan<byte> s, int i)
    {
        for (i++; i < s.Length; i++)
        {
            var b = s[i];
            if (b == '"')
            {
                return i + 1;
            }
            if (b == '\\')
            {
                i++;
                if (i == s.Length || (s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7F)
                {
                    return -1;
                }
            }
            else if ((b < 0x20 && b != '\t') || b == 0x7F)
            {
                return -1;
            }
        }
        return -1;
    }

    /// <summary>Calls <paramref name="onToken"/> for each element of a comma-separated list, trimmed of OWS.</summary>
    public static bool ForEachToken<TState>(ReadOnlySpan<byte> value, ref TState state, TokenVisitor<TState> onToken)
    {
        while (true)
        {
            var comma = value.IndexOf((byte)',');
            var element = (comma < 0 ? value : value[..comma]).Trim(" \t"u8);
            if (!onToken(element, ref state))
            {
                return false;
            }
            if (comma < 0)
            {
                return true;
            }
            value = value[(comma + 1)..];
        }
    }

    public delegate bool TokenVisitor<TState>(ReadOnlySpan<byte> token, ref TState state);
}
