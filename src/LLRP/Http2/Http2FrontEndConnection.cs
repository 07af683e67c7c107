using System.Buffers;
using System.IO.Pipelines;
using LLHttp.Sockets;
using LLHttp2;
using LLHttp2.Connection;
using LLHttp2.Hpack;
using LLRP.Connections;
using LLRP.Errors;
using Microsoft.AspNetCore.Connections;

namespace LLRP.Http2;

/// <summary>
/// One client connection of the proxy's own HTTP/2 front end: the connection's bytes go through LLHttp2's
/// <see cref="Http2ServerConnection"/> (frames, HPACK, stream states, flow control and the flood limits), each stream runs
/// as an exchange on an <see cref="Http2FrontEndStream"/> slot, and every frame the connection and its streams send goes
/// through one output buffer that one writer loop hands to the transport.
/// </summary>
/// <remarks>
/// <para>
/// Threads: the read loop (<see cref="RunAsync"/>) feeds the codec; the streams' exchanges send from the variants'
/// threads; the writer loop (<see cref="WriteAsync"/>) writes. The codec, the encoder, the output buffer and the stream
/// table are touched only under <see cref="_sync"/>, and no variant code and no wake-up runs under it.
/// </para>
/// <para>
/// Write batching: frames are appended to <see cref="_pending"/> and the writer takes all of it at once, so the SETTINGS
/// ACK, WINDOW_UPDATEs and responses one read produced, or the responses several streams completed while a write was in
/// progress, leave in one write; a response's HEADERS and first DATA are always together.
/// </para>
/// </remarks>
internal sealed class Http2FrontEndConnection : IHttp2ServerConnectionHandler, ISweptConnection, IBatchEndCallback
{
    /// <summary>
    /// The most bytes a connection holds for its client beyond what the transport took: a stream that would add more waits
    /// for the output to drain, so a client that reads slowly (with windows wide open) holds the proxy to this much per
    /// connection, not to what its windows allow. 256 KiB: four of ResponseWriter's 64 KiB body pieces, enough to keep a
    /// fast client's socket busy between two writes.
    /// </summary>
    internal const int MaxBufferedOutput = 256 * 1024;

    // A first output buffer: a response head and a small body, or a read's control frames.
    private const int InitialBufferSize = 4096;

    private readonly Http2FrontEnd _frontEnd;
    private readonly ProxyServer _server;
    private readonly ConnectionContext _context;
    private readonly PipeReader _input;
    private readonly PipeWriter _output;
    private readonly Http2ServerConnection _connection;
    private readonly HpackEncoder _encoder = new();
    private readonly ArrayBufferWriter<byte> _block = new(1024);
    private readonly Lock _sync = new();
    private readonly AsyncSignal _writeSignal = new();
    private readonly Dictionary<int, Http2FrontEndStream> _streams = [];
    // Filled by the codec's events and emptied after each read, both by the read loop only.
    private readonly List<Http2FrontEndStream> _starting = [];
    private readonly List<Http2FrontEndStream> _readWakes = [];
    // Streams waiting for a window or for the output; the writer loop wakes them from its own list.
    private readonly List<Http2FrontEndStream> _waiting = [];
    private readonly List<Http2FrontEndStream> _writeWakes = [];
    // The sweep's: streams past their deadline, expired once the lock is released, and the tunnels to check then.
    private readonly List<Http2FrontEndStream> _expired = [];
    private readonly List<Tunnel> _tunnels = [];
    private readonly long _settingsAckDeadline;
    private readonly long _keepAliveMs;
    private ArrayBufferWriter<byte> _pending = new(InitialBufferSize);
    private ArrayBufferWriter<byte>? _spare = new(InitialBufferSize);
    private Http2FrontEndStream? _decoding;
    private uint _encoderTableSize = HpackEncoder.DefaultHeaderTableSize;
    private int _running;
    // Write batches the writer has taken from _pending, and the last of them the transport took whole: a stream whose
    // END_STREAM went out in a flushed batch has delivered its response, whatever happens to the connection after.
    private long _batchesTaken;
    private long _batchesFlushed;
    private long _idleSince;
    private bool _ended;
    private bool _writerStop;
    // The writer loop has returned: no batch is in flight any more.
    private bool _writerDone;
    private volatile bool _closeRequested;
    private int _writeQueued;

    public Http2FrontEndConnection(Http2FrontEnd frontEnd, ProxyServer server, ConnectionContext context)
    {
        _frontEnd = frontEnd;
        _server = server;
        _context = context;
        _input = context.Transport.Input;
        _output = context.Transport.Output;
        _connection = new Http2ServerConnection(this, frontEnd.CodecOptions);
        Peer = ClientPeer.Of(context);
        var now = Environment.TickCount64;
        _idleSince = now;
        _settingsAckDeadline = now + (long)frontEnd.CodecOptions.SettingsAckTimeout.TotalMilliseconds;
        _keepAliveMs = (long)server.Options.KeepAliveTimeout.TotalMilliseconds;
    }

    /// <summary>The client's address and whether it spoke TLS, for the fields the proxy adds.</summary>
    public ClientPeer Peer { get; }

    /// <summary>The streams whose exchange runs.</summary>
    public int ExchangesInFlight => Volatile.Read(ref _running);

    /// <summary>The connection's whole life: the read loop, then the end of the writer and of the connection.</summary>
    public async Task RunAsync()
    {
        _server.InFlight.ConnectionStarted(this);
        var writer = WriteAsync();
        var ending = ConnectionEnding.Close;
        try
        {
            lock (_sync)
            {
                _connection.Start(_pending);
            }
            ScheduleWrite();
            while (true)
            {
                ReadResult result;
                try
                {
                    result = await _input.ReadAsync();
                }
                catch (Exception e) when (e is IOException or ConnectionResetException or ConnectionAbortedException or ObjectDisposedException)
                {
                    ending = ConnectionEnding.Abort;
                    break;
                }
                var buffer = result.Buffer;
                Http2ConnectionState state;
                lock (_sync)
                {
                    state = _connection.Process(ref buffer, _pending);
                    if (state == Http2ConnectionState.Closed)
                    {
                        _ended = true;
                    }
                    TakeWaiting(_readWakes);
                }
                _input.AdvanceTo(buffer.Start, buffer.End);
                foreach (var stream in _starting)
                {
                    stream.Begin();
                }
                _starting.Clear();
                Wake(_readWakes);
                ScheduleWrite();
                if (state == Http2ConnectionState.Closed || Volatile.Read(ref _ended))
                {
                    // A connection error or the SETTINGS timeout: GOAWAY went out; the client may still be sending.
                    ending = ConnectionEnding.Linger;
                    break;
                }
                if (result.IsCompleted)
                {
                    ending = _running > 0 ? ConnectionEnding.Abort : ConnectionEnding.Close;
                    break;
                }
                if (_closeRequested && IsDrained())
                {
                    break;
                }
            }
        }
        finally
        {
            EndStreams();
            await writer;
            await ConnectionClose.EndAsync(_context, ending, _server);
            _server.InFlight.ConnectionEnded(this);
        }
    }

    private bool IsDrained()
    {
        lock (_sync)
        {
            return _running == 0 && (_connection.State != Http2ConnectionState.Open || _connection.IsDrained);
        }
    }

    // The connection ends: every stream still running is the client's loss; the writer sends what is left and stops.
    private void EndStreams()
    {
        Http2FrontEndStream[] running;
        lock (_sync)
        {
            _ended = true;
            _writerStop = true;
            running = [.. _streams.Values];
            _waiting.Clear();
            foreach (var stream in running)
            {
                if (!stream.Started)
                {
                    // Its head never completed: no exchange to end.
                    _streams.Remove(stream.Id);
                    stream.RequestBody.Reset();
                }
                else
                {
                    // A body still being read, a tunnel's input above all, ends now (no frame reaches it any more).
                    stream.RequestBody.End(new ProxyException(ProxyError.ClientGone, "The client connection ended."));
                }
            }
        }
        foreach (var stream in running)
        {
            if (!stream.Started)
            {
                stream.Abandon();
                continue;
            }
            stream.OnReset();
            stream.Wake();
        }
        ScheduleWrite();
    }

    /// <summary>
    /// The writer loop: whatever is pending goes to the transport in one write; then the streams that waited for the
    /// output to drain are woken. Ends when the connection ends and nothing is left, or when the client is gone.
    /// </summary>
    private async Task WriteAsync()
    {
        try
        {
            await WriteBatchesAsync();
        }
        finally
        {
            lock (_sync)
            {
                _writerDone = true;
                TakeWaiting(_writeWakes);
            }
            Wake(_writeWakes);
        }
    }

    private async Task WriteBatchesAsync()
    {
        while (true)
        {
            ArrayBufferWriter<byte>? batch = null;
            long number = 0;
            lock (_sync)
            {
                if (_pending.WrittenCount > 0)
                {
                    number = ++_batchesTaken;
                    batch = _pending;
                    _pending = _spare ?? new ArrayBufferWriter<byte>(InitialBufferSize);
                    _spare = null;
                }
                else if (_writerStop)
                {
                    return;
                }
            }
            if (batch is null)
            {
                await _writeSignal.WaitAsync();
                continue;
            }
            FlushResult flushed;
            try
            {
                _output.Write(batch.WrittenSpan);
                flushed = await _output.FlushAsync();
            }
            catch (Exception e) when (e is IOException or ConnectionResetException or ConnectionAbortedException or ObjectDisposedException or InvalidOperationException)
            {
                flushed = new FlushResult(isCanceled: false, isCompleted: true);
            }
            batch.ResetWrittenCount();
            lock (_sync)
            {
                _spare = batch;
                if (!flushed.IsCompleted && !flushed.IsCanceled)
                {
                    _batchesFlushed = number;
                }
                _connection.OnOutputFlushed();
                TakeWaiting(_writeWakes);
            }
            Wake(_writeWakes);
            if (flushed.IsCompleted || flushed.IsCanceled)
            {
                // The client is gone: the read loop ends, and with it every stream.
                _closeRequested = true;
                _input.CancelPendingRead();
                lock (_sync)
                {
                    _writerStop = true;
                    _pending.ResetWrittenCount();
                }
                return;
            }
        }
    }

    /// <summary>
    /// What was appended to the output goes out: at the end of the engine thread's batch of events when called on one
    /// (the responses of every downstream event in the batch, and the frames one read produced, leave in one write), at
    /// once otherwise.
    /// </summary>
    private void ScheduleWrite()
    {
        if (Interlocked.Exchange(ref _writeQueued, 1) == 1)
        {
            return;
        }
        if (!EpollEngine.TryDeferToBatchEnd(this))
        {
            Volatile.Write(ref _writeQueued, 0);
            _writeSignal.Set();
        }
    }

    void IBatchEndCallback.OnBatchEnd()
    {
        Volatile.Write(ref _writeQueued, 0);
        _writeSignal.Set();
    }

    // ---- Sends from the streams ----

    /// <summary>What a stream's exchange has for the client: see <see cref="Http2FrontEndStream.SendAsync"/>.</summary>
    public SendOutcome Send(Http2FrontEndStream stream, bool complete)
    {
        bool blocked;
        lock (_sync)
        {
            if (stream.EndSent)
            {
                // The end is queued; the stream waited only for the output to drain. Done while the connection lives, and
                // also after it ended when the batch with END_STREAM reached the transport: a client that read its last
                // response and closed (h2load at the end of a run) got it whole.
                if ((!_ended && !stream.IsReset) || _batchesFlushed >= stream.EndBatch)
                {
                    return SendOutcome.Done;
                }
                if (!_writerDone)
                {
                    // The writer still holds that batch: its flush decides, and it wakes the stream after (or as it ends).
                    if (!_waiting.Contains(stream))
                    {
                        _waiting.Add(stream);
                    }
                    return SendOutcome.Blocked;
                }
                return SendOutcome.Gone;
            }
            if (_ended || stream.IsReset)
            {
                return SendOutcome.Gone;
            }
            try
            {
                blocked = SendLocked(stream, complete);
                if (stream.EndSent)
                {
                    // In whatever _pending holds now, which the writer takes as its next batch.
                    stream.EndBatch = _batchesTaken + 1;
                }
            }
            catch (InvalidOperationException)
            {
                // The codec closed the stream (a stream error it answered): nothing more goes on it.
                return SendOutcome.Gone;
            }
            if (blocked && !_waiting.Contains(stream))
            {
                _waiting.Add(stream);
            }
        }
        ScheduleWrite();
        return blocked ? SendOutcome.Blocked : SendOutcome.Done;
    }

    private bool SendLocked(Http2FrontEndStream stream, bool complete)
    {
        {
            var body = stream.ResponseBody;
            if (!stream.HeadSent)
            {
                var endStream = complete && body.UnsentLength == 0 && !stream.HasTrailers;
                EncodeHead(stream);
                _connection.SendHeaders(stream.Id, _block.WrittenSpan, endStream, _pending);
                stream.HeadSent = true;
                stream.EndSent = endStream;
            }
            while (body.UnsentLength > 0)
            {
                var end = complete && !stream.HasTrailers;
                var length = body.UnsentLength;
                var sent = _connection.SendData(stream.Id, body.Unsent, end, _pending);
                if (sent == 0)
                {
                    break;
                }
                body.Sent(sent);
                stream.EndSent = end && sent == length;
            }
            if (complete && !stream.EndSent && body.UnsentLength == 0)
            {
                if (stream.HasTrailers)
                {
                    EncodeTrailers(stream);
                    _connection.SendHeaders(stream.Id, _block.WrittenSpan, endStream: true, _pending);
                }
                else
                {
                    _connection.SendData(stream.Id, default, endStream: true, _pending);
                }
                stream.EndSent = true;
            }
            return body.UnsentLength > 0 || _pending.WrittenCount > MaxBufferedOutput;
        }
    }

    // RFC 9113 §8.3.2: :status first; then Content-Length when the downstream gave one, then the fields. The encoder is the
    // connection's (its dynamic table is the client's decoder's), so blocks are encoded in the order they are sent.
    private void EncodeHead(Http2FrontEndStream stream)
    {
        StartBlock();
        Span<byte> digits = stackalloc byte[20];
        stream.Status.TryFormat(digits, out var written);
        _encoder.Encode(":status"u8, digits[..written], _block);
        if (stream.ContentLength >= 0)
        {
            stream.ContentLength.TryFormat(digits, out written);
            _encoder.Encode("content-length"u8, digits[..written], _block);
        }
        var fields = stream.HeadFields;
        while (fields.MoveNext())
        {
            _encoder.Encode(fields.Name, fields.Value, _block);
        }
    }

    private void EncodeTrailers(Http2FrontEndStream stream)
    {
        StartBlock();
        var fields = stream.TrailerFields;
        while (fields.MoveNext())
        {
            _encoder.Encode(fields.Name, fields.Value, _block);
        }
    }

    private void StartBlock()
    {
        // RFC 7541 §4.2: the client's SETTINGS_HEADER_TABLE_SIZE bounds our table; a change is signalled in the next block.
        var tableSize = _connection.PeerSettings.HeaderTableSize;
        if (tableSize != _encoderTableSize)
        {
            _encoderTableSize = tableSize;
            _encoder.SetPeerHeaderTableSize(tableSize);
        }
        _block.ResetWrittenCount();
        _encoder.BeginBlock(_block);
    }

    /// <summary>
    /// The exchange failed after its response started: the stream is reset (RFC 9113 §8.1: the client sees it incomplete),
    /// INTERNAL_ERROR; or its tunnel failed, CANCEL.
    /// </summary>
    public void Reset(Http2FrontEndStream stream, Http2ErrorCode code = Http2ErrorCode.InternalError)
    {
        lock (_sync)
        {
            if (!_ended && !stream.IsReset && !stream.EndSent)
            {
                _connection.ResetStream(stream.Id, code, _pending);
                stream.EndSent = true;
            }
        }
        ScheduleWrite();
    }

    /// <summary>The variant consumed <paramref name="length"/> bytes of the stream's body: WINDOW_UPDATE when half a window is owed.</summary>
    public void ConsumeData(Http2FrontEndStream stream, int length)
    {
        lock (_sync)
        {
            if (_ended)
            {
                return;
            }
            _connection.ConsumeData(stream.Id, length, _pending);
            if (_pending.WrittenCount == 0)
            {
                return;
            }
        }
        ScheduleWrite();
    }

    /// <summary>
    /// The stream's exchange ended: the slot leaves the connection. A response complete before the request was
    /// (an early answer to an upload) ends the stream with RST_STREAM NO_ERROR, RFC 9113 §8.1.
    /// </summary>
    public void StreamDone(Http2FrontEndStream stream)
    {
        bool drained;
        lock (_sync)
        {
            _streams.Remove(stream.Id);
            _waiting.Remove(stream);
            var unread = stream.RequestBody.Reset();
            if (!_ended && unread > 0)
            {
                // Body bytes the exchange never read: the connection's window is given back for them.
                _connection.ConsumeData(stream.Id, unread, _pending);
            }
            if (!_ended && !stream.IsReset && stream.EndSent && !stream.RequestEnded)
            {
                _connection.ResetStream(stream.Id, Http2ErrorCode.NoError, _pending);
            }
            _running--;
            if (_running == 0)
            {
                _idleSince = Environment.TickCount64;
            }
            drained = _closeRequested && _running == 0;
        }
        ScheduleWrite();
        if (drained)
        {
            _input.CancelPendingRead();
        }
    }

    // ---- The codec's events, from Process (under the lock) ----

    void IHttp2ServerConnectionHandler.OnField(int streamId, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed)
    {
        var stream = _decoding;
        if (stream is null || stream.Id != streamId)
        {
            if (_streams.TryGetValue(streamId, out stream))
            {
                // Request trailers of a stream in flight: not forwarded (the HTTP/1.1 requests the variants send carry
                // none); the block is still decoded, so the HPACK state stays in step.
                _decoding = null;
                return;
            }
            stream = _frontEnd.Rent();
            stream.Lend(this, streamId);
            _streams.Add(streamId, stream);
            _decoding = stream;
        }
        stream.OnField(name, value);
    }

    void IHttp2ServerConnectionHandler.OnHeaders(int streamId, bool isTrailers, bool endStream)
    {
        if (!_streams.TryGetValue(streamId, out var stream))
        {
            return;
        }
        if (isTrailers)
        {
            if (endStream)
            {
                stream.RequestEnded = true;
                stream.RequestBody.End(null);
            }
            return;
        }
        _decoding = null;
        stream.OnHeadersComplete(endStream);
        _idleSince = long.MaxValue;
        // With END_STREAM there is no body: the exchange never reads it (no framing), and the pipe stays untouched.
        _running++;
        _starting.Add(stream);
    }

    void IHttp2ServerConnectionHandler.OnData(int streamId, ReadOnlySequence<byte> data, bool endStream)
    {
        if (!_streams.TryGetValue(streamId, out var stream) || stream.RequestEnded)
        {
            // The exchange is over (an early answer): the bytes are dropped and the windows given back at once.
            _connection.ConsumeData(streamId, (int)data.Length, _pending);
            return;
        }
        if (!data.IsEmpty)
        {
            stream.RequestBody.Append(data);
        }
        if (endStream)
        {
            stream.RequestEnded = true;
            stream.RequestBody.End(null);
        }
    }

    void IHttp2ServerConnectionHandler.OnStreamReset(int streamId, Http2ErrorCode code, bool byPeer)
    {
        if (!_streams.TryGetValue(streamId, out var stream))
        {
            return;
        }
        if (_decoding == stream)
        {
            _decoding = null;
        }
        stream.RequestBody.End(new ProxyException(byPeer ? ProxyError.ClientGone : ProxyError.BadRequest,
            byPeer ? "The client reset the stream." : "The stream broke HTTP/2's rules (RFC 9113)."));
        if (!stream.Started)
        {
            // Its head never completed: the slot goes back at once.
            _streams.Remove(streamId);
            stream.RequestBody.Reset();
            stream.Abandon();
            return;
        }
        stream.OnReset();
        _readWakes.Add(stream);
    }

    void IHttp2ServerConnectionHandler.OnGoAway(int lastStreamId, Http2ErrorCode code)
    {
        // The client opens no more streams: ours end with the streams in flight (GOAWAY both ways, RFC 9113 §6.8).
        _connection.BeginGracefulShutdown(_pending);
        _closeRequested = true;
    }

    // ---- Wake-ups ----

    // Under the lock: the streams that wait for a window or the output, to be woken once it is released.
    private void TakeWaiting(List<Http2FrontEndStream> into)
    {
        into.AddRange(_waiting);
        _waiting.Clear();
    }

    // Outside the lock: each woken stream tries its send again (on this thread, until it waits again).
    private static void Wake(List<Http2FrontEndStream> streams)
    {
        foreach (var stream in streams)
        {
            stream.Wake();
        }
        streams.Clear();
    }

    // ---- The deadline sweep ----

    /// <summary>
    /// The connection's own timeouts: SETTINGS not acknowledged in time (GOAWAY SETTINGS_TIMEOUT, RFC 9113 §6.5.3), no
    /// stream in flight for keepAliveTimeout, or the proxy stopping (GOAWAY NO_ERROR, and the connection ends once the
    /// streams in flight have); and its streams' deadlines and tunnels.
    /// </summary>
    public void CheckDeadline(long now)
    {
        var close = false;
        lock (_sync)
        {
            if (_ended)
            {
                return;
            }
            if (_connection.IsAwaitingSettingsAck && now >= _settingsAckDeadline)
            {
                _connection.OnSettingsTimeout(_pending);
                _ended = true;
                close = true;
            }
            else if ((_server.Stopping || (_running == 0 && now - _idleSince >= _keepAliveMs)) && !_closeRequested)
            {
                _connection.BeginGracefulShutdown(_pending);
                _closeRequested = true;
                close = _running == 0;
            }
            // Each stream's downstreamResponseTimeout, as the raw HTTP/1.1 connection checks its one exchange's; a tunnel
            // the variant relays has tunnelIdleTimeout as its deadline and, as the front end's own tunnels, no end a
            // graceful stop could wait for.
            foreach (var stream in _streams.Values)
            {
                if (stream.InFlight && (stream.Control.IsPastDeadline(now) || (_server.Stopping && stream.Exchange.RelayedTunnel is not null)))
                {
                    _expired.Add(stream);
                }
                else if (stream.Tunnel is { } tunnel)
                {
                    _tunnels.Add(tunnel);
                }
            }
        }
        foreach (var stream in _expired)
        {
            stream.Control.Expire();
        }
        _expired.Clear();
        // A tunnel's idle time and the stop, as the HTTP/1.1 connection checks its own (Tunnel.Check).
        foreach (var tunnel in _tunnels)
        {
            tunnel.Check(now, _server.Stopping);
        }
        _tunnels.Clear();
        if (close || _closeRequested)
        {
            ScheduleWrite();
        }
        if (close)
        {
            _input.CancelPendingRead();
        }
    }

    /// <summary>Nothing per connection is trimmed yet: the output buffers are small unless a burst grew them.</summary>
    public void ReleaseIdle()
    {
    }
}
