using System.Net;
using System.Text;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;

namespace LLRP.Connections;

/// <summary>
/// What an exchange tells the downstream about the client connection, read once per connection by every front end:
/// the client's address for X-Forwarded-For, and whether it spoke TLS (X-Forwarded-Proto).
/// </summary>
internal readonly record struct ClientPeer(byte[] ForwardedFor, bool Tls)
{
    public static ClientPeer Of(ConnectionContext context) => new(
        Encoding.ASCII.GetBytes((context.RemoteEndPoint as IPEndPoint)?.Address.ToString() ?? "unknown"),
        // Kestrel's TLS middleware (an https:// listener) puts its handshake feature on the connection.
        context.Features.Get<ITlsHandshakeFeature>() is not null);
}
