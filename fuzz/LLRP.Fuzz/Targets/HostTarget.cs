using System.Text;
using LLRP.Fuzz.Support;
using LLRP.Http1;

namespace LLRP.Fuzz.Targets;

/// <summary>
/// The Host syntax. HostSyntax.Check must answer for any bytes; what it calls forwardable must be accepted as a Host by
/// HttpRequestMessage (the HttpClient, HttpContext and YARP variants send it there) and as a URI authority, and must
/// match an independent reading of the DNS-name / IPv6 / port grammar written here.
/// </summary>
internal static class HostTarget
{
    public static void Run(ReadOnlySpan<byte> input)
    {
        var check = HostSyntax.Check(input);
        var text = Encoding.Latin1.GetString(input);
        if (check == HostCheck.Forwardable)
        {
            Finding.Check(IsForwardable(text, dnsLabels: false), $"HostSyntax forwards '{text}', which is no DNS-style name or IPv6 literal with a port up to 65535.");
            using var request = new HttpRequestMessage();
            try
            {
                request.Headers.Host = text;
            }
            catch (FormatException e)
            {
                throw new Finding($"HostSyntax forwards '{text}', which HttpRequestMessage refuses as a Host: {e.Message}");
            }
            Finding.Check(Uri.TryCreate($"http://{text}/", UriKind.Absolute, out _), $"HostSyntax forwards '{text}', which is no URI authority.");
        }
        else
        {
            Finding.Check(!IsForwardable(text, dnsLabels: true), $"HostSyntax refuses '{text}' ({check}), a DNS name or IPv6 literal with a valid port.");
        }
    }

    // Independent of HostSyntax: host = "[" IPv6 "]" / DNS-style name (labels of letters, digits, "-" and "_"; with
    // dnsLabels, a DNS name HostSyntax must always forward: each label opening with a letter or digit and at most 63
    // long, the name at most 253); then optionally ":" *DIGIT up to 65535.
    private static bool IsForwardable(string authority, bool dnsLabels)
    {
        string host, port;
        if (authority.StartsWith('['))
        {
            var close = authority.IndexOf(']', StringComparison.Ordinal);
            if (close < 0)
            {
                return false;
            }
            host = authority[..(close + 1)];
            port = authority[(close + 1)..];
            var literal = host[1..^1];
            // Hex digits, ':' and '.' only (no zone identifier), then what IPAddress takes as IPv6.
            if (literal.Length < 2 || !literal.All(c => Uri.IsHexDigit(c) || c is ':' or '.')
                || !System.Net.IPAddress.TryParse(literal, out var address) || address.AddressFamily != System.Net.Sockets.AddressFamily.InterNetworkV6)
            {
                return false;
            }
        }
        else
        {
            var colon = authority.IndexOf(':', StringComparison.Ordinal);
            host = colon < 0 ? authority : authority[..colon];
            port = colon < 0 ? "" : authority[colon..];
            var labels = host.EndsWith('.') ? host[..^1].Split('.') : host.Split('.');
            if (host.Length == 0 || (dnsLabels && host.Length > 253) || labels.Any(l => l.Length == 0 || (dnsLabels && (l.Length > 63 || !char.IsAsciiLetterOrDigit(l[0]))) || !l.All(c => char.IsAsciiLetterOrDigit(c) || c is '-' or '_')))
            {
                return false;
            }
        }
        if (port.Length == 0)
        {
            return true;
        }
        var digits = port[1..];
        if (port[0] != ':' || !digits.All(char.IsAsciiDigit))
        {
            return false;
        }
        // RFC 3986 §3.2.3 allows an empty port and leading zeros; the value must name a TCP port.
        var value = 0L;
        foreach (var c in digits)
        {
            value = Math.Min(value * 10 + (c - '0'), 1L << 20);
        }
        return value <= 65535;
    }
}
