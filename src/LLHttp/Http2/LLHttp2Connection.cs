using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using LLHttp.Transports;
using LLHttp2;
using LLHttp2.Connection;

namespace LLHttp.Http2;

/// <summary>
/// One HTTP/2 connection to a downstream (h2c with prior knowledge over TCP, or h2 over TLS with ALPN, RFC 9113 §3):
/// the I/O around <see cref="Http2ClientConnection"/>. One read loop feeds the codec what each receive returned and
/// hands its events to the streams (<see cref="LLHttp2Stream"/>); one write loop sends what every stream and the codec
/// wrote since its last send in one send (the batching of LLRP's front end: the codec never flushes). Every codec call
/// runs under one lock; awaiters are completed asynchronously, so no caller's continuation runs under it.
/// Streams are pooled per connection and reused: a request allocates nothing once the connection is warm.
/// </summary>
public sealed class LLHttp2Connection : IHttp2ClientConnectionHandler, IDisposable
{
    // Two frames of the largest size we accept (SETTINGS_MAX_FRAME_SIZE stays at its 16 KiB initial value) and more:
    // an incomplete frame left after a pass always fits with room to receive the rest.
    private const int ReceiveBufferLength = 64 * 1024;
    private const int InitialOutputLength = 16 * 1024;

    private static readonly Action<object?> s_settingsTimeout = static state => ((LLHttp2Connection)state!).OnSettingsTimer();

    internal readonly object Sync = new();
    private readonly Transport _transport;
    private readonly Dictionary<int, LLHttp2Stream> _byId;
    private readonly Stack<LLHttp2Stream> _free = new();
    private readonly List<LLHttp2Stream> _blockedSenders = [];
    private readonly List<int> _deferredResets = [];
    private bool _inProcess;
    private readonly byte[] _receive = GC.AllocateUninitializedArray<byte>(ReceiveBufferLength);
    private readonly ReusableValueTaskSource<bool> _writerSignal = new(runContinuationsAsynchronously: true);
    private ArrayBufferWriter<byte> _pending = new(InitialOutputLength);
    private ArrayBufferWriter<byte> _spare = new(InitialOutputLength);
    private bool _writerWaiting;
    private int _reserved;
    private LLHttpException? _failure;
    private Http2ErrorCode _goAwayCode;
    private TaskCompletionSource? _pingAck;
    private CancellationTokenSource? _settingsTimer;
    private readonly TaskCompletionSource _settingsReceived = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Task _readLoop;
    private readonly Task _writeLoop;

    internal LLHttp2Connection(Transport transport, LLHttpOptions options)
    {
        _transport = transport;
        Options = options;
        _byId = new Dictionary<int, LLHttp2Stream>(options.Http2MaxConcurrentStreams);
        var codecOptions = new Http2ClientConnectionOptions
        {
            MaxConcurrentStreams = options.Http2MaxConcurrentStreams,
            SettingsAckTimeout = options.Http2SettingsAckTimeout,
        };
        StreamReceiveWindow = codecOptions.InitialStreamWindowSize;
        Codec = new Http2ClientConnection(this, codecOptions);
        lock (Sync)
        {
            Codec.Start(_pending);
        }

        if (options.Http2SettingsAckTimeout != Timeout.InfiniteTimeSpan)
        {
            // One timer per connection, not per request; disposed once the server acknowledges.
            _settingsTimer = new CancellationTokenSource();
            _settingsTimer.Token.UnsafeRegister(s_settingsTimeout, this);
            _settingsTimer.CancelAfter(options.Http2SettingsAckTimeout);
        }

        _writeLoop = WriteLoopAsync();
        _readLoop = ReadLoopAsync();
    }

    internal LLHttpOptions Options { get; }

    internal Http2ClientConnection Codec { get; }

    /// <summary>The receive window we advertise per stream: the most of a stream's body ever unread.</summary>
    internal int StreamReceiveWindow { get; }

    internal ArrayBufferWriter<byte> Output => _pending;

    /// <summary>
    /// Connects to <paramref name="endPoint"/>: h2c with prior knowledge without <paramref name="tls"/>, h2 over TLS
    /// with it (ALPN "h2" is offered when the options name no protocol; a server that selects another fails the connect
    /// as <see cref="LLHttpError.TlsHandshakeFailed"/>). <see cref="LLHttpOptions.ConnectTimeout"/> covers the handshake.
    /// </summary>
    public static async ValueTask<LLHttp2Connection> ConnectAsync(
        EndPoint endPoint, SslClientAuthenticationOptions? tls = null, LLHttpOptions? options = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(endPoint);
        options ??= LLHttpOptions.Default;
        options.Validate();
        if (tls is not null && (tls.ApplicationProtocols is null || tls.ApplicationProtocols.Count == 0))
        {
            tls = WithH2(tls);
        }

        Transport transport = await LLHttpConnection.ConnectTransportAsync(LLHttpConnection.Connector(endPoint, tls, options), options, cancellationToken).ConfigureAwait(false);
        if (transport is TlsTransport secured && secured.NegotiatedApplicationProtocol != SslApplicationProtocol.Http2)
        {
            transport.Dispose();
            throw new LLHttpException(LLHttpError.TlsHandshakeFailed, "The server did not select h2 with ALPN (RFC 9113 §3.2).");
        }

        var connection = new LLHttp2Connection(transport, options);
        try
        {
            // The server's SETTINGS first: until they arrive its stream limit reads as unlimited, and a pool that
            // filled a new connection on that belief would have streams refused (RFC 9113 §5.1.2).
            await connection._settingsReceived.Task.WaitAsync(options.ConnectTimeout, cancellationToken).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            connection.Dispose();
            throw new LLHttpException(LLHttpError.ConnectTimeout, "The server sent no SETTINGS within ConnectTimeout.");
        }
        catch
        {
            connection.Dispose();
            throw;
        }

        return connection;
    }

    /// <summary>Whether new streams may go here: no failure, no GOAWAY from the server. A pool drops a connection that is not.</summary>
    public bool IsUsable
    {
        get
        {
            lock (Sync)
            {
                return IsUsableLocked;
            }
        }
    }

    /// <summary>Streams in use: opened on the wire, or handed out by <see cref="TryOpenStream"/> and not yet sent.</summary>
    public int ActiveStreams
    {
        get
        {
            lock (Sync)
            {
                return Codec.ActiveStreams + _reserved;
            }
        }
    }

    /// <summary>The server's SETTINGS_MAX_CONCURRENT_STREAMS (2^32-1 until its SETTINGS arrive).</summary>
    public uint PeerMaxConcurrentStreams
    {
        get
        {
            lock (Sync)
            {
                return Codec.PeerMaxConcurrentStreams;
            }
        }
    }

    /// <summary>
    /// Whether <see cref="TryOpenStream"/> would succeed now: usable, and below the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS and <see cref="LLHttpOptions.Http2MaxConcurrentStreams"/>. A pool opens another
    /// connection when every one it has says false.
    /// </summary>
    public bool CanOpenStream
    {
        get
        {
            lock (Sync)
            {
                return CanOpenStreamLocked;
            }
        }
    }

    private bool IsUsableLocked => _failure is null && !Codec.IsGoAwayReceived && Codec.State is Http2ConnectionState.AwaitingSettings or Http2ConnectionState.Open;

    private bool CanOpenStreamLocked => IsUsableLocked && Codec.AvailableStreams - _reserved > 0;

    /// <summary>
    /// A stream for one request, from this connection's pool of stream objects; false when <see cref="CanOpenStream"/>
    /// is. Its identifier is allocated when its HEADERS leave (streams reach the server in order, RFC 9113 §5.1.1).
    /// Give it back with <see cref="LLHttp2Stream.Dispose"/> once the exchange is over.
    /// </summary>
    public bool TryOpenStream([NotNullWhen(true)] out LLHttp2Stream? stream)
    {
        lock (Sync)
        {
            if (!CanOpenStreamLocked)
            {
                stream = null;
                return false;
            }

            _reserved++;
            stream = _free.Count != 0 ? _free.Pop() : new LLHttp2Stream(this);
            stream.Begin();
            return true;
        }
    }

    /// <summary>Closes the connection: every stream still running fails with <see cref="LLHttpError.ConnectionAborted"/>.</summary>
    public void Dispose()
    {
        lock (Sync)
        {
            if (_failure is null)
            {
                Codec.BeginGracefulShutdown(_pending);
                FailLocked(new LLHttpException(LLHttpError.ConnectionAborted, "The HTTP/2 connection was closed by its owner."));
            }
        }
    }

    /// <summary>
    /// Liveness (RFC 9113 §6.7): a PING, answered within <see cref="LLHttpOptions.Http2PingTimeout"/> or the connection
    /// fails with <see cref="LLHttpError.Http2PingTimeout"/> (every stream on it too). For a caller about to reuse a
    /// connection that was quiet a long time; one at a time. Allocates (a completion and a timer): not per request.
    /// </summary>
    public async ValueTask PingAsync(CancellationToken cancellationToken = default)
    {
        TaskCompletionSource acknowledged;
        lock (Sync)
        {
            ThrowIfFailedLocked();
            if (_pingAck is not null)
            {
                ThrowHelper.ThrowInvalidOperation("A PING is already waiting for its ACK.");
            }

            _pingAck = acknowledged = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            Codec.SendPing((ulong)Environment.TickCount64, _pending);
            SignalWriterLocked();
        }

        try
        {
            await acknowledged.Task.WaitAsync(Options.Http2PingTimeout, cancellationToken).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            var failure = new LLHttpException(LLHttpError.Http2PingTimeout, "The server did not answer a PING within Http2PingTimeout.");
            lock (Sync)
            {
                FailLocked(failure);
            }

            throw new LLHttpException(failure.Error, failure.Message);
        }
        finally
        {
            lock (Sync)
            {
                if (_pingAck == acknowledged)
                {
                    _pingAck = null;
                }
            }
        }
    }

    /// <summary>Both loops ended (tests: nothing is left running after a failure).</summary>
    internal Task Completion => Task.WhenAll(_readLoop, _writeLoop);

    // ---- Called by streams, under Sync ----

    internal void ThrowIfFailedLocked()
    {
        if (_failure is not null)
        {
            throw new LLHttpException(_failure.Error, _failure.Message, _failure);
        }
    }

    /// <summary>Opens the stream's identifier and registers it; false when the server's GOAWAY came first.</summary>
    internal bool TryRegisterLocked(LLHttp2Stream stream, out int streamId)
    {
        _reserved--;
        if (!Codec.TryOpenStream(out streamId))
        {
            return false;
        }

        _byId[streamId] = stream;
        return true;
    }

    internal void ReleaseLocked(LLHttp2Stream stream, int streamId, bool reserved, bool reset)
    {
        if (reserved)
        {
            _reserved--;
        }

        if (streamId != 0)
        {
            _byId.Remove(streamId);
            if (reset && _failure is null)
            {
                Codec.ResetStream(streamId, _pending);
            }
        }

        _blockedSenders.Remove(stream);
        _free.Push(stream);
        if (_failure is null && Codec.IsGoAwayReceived && Codec.ActiveStreams == 0 && _reserved == 0)
        {
            // The last stream the server's GOAWAY let finish is over: nothing can go here any more.
            FailLocked(Closed("The server sent GOAWAY."));
        }

        SignalWriterLocked();
        StreamReleased?.Invoke();
    }

    /// <summary>
    /// A stream was given back or the connection failed: a pool waiting for room tries again. Called under the
    /// connection's lock, so it must take no lock of its own.
    /// </summary>
    internal Action? StreamReleased { get; set; }

    internal void AddBlockedSenderLocked(LLHttp2Stream stream) => _blockedSenders.Add(stream);

    internal void RemoveBlockedSenderLocked(LLHttp2Stream stream) => _blockedSenders.Remove(stream);

    internal void ResetLocked(int streamId)
    {
        _byId.Remove(streamId);
        if (_inProcess)
        {
            // From a codec event: the codec is still in the middle of the frame, so the reset waits for Process to return.
            _deferredResets.Add(streamId);
        }
        else if (_failure is null)
        {
            Codec.ResetStream(streamId, _pending);
            SignalWriterLocked();
        }
    }

    internal void SignalWriterLocked()
    {
        if (_writerWaiting && (_pending.WrittenCount != 0 || _failure is not null))
        {
            _writerWaiting = false;
            _writerSignal.SetResult(true);
        }
    }

    // ---- The loops ----

    private async Task ReadLoopAsync()
    {
        int start = 0;
        int end = 0;
        try
        {
            while (true)
            {
                if (start != 0)
                {
                    _receive.AsSpan(start, end - start).CopyTo(_receive);
                    end -= start;
                    start = 0;
                }

                int received = await _transport.ReceiveAsync(_receive.AsMemory(end), CancellationToken.None).ConfigureAwait(false);
                lock (Sync)
                {
                    if (_failure is not null)
                    {
                        return;
                    }

                    if (received == 0)
                    {
                        FailLocked(Closed("The server closed the connection."));
                        return;
                    }

                    end += received;
                    var input = new ReadOnlySequence<byte>(_receive, 0, end);
                    _inProcess = true;
                    var state = Codec.Process(ref input, _pending);
                    _inProcess = false;
                    start = end - (int)input.Length;
                    if (state != Http2ConnectionState.Closed)
                    {
                        foreach (int id in _deferredResets)
                        {
                            Codec.ResetStream(id, _pending);
                        }
                    }

                    _deferredResets.Clear();
                    if (state == Http2ConnectionState.Closed)
                    {
                        var error = Codec.CloseError;
                        FailLocked(error?.Code == Http2ErrorCode.SettingsTimeout
                            ? new LLHttpException(LLHttpError.Http2SettingsTimeout, "The server did not acknowledge our SETTINGS in time.")
                            : new LLHttpException(LLHttpError.Http2ConnectionError, $"HTTP/2 connection error {error?.Code}: {error?.Message}", error));
                        return;
                    }

                    if (!Codec.IsAwaitingSettingsAck && _settingsTimer is { } timer)
                    {
                        _settingsTimer = null;
                        timer.Dispose();
                    }

                    if (state != Http2ConnectionState.AwaitingSettings)
                    {
                        _settingsReceived.TrySetResult();
                    }

                    PumpBlockedSendersLocked();
                    if (Codec.IsGoAwayReceived && Codec.ActiveStreams == 0 && _reserved == 0)
                    {
                        // Nothing more can go here: close once what we owe the server (ACKs) has left.
                        FailLocked(Closed("The server sent GOAWAY."));
                        return;
                    }

                    SignalWriterLocked();
                }
            }
        }
        catch (Exception e) when (e is IOException or SocketException or ObjectDisposedException or OperationCanceledException or InvalidOperationException)
        {
            lock (Sync)
            {
                FailLocked(new LLHttpException(LLHttpError.ReceiveFailed, $"HTTP/2 receive failed: {e.Message}", e));
            }
        }
    }

    private async Task WriteLoopAsync()
    {
        try
        {
            while (true)
            {
                ArrayBufferWriter<byte>? batch = null;
                ValueTask<bool> wake = default;
                lock (Sync)
                {
                    if (_pending.WrittenCount != 0)
                    {
                        batch = _pending;
                        _pending = _spare;
                        _spare = batch;
                    }
                    else if (_failure is not null)
                    {
                        break;
                    }
                    else
                    {
                        _writerWaiting = true;
                        wake = new ValueTask<bool>(_writerSignal, _writerSignal.Reset());
                    }
                }

                if (batch is null)
                {
                    await wake.ConfigureAwait(false);
                    continue;
                }

                await _transport.SendAsync(batch.WrittenMemory, CancellationToken.None).ConfigureAwait(false);
                batch.ResetWrittenCount();
                lock (Sync)
                {
                    Codec.OnOutputFlushed();
                }
            }

            // Failed or closed, and what was owed (GOAWAY, RST_STREAM) has left.
            _transport.Close();
        }
        catch (Exception e) when (e is IOException or SocketException or ObjectDisposedException or OperationCanceledException or InvalidOperationException)
        {
            lock (Sync)
            {
                FailLocked(new LLHttpException(LLHttpError.SendFailed, $"HTTP/2 send failed: {e.Message}", e));
            }

            _transport.Dispose();
        }
    }

    private LLHttpException Closed(string message)
        => _goAwayCode is Http2ErrorCode.NoError
            ? new LLHttpException(LLHttpError.Http2ConnectionError, message)
            : new LLHttpException(LLHttpError.Http2ConnectionError, $"{message} (GOAWAY {_goAwayCode})");

    private void FailLocked(LLHttpException failure)
    {
        if (_failure is not null)
        {
            return;
        }

        _failure = failure;
        if (_settingsReceived.TrySetException(failure))
        {
            _ = _settingsReceived.Task.Exception; // observed: only a connect in progress waits for it
        }
        foreach (var stream in _byId.Values)
        {
            stream.FailLocked(failure);
        }

        _byId.Clear();
        _blockedSenders.Clear();
        _settingsTimer?.Dispose();
        _settingsTimer = null;
        if (_pingAck?.TrySetException(failure) == true)
        {
            _ = _pingAck.Task.Exception; // observed: the PING's own wait may have ended already (its timeout)
        }
        StreamReleased?.Invoke();
        // A writer in the middle of a send sees the failure when it comes back.
        SignalWriterLocked();
    }

    private void PumpBlockedSendersLocked()
    {
        for (int i = _blockedSenders.Count - 1; i >= 0; i--)
        {
            if (_blockedSenders[i].PumpSendLocked())
            {
                _blockedSenders.RemoveAt(i);
            }
        }
    }

    private void OnSettingsTimer()
    {
        lock (Sync)
        {
            if (_failure is null && Codec.IsAwaitingSettingsAck)
            {
                Codec.OnSettingsTimeout(_pending);
                FailLocked(new LLHttpException(LLHttpError.Http2SettingsTimeout, "The server did not acknowledge our SETTINGS in time."));
            }
        }
    }

    private static SslClientAuthenticationOptions WithH2(SslClientAuthenticationOptions tls) => new()
    {
        AllowRenegotiation = tls.AllowRenegotiation,
        AllowTlsResume = tls.AllowTlsResume,
        ApplicationProtocols = [SslApplicationProtocol.Http2],
        CertificateChainPolicy = tls.CertificateChainPolicy,
        CertificateRevocationCheckMode = tls.CertificateRevocationCheckMode,
        CipherSuitesPolicy = tls.CipherSuitesPolicy,
        ClientCertificateContext = tls.ClientCertificateContext,
        ClientCertificates = tls.ClientCertificates,
        EnabledSslProtocols = tls.EnabledSslProtocols,
        EncryptionPolicy = tls.EncryptionPolicy,
        LocalCertificateSelectionCallback = tls.LocalCertificateSelectionCallback,
        RemoteCertificateValidationCallback = tls.RemoteCertificateValidationCallback,
        TargetHost = tls.TargetHost,
    };

    // ---- The codec's events (from Process, under Sync) ----

    void IHttp2ClientConnectionHandler.OnResponseField(int streamId, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed)
    {
        if (_byId.TryGetValue(streamId, out var stream))
        {
            stream.OnFieldLocked(name, value);
        }
    }

    void IHttp2ClientConnectionHandler.OnResponseHeaders(int streamId, int status, bool endStream)
    {
        if (_byId.TryGetValue(streamId, out var stream))
        {
            stream.OnHeadersLocked(status, endStream);
        }
    }

    void IHttp2ClientConnectionHandler.OnData(int streamId, ReadOnlySequence<byte> data, bool endStream)
    {
        if (_byId.TryGetValue(streamId, out var stream))
        {
            stream.OnDataLocked(data, endStream);
        }
        else
        {
            // The caller gave the stream back: nobody reads, but the connection's window is still owed.
            Codec.ConsumeData(streamId, (int)data.Length, _pending);
        }
    }

    void IHttp2ClientConnectionHandler.OnStreamReset(int streamId, Http2ErrorCode code, bool byPeer)
    {
        if (_byId.Remove(streamId, out var stream))
        {
            stream.FailLocked(code == Http2ErrorCode.RefusedStream && byPeer
                ? new LLHttpException(LLHttpError.StreamRefused, "The server did not process the request (REFUSED_STREAM or above its GOAWAY's last stream): it may be retried.")
                : new LLHttpException(LLHttpError.StreamReset, byPeer ? $"The server reset the stream ({code})." : $"The response was malformed: stream reset ({code})."));
            _blockedSenders.Remove(stream);
        }
    }

    void IHttp2ClientConnectionHandler.OnGoAway(int lastStreamId, Http2ErrorCode code) => _goAwayCode = code;

    void IHttp2ClientConnectionHandler.OnPingAck(ulong data) => _pingAck?.TrySetResult();
}
