using System.Net;
using System.Net.Sockets;
using LLHttp.Sockets;

namespace LLHttp.Transports;

/// <summary>
/// A connected TCP socket. <see cref="Socket.ReceiveAsync(Memory{byte}, SocketFlags, CancellationToken)"/> and
/// <see cref="Socket.SendAsync(ReadOnlyMemory{byte}, SocketFlags, CancellationToken)"/> complete through a
/// socket-cached SocketAsyncEventArgs, so steady-state I/O allocates nothing and needs no reflection.
/// </summary>
internal sealed class SocketTransport : Transport
{
    private readonly Socket _socket;

    private SocketTransport(Socket socket) => _socket = socket;

    public static async ValueTask<Transport> ConnectAsync(EndPoint endPoint, int receiveBufferSize, CancellationToken cancellationToken)
    {
        Socket socket = endPoint is IPEndPoint ip
            ? new Socket(ip.AddressFamily, SocketType.Stream, ProtocolType.Tcp)
            : new Socket(SocketType.Stream, ProtocolType.Tcp);
        try
        {
            // A head and its body may leave in two sends; Nagle would hold the second for the ACK of the first.
            socket.NoDelay = true;
            ReceiveBuffer.Set(socket, receiveBufferSize);
            await socket.ConnectAsync(endPoint, cancellationToken).ConfigureAwait(false);
            return new SocketTransport(socket);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    public override int ReceiveBufferSize => _socket.ReceiveBufferSize;

    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken cancellationToken)
        => _socket.ReceiveAsync(buffer, SocketFlags.None, cancellationToken);

    public override ValueTask SendAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken)
    {
        ValueTask<int> send = _socket.SendAsync(buffer, SocketFlags.None, cancellationToken);
        if (send.IsCompletedSuccessfully && send.Result == buffer.Length)
        {
            return default;
        }

        return SendSlowAsync(send, buffer, cancellationToken);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask SendSlowAsync(ValueTask<int> pending, ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken)
    {
        int sent = await pending.ConfigureAwait(false);

        // A stream socket's SendAsync sends everything on Linux and Windows; the loop guards against any platform that
        // reports a partial send instead.
        while (sent < buffer.Length)
        {
            buffer = buffer[sent..];
            sent = await _socket.SendAsync(buffer, SocketFlags.None, cancellationToken).ConfigureAwait(false);
        }
    }

    public override bool IsReadableWhileIdle()
    {
        try
        {
            return _socket.Poll(0, SelectMode.SelectRead);
        }
        catch (SocketException)
        {
            return true;
        }
        catch (ObjectDisposedException)
        {
            return true;
        }
    }

    public override void Dispose() => _socket.Dispose();

    public override ValueTask<bool> ShutdownSendAsync()
    {
        try
        {
            _socket.Shutdown(SocketShutdown.Send);
            return new(true);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            // Reset or closed already: nothing is left to shut down.
            return new(false);
        }
    }
}
