namespace LLHttp.Transports;

/// <summary>
/// The byte pipe under a connection. Production uses <see cref="SocketTransport"/>; tests substitute scripted reads so
/// every parser runs over every split of its input without a network.
/// </summary>
internal abstract class Transport : IDisposable
{
    /// <summary>Receives at least one byte, or returns 0 at end of stream.</summary>
    public abstract ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken cancellationToken);

    /// <summary>Sends every byte of <paramref name="buffer"/>.</summary>
    public abstract ValueTask SendAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken);

    /// <summary>
    /// True when an idle connection is readable: either the peer closed it or it sent bytes nobody asked for.
    /// Either way it must not carry another request.
    /// </summary>
    public abstract bool IsReadableWhileIdle();

    /// <summary>The socket's SO_RCVBUF as the kernel reports it.</summary>
    public abstract int ReceiveBufferSize { get; }

    public abstract void Dispose();

    /// <summary>
    /// Ends the sending side alone once what was sent has left (TCP: a FIN), the receiving side still open; false where
    /// the transport cannot. For a connection that switched protocols (a tunnel's half-close).
    /// </summary>
    public virtual ValueTask<bool> ShutdownSendAsync() => new(false);

    /// <summary>
    /// Closes an idle connection gracefully: what the protocol sends before a close (TLS: close_notify), then
    /// <see cref="Dispose"/>. Only with nothing pending on the transport; an abort is <see cref="Dispose"/>.
    /// </summary>
    public virtual void Close() => Dispose();
}
