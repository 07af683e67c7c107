using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using LLHttp.Sockets;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http.Features;

namespace LLRP.Transport;

/// <summary>
/// One client connection on LLHttp's epoll engine, as Kestrel sees it. Its transport is a reader and a writer straight
/// over the socket (<see cref="SocketReader"/>, <see cref="SocketWriter"/>): no pipes and no loops of their own, so a
/// request touches the socket, this object, its reader and writer and their two buffers, and runs on the thread that
/// serves it (the engine's for readiness, the app's for a flush). A read receives when the app asks, once per request;
/// the app's reads and flushes resume on the engine's thread with inlineScheduling, as Kestrel's
/// UnsafePreferInlineScheduling does, or on the thread pool. The lifecycle follows Kestrel's socket transport: the
/// client's FIN or a reset fires <see cref="ConnectionClosed"/> (on the thread pool); completing the output (or an
/// abort) shuts the socket down both ways and closes it. Unlike Kestrel's, it can also shut the sending side down alone
/// (<see cref="IHalfCloseFeature"/>), for a lingering close.
/// </summary>
internal sealed partial class EpollConnection : ConnectionContext, IDuplexPipe,
    IConnectionIdFeature, IConnectionTransportFeature, IConnectionItemsFeature, IConnectionLifetimeFeature,
    IConnectionEndPointFeature, IMemoryPoolFeature, IClientClosedFeature, IHalfCloseFeature
{
    /// <summary>
    /// The most request bytes the input holds that the app has not consumed: 1 MiB, Kestrel's MaxRequestBufferSize
    /// (its socket transport pauses receiving there). The request side consumes a head line by line, and no line of a
    /// head the options allow is longer (maxRequestLineSize is at most 1 MiB, the whole field section 512 KiB; a test
    /// forwards a request line of exactly 1 MiB); the body reader consumes as it reads. So only an app that stops
    /// consuming reaches it; its next read fails.
    /// </summary>
    internal const int MaxUnreadRequestBytes = 1024 * 1024;

    private static long s_lastId;

    // What _onClosed holds once the close was announced: a callback registered after it runs at once.
    private static readonly Action<object?> s_announced = static _ => { };

    private readonly EpollSocket _socket;
    private readonly long _id;
    private string? _connectionId;
    private EndPoint? _remoteEndPoint;
    private readonly SocketReader _reader;
    private readonly SocketWriter _writer;
    // ConnectionClosed's source, created by the first read of the token: the proxy's own request loop uses
    // IClientClosedFeature, so an idle connection usually holds none.
    private CancellationTokenSource? _closed;
    // The IClientClosedFeature callback (null: none yet; s_announced: the close was announced) and its state.
    private Action<object?>? _onClosed;
    private object? _onClosedState;
    // Created only by a DisposeAsync that must wait for the queued ConnectionClosed callback, so an open connection
    // holds none.
    private TaskCompletionSource? _closedFired;
    private IDictionary<object, object?>? _items;
    // Set once, by the first close (a compare-exchange, so an idle connection holds no lock object for it): what a read
    // still waiting reports, and the sign that the socket is closed.
    private volatile Exception? _shutdownReason;
    // ConnectionClosed: 0 not fired, 1 queued to the thread pool, 2 fired by DisposeAsync, 3 fired by the queued callback.
    private int _closedState;

    public EpollConnection(Socket accepted, MemoryPool<byte> pool, bool inlineScheduling)
    {
        // The listener's end point, shared by every connection it accepts (the runtime gives an accepted socket the
        // listener's when that is not a wildcard); the peer's is read when asked for (RemoteEndPoint).
        LocalEndPoint = accepted.LocalEndPoint;
        // Kestrel's socket transport sets NoDelay on every accepted socket: a response must not wait for an ACK.
        accepted.NoDelay = true;
        _socket = EpollSocket.Serve(accepted);
        MemoryPool = pool;
        _id = Interlocked.Increment(ref s_lastId);
        // One lock for the reader's and the writer's state: a connection holds one lock object (40 B) fewer. The writer
        // holds it only to set flags, never while it calls out, so it adds no lock order; a reader's section that closes
        // the socket and so ends a pending send re-enters it on the same thread, as it entered the writer's before.
        var sync = new Lock();
        _reader = new SocketReader(this, _socket, sync, inlineScheduling);
        _writer = new SocketWriter(this, _socket, sync, inlineScheduling);
        Transport = this;
    }

    // Formatted when read (its readers read it once or twice), unless set: a connection holds a number, not a string.
    public override string ConnectionId
    {
        get => _connectionId ?? $"epoll-{_id:x}";
        set => _connectionId = value;
    }

    // The connection's own features answer from the connection itself (EpollConnection.Features.cs).
    public override IFeatureCollection Features => this;

    public override IDictionary<object, object?> Items
    {
        get => _items ??= new ConnectionItems();
        set => _items = value;
    }

    public override IDuplexPipe Transport { get; set; }

    public override CancellationToken ConnectionClosed
    {
        get
        {
            var closed = Volatile.Read(ref _closed);
            if (closed is null)
            {
                var created = new CancellationTokenSource();
                closed = Interlocked.CompareExchange(ref _closed, created, null) ?? created;
                // Published, then checked against AnnounceClosed's mark (set, then the source read): one of the two
                // sees the other, so a source created as the close is announced is cancelled (twice does no harm).
                if (closed == created && Volatile.Read(ref _onClosed) == s_announced)
                {
                    closed.Cancel();
                }
            }
            return closed.Token;
        }
        set => throw new NotSupportedException("The epoll transport's connection reports its own close.");
    }

    public override EndPoint? LocalEndPoint { get; set; }

    // Read from the socket when asked for (EpollSocket.PeerEndPoint: null once closed), unless set.
    public override EndPoint? RemoteEndPoint
    {
        get => _remoteEndPoint ?? _socket.PeerEndPoint();
        set => _remoteEndPoint = value;
    }

    public MemoryPool<byte> MemoryPool { get; }

    PipeReader IDuplexPipe.Input => _reader;

    PipeWriter IDuplexPipe.Output => _writer;

    public override void Abort(ConnectionAbortedException abortReason) => CloseSocket(abortReason);

    public bool CloseOutput() => _shutdownReason is null && _writer.CloseOutput();

    /// <summary>Kestrel calls this once the connection's middleware returned.</summary>
    public override async ValueTask DisposeAsync()
    {
        _reader.Complete();
        // Sends what the app left unflushed and closes the socket (once a pending send ends).
        _writer.Complete();
        if (Interlocked.CompareExchange(ref _closedState, 2, 0) == 0)
        {
            AnnounceClosed();
        }
        else
        {
            // The queued callback fires it. Publishing the wait and then reading the state, against the callback's setting
            // the state and then reading the wait (each write a full fence): either this sees it fired, or it sees the wait.
            var fired = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            Interlocked.Exchange(ref _closedFired, fired);
            if (Volatile.Read(ref _closedState) != 3)
            {
                await fired.Task.ConfigureAwait(false);
            }
        }

        // ConnectionClosed's source is not disposed: it has no timer and no wait handle to release, and a token read
        // after this stays valid.
    }

    public void OnClientClosed(Action<object?> callback, object? state)
    {
        _onClosedState = state;
        var previous = Interlocked.CompareExchange(ref _onClosed, callback, null);
        if (previous == s_announced)
        {
            callback(state);
        }
        else if (previous is not null)
        {
            throw new InvalidOperationException("The connection already has a close callback.");
        }
    }

    // ConnectionClosed fires and the IClientClosedFeature callback runs: the mark first, so that a registration or a
    // token created from now on sees it; exactly one of this and OnClientClosed runs the callback.
    private void AnnounceClosed()
    {
        var callback = Interlocked.Exchange(ref _onClosed, s_announced);
        Volatile.Read(ref _closed)?.Cancel();
        if (callback is not null && callback != s_announced)
        {
            callback(Volatile.Read(ref _onClosedState));
        }
    }

    // What a failed receive or send tells the app: a reset (or a shutdown) is the client's, as Kestrel's socket transport
    // reports it; anything else as it came.
    private static Exception ClientFailure(Exception e) =>
        e is SocketException { SocketErrorCode: SocketError.ConnectionReset or SocketError.Shutdown }
            ? new ConnectionResetException(e.Message, e)
            : e;

    private void CloseSocket(Exception? reason)
    {
        // Null only when the app completed its output: nobody sees this one but a read that was still waiting.
        var closing = reason ?? new ConnectionAbortedException("The connection's output was completed.");
        if (Interlocked.CompareExchange(ref _shutdownReason, closing, null) is not null)
        {
            return;
        }

        _writer.OnSocketClosed();
        // As Kestrel's socket transport does: a graceful shutdown both ways even for an abort, then the close. A pending
        // readiness wait or send ends with it.
        _socket.Shutdown(SocketShutdown.Both);
        _socket.Dispose();
        FireConnectionClosed();
    }

    private void FireConnectionClosed()
    {
        if (Interlocked.CompareExchange(ref _closedState, 1, 0) != 0)
        {
            return;
        }

        // On the thread pool, as Kestrel's socket transport does: the token's callbacks are the app's code and must not
        // run on the engine's thread, nor under the reader's lock.
        ThreadPool.UnsafeQueueUserWorkItem(static connection =>
        {
            connection.AnnounceClosed();
            Interlocked.Exchange(ref connection._closedState, 3);
            Volatile.Read(ref connection._closedFired)?.TrySetResult();
        }, this, preferLocal: false);
    }
}
