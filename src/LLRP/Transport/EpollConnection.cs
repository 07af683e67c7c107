using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using LLHttp.Transports.Epoll;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http.Features;

namespace LLRP.Transport;

/// <summary>
/// One client connection on LLHttp's epoll engine, as Kestrel sees it: two pipes and the loops that move bytes between
/// them and the socket. The receive loop waits for the socket to become readable before it takes a buffer, so an idle
/// connection holds none, and then reads once: one receive per request where the runtime's socket transport makes two.
/// Both loops run inline (on the engine's thread for readiness, on the writer's thread for a flush); the app's reads
/// and flushes resume on the scheduler given: inline with inlineScheduling, as Kestrel's UnsafePreferInlineScheduling
/// does, or the thread pool. The lifecycle follows Kestrel's socket transport: the end of the receive loop
/// (the client's FIN, a reset, an abort) fires <see cref="ConnectionClosed"/>; the end of the send loop (the app
/// completed its output, or an abort) shuts the socket down both ways and closes it.
/// </summary>
internal sealed class EpollConnection : ConnectionContext,
    IConnectionIdFeature, IConnectionTransportFeature, IConnectionItemsFeature, IConnectionLifetimeFeature,
    IConnectionEndPointFeature, IMemoryPoolFeature
{
    // Kestrel's socket transport asks for half a block per receive (MinAllocBufferSize): a smaller tail of the current
    // block is not worth a receive.
    private const int MinimumReceiveBuffer = 2048;

    private static long s_lastId;

    private readonly EpollSocket _socket;
    private readonly Pipe _input;
    private readonly Pipe _output;
    private readonly CancellationTokenSource _closed = new();
    private readonly TaskCompletionSource _closedFired = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Lock _shutdownLock = new();
    private IDictionary<object, object?>? _items;
    private volatile Exception? _shutdownReason;
    private bool _socketClosed;
    private Task _processing = Task.CompletedTask;

    public EpollConnection(Socket accepted, MemoryPool<byte> pool, PipeScheduler appScheduler, long maxReadBufferSize, long maxWriteBufferSize)
    {
        LocalEndPoint = accepted.LocalEndPoint;
        RemoteEndPoint = accepted.RemoteEndPoint;
        // Kestrel's socket transport sets NoDelay on every accepted socket: a response must not wait for an ACK.
        accepted.NoDelay = true;
        _socket = EpollSocket.Serve(accepted);
        MemoryPool = pool;
        ConnectionId = $"epoll-{Interlocked.Increment(ref s_lastId):x}";
        ConnectionClosed = _closed.Token;

        // PipeOptions(pool, readerScheduler, writerScheduler, ...): the input's reader and the output's writer are the app.
        _input = new Pipe(new PipeOptions(pool, appScheduler, PipeScheduler.Inline,
            maxReadBufferSize, maxReadBufferSize / 2, MinimumReceiveBuffer, useSynchronizationContext: false));
        _output = new Pipe(new PipeOptions(pool, PipeScheduler.Inline, appScheduler,
            maxWriteBufferSize, maxWriteBufferSize / 2, useSynchronizationContext: false));
        Transport = new DuplexPipe(_input.Reader, _output.Writer);

        Features = new FeatureCollection();
        Features.Set<IConnectionIdFeature>(this);
        Features.Set<IConnectionTransportFeature>(this);
        Features.Set<IConnectionItemsFeature>(this);
        Features.Set<IConnectionLifetimeFeature>(this);
        Features.Set<IConnectionEndPointFeature>(this);
        Features.Set<IMemoryPoolFeature>(this);
    }

    public override string ConnectionId { get; set; }

    public override IFeatureCollection Features { get; }

    public override IDictionary<object, object?> Items
    {
        get => _items ??= new ConnectionItems();
        set => _items = value;
    }

    public override IDuplexPipe Transport { get; set; }

    public override CancellationToken ConnectionClosed { get; set; }

    public override EndPoint? LocalEndPoint { get; set; }

    public override EndPoint? RemoteEndPoint { get; set; }

    public MemoryPool<byte> MemoryPool { get; }

    public void Start() => _processing = RunAsync();

    public override void Abort(ConnectionAbortedException abortReason)
    {
        CloseSocket(abortReason);
        // The send loop may wait for output that never comes.
        _output.Reader.CancelPendingRead();
    }

    /// <summary>Kestrel calls this once the connection's middleware returned.</summary>
    public override async ValueTask DisposeAsync()
    {
        Transport.Input.Complete();
        Transport.Output.Complete();
        await _processing.ConfigureAwait(false);
        _closed.Dispose();
    }

    private async Task RunAsync()
    {
        var receiving = ReceiveLoopAsync();
        var sending = SendLoopAsync();
        await receiving.ConfigureAwait(false);
        await sending.ConfigureAwait(false);
    }

    private async Task ReceiveLoopAsync()
    {
        Exception? error = null;
        var input = _input.Writer;
        try
        {
            while (true)
            {
                // No buffer while waiting: an idle connection holds nothing from the pool.
                await _socket.ReceiveAsync(Memory<byte>.Empty, CancellationToken.None).ConfigureAwait(false);
                var buffer = input.GetMemory(MinimumReceiveBuffer);
                int received = await _socket.ReceiveAsync(buffer, CancellationToken.None).ConfigureAwait(false);
                if (received == 0)
                {
                    break; // the client's FIN
                }

                input.Advance(received);
                var flush = await input.FlushAsync().ConfigureAwait(false);
                if (flush.IsCompleted || flush.IsCanceled)
                {
                    break; // the app stopped reading
                }
            }
        }
        catch (SocketException e) when (e.SocketErrorCode is SocketError.ConnectionReset or SocketError.Shutdown)
        {
            error = new ConnectionResetException(e.Message, e);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            // The socket was closed under the receive: the close's reason is the one to report.
            error = e;
        }
        finally
        {
            await input.CompleteAsync(_shutdownReason ?? error).ConfigureAwait(false);
            FireConnectionClosed();
            await _closedFired.Task.ConfigureAwait(false);
        }
    }

    private async Task SendLoopAsync()
    {
        Exception? reason = null;
        var output = _output.Reader;
        try
        {
            while (true)
            {
                var result = await output.ReadAsync().ConfigureAwait(false);
                if (result.IsCanceled)
                {
                    break;
                }

                var buffer = result.Buffer;
                if (!buffer.IsEmpty)
                {
                    // Every segment in one gathered send, as Kestrel's socket transport does.
                    await _socket.SendAsync(buffer, CancellationToken.None).ConfigureAwait(false);
                }

                output.AdvanceTo(buffer.End);
                if (result.IsCompleted)
                {
                    break;
                }
            }
        }
        catch (SocketException e) when (e.SocketErrorCode is SocketError.ConnectionReset or SocketError.Shutdown)
        {
            reason = new ConnectionResetException(e.Message, e);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            reason = e;
        }
        finally
        {
            CloseSocket(reason);
            await output.CompleteAsync().ConfigureAwait(false);
            // A receive loop paused on a full input pipe must see the end.
            _input.Writer.CancelPendingFlush();
        }
    }

    private void CloseSocket(Exception? reason)
    {
        lock (_shutdownLock)
        {
            if (_socketClosed)
            {
                return;
            }

            _socketClosed = true;
            // Null only when the app completed its output: nobody sees this one but a receive that was still waiting.
            _shutdownReason = reason ?? new ConnectionAbortedException("The connection's output was completed.");
        }

        // As Kestrel's socket transport does: a graceful shutdown both ways even for an abort, then the close.
        _socket.Shutdown(SocketShutdown.Both);
        _socket.Dispose();
    }

    private void FireConnectionClosed()
    {
        // On the thread pool, as Kestrel's socket transport does: the token's callbacks are the app's code and must not
        // run on the engine's thread, nor inside this loop.
        ThreadPool.UnsafeQueueUserWorkItem(static connection =>
        {
            connection._closed.Cancel();
            connection._closedFired.TrySetResult();
        }, this, preferLocal: false);
    }

    private sealed class DuplexPipe(PipeReader input, PipeWriter output) : IDuplexPipe
    {
        public PipeReader Input { get; } = input;

        public PipeWriter Output { get; } = output;
    }
}
