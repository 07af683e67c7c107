using System.Net;
using System.Net.Sockets;
using LLHttp.Sockets;

namespace LLHttp.Transports;

/// <summary>A connected TCP socket served by LLHttp's own epoll engine (<see cref="LLHttpSocketEngine.Epoll"/>).</summary>
internal sealed class EpollTransport : Transport
{
    private readonly EpollSocket _socket;

    private EpollTransport(EpollSocket socket) => _socket = socket;

    public static async ValueTask<Transport> ConnectAsync(EndPoint endPoint, int receiveBufferSize, CancellationToken cancellationToken)
        => new EpollTransport(await EpollSocket.ConnectAsync(endPoint, receiveBufferSize, cancellationToken).ConfigureAwait(false));

    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken cancellationToken)
        => _socket.ReceiveAsync(buffer, cancellationToken);

    public override ValueTask SendAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken)
        => _socket.SendAsync(buffer, cancellationToken);

    public override bool IsReadableWhileIdle() => _socket.IsReadable();

    public override int ReceiveBufferSize => _socket.ReceiveBufferSize;

    public override void Dispose() => _socket.Dispose();

    public override ValueTask<bool> ShutdownSendAsync()
    {
        _socket.Shutdown(SocketShutdown.Send);
        return new(true);
    }
}
