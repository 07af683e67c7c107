namespace LLRP.Transport;

/// <summary>
/// A connection feature of the epoll transport: ending the sending side alone (shutdown(SHUT_WR), a FIN after the bytes
/// already flushed) while the receiving side stays open, so that a connection closed with unread input can read and
/// discard what the client is still sending before it closes (a lingering close). Completing the output, by contrast,
/// closes the socket both ways, and a close with unread input makes the kernel send a reset, which may destroy the last
/// response before the client reads it. Kestrel's socket transport has no such path: completing its output closes its
/// socket, and its unsent bytes cannot be waited for, so it does not offer the feature.
/// </summary>
internal interface IHalfCloseFeature
{
    /// <summary>
    /// Shuts the sending side down once everything flushed was sent; what is written afterwards is dropped (flushes
    /// report IsCompleted). False when the connection was closed already. Not while a flush is pending, nor with
    /// unflushed bytes: flush first.
    /// </summary>
    bool CloseOutput();
}
