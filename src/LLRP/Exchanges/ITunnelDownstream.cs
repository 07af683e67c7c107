namespace LLRP.Exchanges;

/// <summary>
/// The downstream end of a tunnel: the connection a downstream switched to another protocol with a 101 (RFC 9110 §7.8),
/// now a two-way byte stream. A variant hands it over with <see cref="Exchange.SwitchProtocols"/>; the front end
/// copies between it and the client until either side ends, then disposes it. It is never an HTTP connection again:
/// disposing closes it, and no pool sees it.
/// </summary>
internal interface ITunnelDownstream : IDisposable
{
    /// <summary>Bytes from the downstream; 0 at its end of stream.</summary>
    ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken);

    /// <summary>Bytes to the downstream.</summary>
    ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken);

    /// <summary>
    /// Ends the sending side alone (the client's end of stream, carried on as a half-close), so the downstream's bytes
    /// still flow; false where the connection cannot, and then the tunnel ends both ways.
    /// </summary>
    ValueTask<bool> CloseOutputAsync();

    /// <summary>The tunnel failed (a reset, the idle timeout): the connection is dropped at once rather than closed.</summary>
    void Abort();
}
