using System.Collections.Frozen;
using Microsoft.Extensions.Primitives;

namespace HttpClientProxy;

/// <summary>Which header fields belong to one connection and so must not be forwarded, in either direction.</summary>
internal static class HopByHop
{
    // RFC 9110 §7.6.1 and RFC 9112 §9.6 (TE, Transfer-Encoding, Upgrade, Connection, Keep-Alive), plus the
    // non-standard Proxy-Connection that old clients still send.
    private static readonly FrozenSet<string> _fields = FrozenSet.Create(
        StringComparer.OrdinalIgnoreCase, "Connection", "Keep-Alive", "Proxy-Connection", "TE", "Transfer-Encoding", "Upgrade");

    /// <summary>
    /// True for a fixed hop-by-hop field and for any field the Connection header names (RFC 9110 §7.6.1: "a proxy
    /// MUST ... remove any header fields listed in the Connection header field").
    /// </summary>
    /// <remarks>
    /// On the request side this is only as good as what Kestrel hands over: Kestrel 10.0 rewrites a Connection value
    /// that contains keep-alive, close or upgrade to that one token ("X-Foo, keep-alive" arrives as "keep-alive"), so
    /// the fields such a value names cannot be seen here and are forwarded. YARP behind Kestrel has the same blind spot.
    /// </remarks>
    public static bool IsHopByHop(string name, StringValues connection)
    {
        if (_fields.Contains(name))
        {
            return true;
        }
        foreach (var value in connection)
        {
            var tokens = value.AsSpan();
            foreach (var range in tokens.Split(','))
            {
                if (tokens[range].Trim(" \t").Equals(name, StringComparison.OrdinalIgnoreCase))
                {
                    return true;
                }
            }
        }
        return false;
    }
}
