using System.Net;
using System.Net.Sockets;
using System.Text;
using LLHttp.Syntax;

namespace LLRP.Http1;

/// <summary>What <see cref="HostSyntax.Check"/> found in a Host value or an absolute-form authority.</summary>
internal enum HostCheck : byte
{
    /// <summary>Valid, and every variant can send it downstream.</summary>
    Forwardable,
    /// <summary>Not uri-host [ ":" port ] (RFC 9110 §7.2, RFC 3986 §3.2.2-3.2.3): RFC 9112 §3.2 requires 400.</summary>
    Invalid,
    /// <summary>
    /// Valid per RFC 3986 but outside what the proxy forwards: a reg-name with sub-delims, "~", percent-encoding or an
    /// empty label, an IPvFuture literal, or a port above 65535. HttpRequestMessage's Host (the HttpClient, HttpContext
    /// and YARP variants) refuses every one of these, so the proxy refuses them for every variant (400, RFC 9110
    /// §15.5.1 "will not process") rather than forward them in some variants and fail with 502 in the others.
    /// </summary>
    NotForwardable,
}

/// <summary>
/// Host syntax as the proxy accepts it: an IPv6 literal, or a DNS-style name (labels of letters, digits, "-" and "_",
/// separated by single dots, a trailing dot allowed; an IPv4 address is such a name; a label opening with "-" or "_"
/// or outgrowing DNS's lengths only where Uri takes the name), then an optional port of at most 65535. RFC 3986 §3.2.2 asks URI producers for DNS-style names; the rest of
/// reg-name is still told apart from invalid bytes so the reason is exact.
/// </summary>
internal static class HostSyntax
{
    // "[" IPv6address "]": the longest IPv6 text is 45 characters (an IPv4-mapped form with every group written out).
    private const int MaxIPv6Length = 45;

    // RFC 1035 §2.3.4: a label is at most 63 octets; a name in text at most 253 characters (255 octets on the wire).
    private const int MaxDnsLabelLength = 63;
    private const int MaxDnsNameLength = 253;

    public static HostCheck Check(ReadOnlySpan<byte> authority)
    {
        if (authority.IsEmpty)
        {
            // RFC 9110 §4.2.1: an http URI with an empty host is invalid.
            return HostCheck.Invalid;
        }
        HostCheck host;
        ReadOnlySpan<byte> rest;
        if (authority[0] == '[')
        {
            var close = authority.IndexOf((byte)']');
            if (close < 0)
            {
                return HostCheck.Invalid;
            }
            host = IPLiteral(authority[1..close]);
            rest = authority[(close + 1)..];
        }
        else
        {
            var colon = authority.IndexOf((byte)':');
            var name = colon < 0 ? authority : authority[..colon];
            host = RegName(name);
            rest = colon < 0 ? default : authority[colon..];
        }
        if (host == HostCheck.Invalid)
        {
            return HostCheck.Invalid;
        }
        var port = rest.IsEmpty ? HostCheck.Forwardable : rest[0] == ':' ? Port(rest[1..]) : HostCheck.Invalid;
        return port == HostCheck.Forwardable ? host : port;
    }

    // RFC 3986 §3.2.2: reg-name = *( unreserved / pct-encoded / sub-delims ); empty is invalid for http (RFC 9110 §4.2.1).
    private static HostCheck RegName(ReadOnlySpan<byte> name)
    {
        if (name.IsEmpty)
        {
            return HostCheck.Invalid;
        }
        var result = HostCheck.Forwardable;
        var labelLength = 0;
        var nonDnsLabel = false;
        for (var i = 0; i < name.Length; i++)
        {
            var b = name[i];
            if (char.IsAsciiLetterOrDigit((char)b) || b is (byte)'-' or (byte)'_')
            {
                nonDnsLabel |= (labelLength == 0 && !char.IsAsciiLetterOrDigit((char)b)) || labelLength == MaxDnsLabelLength;
                labelLength++;
            }
            else if (b == '.')
            {
                // "a..b" and ".a" are valid reg-names but no DNS name.
                result = labelLength == 0 ? HostCheck.NotForwardable : result;
                labelLength = 0;
            }
            else if (b == '%')
            {
                if (i + 2 >= name.Length || HttpChars.HexValue(name[i + 1]) < 0 || HttpChars.HexValue(name[i + 2]) < 0)
                {
                    return HostCheck.Invalid;
                }
                i += 2;
                labelLength++;
                result = HostCheck.NotForwardable;
            }
            else if (b is (byte)'~' or (byte)'!' or (byte)'$' or (byte)'&' or (byte)'\'' or (byte)'(' or (byte)')'
                     or (byte)'*' or (byte)'+' or (byte)',' or (byte)';' or (byte)'=')
            {
                labelLength++;
                result = HostCheck.NotForwardable;
            }
            else
            {
                return HostCheck.Invalid;
            }
        }
        // A label opening with "-" or "_" or longer than 63 characters, or a name longer than 253, is no DNS name
        // (RFC 1123 §2.1, RFC 1035 §2.3.4): Uri, which HttpRequestMessage's Host goes through, then reads the name by
        // other rules and refuses some ("1.-b", "a.b._c", 68 digits) but not others ("-", "a.-b"). Its own answer
        // decides; only such rare names pay for the string.
        if (result == HostCheck.Forwardable && (nonDnsLabel || name.Length > MaxDnsNameLength) &&
            !Uri.TryCreate($"http://{Encoding.ASCII.GetString(name)}/", UriKind.Absolute, out _))
        {
            return HostCheck.NotForwardable;
        }
        return result;
    }

    // RFC 3986 §3.2.2: IP-literal = "[" ( IPv6address / IPvFuture ) "]"; no zone identifier.
    private static HostCheck IPLiteral(ReadOnlySpan<byte> literal)
    {
        if (literal.Length > 0 && (literal[0] | 0x20) == 'v')
        {
            return IsIPvFuture(literal) ? HostCheck.NotForwardable : HostCheck.Invalid;
        }
        if (literal.Length < 2 || literal.Length > MaxIPv6Length)
        {
            return HostCheck.Invalid;
        }
        Span<char> text = stackalloc char[MaxIPv6Length];
        for (var i = 0; i < literal.Length; i++)
        {
            var b = literal[i];
            if (HttpChars.HexValue(b) < 0 && b is not ((byte)':' or (byte)'.'))
            {
                return HostCheck.Invalid;
            }
            text[i] = (char)b;
        }
        return IPAddress.TryParse(text[..literal.Length], out var address) && address.AddressFamily == AddressFamily.InterNetworkV6
            ? HostCheck.Forwardable
            : HostCheck.Invalid;
    }

    // IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )
    private static bool IsIPvFuture(ReadOnlySpan<byte> literal)
    {
        var dot = literal.IndexOf((byte)'.');
        if (dot < 2 || dot == literal.Length - 1)
        {
            return false;
        }
        foreach (var b in literal[1..dot])
        {
            if (HttpChars.HexValue(b) < 0)
            {
                return false;
            }
        }
        foreach (var b in literal[(dot + 1)..])
        {
            if (!char.IsAsciiLetterOrDigit((char)b) && "-._~!$&'()*+,;=:"u8.IndexOf(b) < 0)
            {
                return false;
            }
        }
        return true;
    }

    // RFC 3986 §3.2.3: port = *DIGIT (empty allowed); above 65535 it names no TCP port.
    private static HostCheck Port(ReadOnlySpan<byte> port)
    {
        var value = 0;
        foreach (var b in port)
        {
            if (!char.IsAsciiDigit((char)b))
            {
                return HostCheck.Invalid;
            }
            value = Math.Min(value * 10 + (b - '0'), 65536);
        }
        return value <= 65535 ? HostCheck.Forwardable : HostCheck.NotForwardable;
    }
}
