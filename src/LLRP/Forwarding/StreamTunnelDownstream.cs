using LLRP.Exchanges;

namespace LLRP.Forwarding;

/// <summary>
/// The downstream end of a tunnel through SocketsHttpHandler: after a 101 the response's content stream is the raw
/// connection, readable and writable (what ClientWebSocket itself runs on). The handler took the connection out of its
/// pool at the 101; disposing the response closes it. A Stream cannot end its writing side alone, so the client's end
/// of stream ends the tunnel both ways.
/// </summary>
internal sealed class StreamTunnelDownstream(HttpResponseMessage response, Stream connection) : ITunnelDownstream
{
    public ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken) => connection.ReadAsync(buffer, cancellationToken);

    public async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken)
    {
        await connection.WriteAsync(buffer, cancellationToken);
        await connection.FlushAsync(cancellationToken);
    }

    public ValueTask<bool> CloseOutputAsync() => new(false);

    public void Abort() => Dispose();

    public void Dispose()
    {
        connection.Dispose();
        response.Dispose();
    }
}
