using System.Buffers;
using System.Net;
using System.Net.Sockets;
using Microsoft.AspNetCore.Connections;

namespace LLRP.Transport;

/// <summary>
/// Kestrel's transport for --socketEngine epoll: client connections accepted by the runtime's socket (one accept per
/// connection is not the hot path) and then served by LLHttp's epoll engine (<see cref="EpollConnection"/>).
/// </summary>
internal sealed class EpollConnectionListenerFactory(IMemoryPoolFactory<byte> pools, ProxyOptions options) : IConnectionListenerFactory
{
    // Kestrel's socket transport's listen backlog (SocketTransportOptions.Backlog).
    private const int Backlog = 512;

    public ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken cancellationToken = default)
    {
        if (endpoint is not IPEndPoint ip)
        {
            throw new NotSupportedException($"The epoll transport listens on IP end points, not {endpoint.GetType().Name}.");
        }

        var listen = new Socket(ip.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            if (ip.Address.Equals(IPAddress.IPv6Any))
            {
                listen.DualMode = true;
            }

            listen.Bind(ip);
            listen.Listen(Backlog);
        }
        catch (SocketException e) when (e.SocketErrorCode == SocketError.AddressAlreadyInUse)
        {
            listen.Dispose();
            throw new AddressInUseException(e.Message, e);
        }
        catch
        {
            listen.Dispose();
            throw;
        }

        // inlineScheduling=false: the app's reads and flushes resume on the thread pool, as with Kestrel's own transport.
        return new ValueTask<IConnectionListener>(new Listener(listen, pools.Create(), options.InlineScheduling));
    }

    private sealed class Listener(Socket listen, MemoryPool<byte> pool, bool inlineScheduling) : IConnectionListener
    {
        public EndPoint EndPoint { get; } = listen.LocalEndPoint!;

        public async ValueTask<ConnectionContext?> AcceptAsync(CancellationToken cancellationToken = default)
        {
            while (true)
            {
                Socket accepted;
                try
                {
                    accepted = await listen.AcceptAsync(cancellationToken).ConfigureAwait(false);
                }
                catch (ObjectDisposedException)
                {
                    return null; // unbound
                }
                catch (SocketException e) when (e.SocketErrorCode is SocketError.OperationAborted or SocketError.Interrupted)
                {
                    return null; // unbound
                }
                catch (SocketException)
                {
                    continue; // a connection that was reset before it was accepted
                }

                EpollConnection connection;
                try
                {
                    connection = new EpollConnection(accepted, pool, inlineScheduling);
                }
                catch (SocketException)
                {
                    // The client reset before its end points or NoDelay could be read, or the engine could not take
                    // the socket (the kernel's epoll watch limit, say): this client is dropped, the listener goes on.
                    accepted.Dispose();
                    continue;
                }

                return connection;
            }
        }

        public ValueTask UnbindAsync(CancellationToken cancellationToken = default)
        {
            listen.Dispose();
            return default;
        }

        public ValueTask DisposeAsync()
        {
            listen.Dispose();
            pool.Dispose();
            return default;
        }
    }
}
