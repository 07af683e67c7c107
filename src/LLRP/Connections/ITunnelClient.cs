using System.IO.Pipelines;

namespace LLRP.Connections;

/// <summary>
/// The client end of a <see cref="Tunnel"/>: a whole connection after an HTTP/1.1 101 (<see cref="ConnectionTunnelClient"/>),
/// or one HTTP/2 stream after an extended CONNECT (RFC 8441; <c>Http2TunnelClient</c>), where the connection's other
/// streams go on beside it.
/// </summary>
internal interface ITunnelClient
{
    /// <summary>The client's bytes; completed at the client's end of stream, failed when the client is gone.</summary>
    PipeReader Input { get; }

    /// <summary>Bytes to the client; a completed flush means the client is gone.</summary>
    PipeWriter Output { get; }

    /// <summary>
    /// The downstream's end of stream carried to the client as a half-close, so the client's bytes still flow; false
    /// where it cannot be, and then the tunnel ends both ways.
    /// </summary>
    ValueTask<bool> CloseOutputAsync();

    /// <summary>The tunnel failed: the client's end is dropped at once rather than closed.</summary>
    void Abort();
}
