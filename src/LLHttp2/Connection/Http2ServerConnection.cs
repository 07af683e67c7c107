using LLHttp2.FlowControl;
using LLHttp2.Frames;
using LLHttp2.Hpack;
using LLHttp2.Streams;

namespace LLHttp2.Connection;

/// <summary>Where a <see cref="Http2ServerConnection"/> is; it only moves forward.</summary>
public enum Http2ConnectionState : byte
{
    /// <summary>Waiting for the 24 bytes of the client preface (RFC 9113 §3.4).</summary>
    AwaitingPreface,
    /// <summary>The preface arrived; the next frame must be the client's SETTINGS (§3.4).</summary>
    AwaitingSettings,
    Open,
    /// <summary>This endpoint sent a graceful GOAWAY: streams up to its last-stream-id go on, newer ones are refused.</summary>
    Draining,
    /// <summary>A GOAWAY with an error was written (see <see cref="Http2ServerConnection.CloseError"/>); nothing more is read.</summary>
    Closed,
}

/// <summary>
/// The server side of one HTTP/2 connection (RFC 9113) as an explicit state machine without sockets, threads or
/// timers: <see cref="Process"/> takes the bytes that arrived and writes the frames the connection must send (its
/// SETTINGS, ACKs, RST_STREAM, WINDOW_UPDATE, GOAWAY) into the caller's <see cref="IBufferWriter{T}"/>, and tells the
/// application what happened through <see cref="IHttp2ServerConnectionHandler"/>.
/// <para>
/// Output batching: nothing is flushed here. The caller feeds what one read returned to <see cref="Process"/>, then
/// flushes the writer once for the whole pass (and once after its own <see cref="SendHeaders"/>/<see cref="SendData"/>
/// calls), and calls <see cref="OnOutputFlushed"/> when the transport has taken the bytes: the bound on frames this
/// connection must answer (<see cref="Http2ServerConnectionOptions.MaxPendingControlFrames"/>) counts what was
/// written since then.
/// </para>
/// <para>
/// Errors: a stream error (§5.4.2) writes RST_STREAM and reading goes on; a connection error (§5.4.1) writes GOAWAY
/// with the last stream processed and the code, and the state becomes <see cref="Http2ConnectionState.Closed"/>: the
/// caller flushes and closes the transport. Nothing is allocated per frame or per request once the connection exists
/// (its stream table is sized by SETTINGS_MAX_CONCURRENT_STREAMS); only errors allocate their exception.
/// </para>
/// </summary>
public sealed class Http2ServerConnection
{
    private readonly Http2ServerConnectionOptions _options;
    private readonly IHttp2ServerConnectionHandler _handler;
    private readonly Http2FrameReader _reader = new();
    private readonly Http2FieldBlockBuffer _block;
    private readonly HpackDecoder _decoder;
    private readonly Stream[] _streams;

    // Streams closed lately and how (a ring of twice the concurrency limit): what may still arrive on them depends
    // on it (§5.1, "closed"). A stream this endpoint reset gets the peer's frames in flight ignored. An id below the
    // highest that the ring does not hold is taken as never used (implicitly closed, §5.1.1): HEADERS there is a
    // lower new stream, a connection PROTOCOL_ERROR, and DATA a connection STREAM_CLOSED.
    private readonly int[] _closedIds;
    private readonly Http2StreamClosure[] _closedHow;
    private int _closedNext;

    private Http2ConnectionState _state;
    private bool _started;
    private bool _awaitingSettingsAck;
    private Http2Settings _peerSettings = Http2Settings.Initial;
    private Http2SendWindow _connectionSend = new(0, (int)Http2Settings.InitialInitialWindowSize);
    private Http2ReceiveWindow _connectionReceive = new(0, (int)Http2Settings.InitialInitialWindowSize);

    private int _highestStreamId;
    private int _activeStreams;
    private int _goAwayLastStreamId = int.MaxValue;

    // The field block being joined: its stream, END_STREAM of its HEADERS, and the CONTINUATION frames so far.
    private int _blockStreamId;
    private bool _blockEndStream;
    private int _blockContinuations;

    // Flood counters (Http2ServerConnectionOptions names each limit and its source).
    private int _pendingControlFrames;
    private int _resetsWithoutCompletion;
    private int _consecutiveEmptyData;
    private int _windowUpdatesWithoutData;

    // Connection-window bytes of the DATA frame being processed not yet delivered to the application: given back if a
    // stream error drops the frame, so the connection's window does not leak.
    private int _undeliveredData;

    public Http2ServerConnection(IHttp2ServerConnectionHandler handler, Http2ServerConnectionOptions? options = null)
    {
        _handler = handler ?? throw new ArgumentNullException(nameof(handler));
        _options = options ?? new Http2ServerConnectionOptions();
        if (_options.MaxConcurrentStreams < 1)
        {
            Http2Throw.Argument(nameof(options), "MaxConcurrentStreams must allow one stream");
        }

        _block = new Http2FieldBlockBuffer(_options.MaxHeaderListSize);
        _decoder = new HpackDecoder(HpackDecoder.DefaultHeaderTableSize, _options.MaxHeaderListSize);
        _streams = new Stream[_options.MaxConcurrentStreams];
        _closedIds = new int[2 * _options.MaxConcurrentStreams];
        _closedHow = new Http2StreamClosure[_closedIds.Length];
    }

    public Http2ConnectionState State => _state;

    /// <summary>The connection error that closed the connection (the GOAWAY written carries its code), null otherwise.</summary>
    public Http2Exception? CloseError { get; private set; }

    /// <summary>
    /// True from <see cref="Start"/> until the peer acknowledges our SETTINGS. The caller's timer, armed for
    /// <see cref="Http2ServerConnectionOptions.SettingsAckTimeout"/>, calls <see cref="OnSettingsTimeout"/> if it is
    /// still true; the library keeps no time itself.
    /// </summary>
    public bool IsAwaitingSettingsAck => _awaitingSettingsAck;

    /// <summary>The peer's settings in force (SETTINGS_MAX_FRAME_SIZE for what we send, its header table size for the encoder).</summary>
    public Http2Settings PeerSettings => _peerSettings;

    /// <summary>The highest stream the client opened (or tried to), 0 before any.</summary>
    public int HighestStreamId => _highestStreamId;

    /// <summary>Streams open or half-closed, counted against SETTINGS_MAX_CONCURRENT_STREAMS.</summary>
    public int ActiveStreams => _activeStreams;

    /// <summary>Draining and no stream left: the caller may close the transport.</summary>
    public bool IsDrained => _state == Http2ConnectionState.Draining && _activeStreams == 0;

    /// <summary>
    /// §3.4: the server's preface, its SETTINGS, the first frame it sends (and a WINDOW_UPDATE on stream 0 when the
    /// connection window is larger than 65,535). It may be sent before the client preface arrives; <see cref="Process"/>
    /// calls it if the caller did not.
    /// </summary>
    public void Start(IBufferWriter<byte> output)
    {
        if (_started)
        {
            return;
        }

        _started = true;
        Span<Http2Setting> settings =
        [
            new(Http2SettingId.MaxConcurrentStreams, (uint)_options.MaxConcurrentStreams),
            new(Http2SettingId.InitialWindowSize, (uint)_options.InitialStreamWindowSize),
            new(Http2SettingId.MaxHeaderListSize, (uint)_options.MaxHeaderListSize),
            new(Http2SettingId.EnablePush, 0),
            new(Http2SettingId.EnableConnectProtocol, 1),
        ];
        // RFC 8441 §3: the setting is sent only when on (its absence means off).
        Http2FrameWriter.WriteSettings(output, _options.EnableConnectProtocol ? settings : settings[..^1]);
        _awaitingSettingsAck = true;
        if (_options.ConnectionWindowSize > _connectionReceive.Target)
        {
            Http2FrameWriter.WriteWindowUpdate(output, 0, _connectionReceive.Grow(_options.ConnectionWindowSize));
        }
    }

    /// <summary>
    /// Processes every complete frame at the start of <paramref name="input"/> (which is sliced past them; an
    /// incomplete frame stays for the next call, with more bytes) and writes what the connection answers into
    /// <paramref name="output"/>. Returns the state; <see cref="Http2ConnectionState.Closed"/> means a GOAWAY with an
    /// error was written and the caller flushes and closes.
    /// </summary>
    public Http2ConnectionState Process(ref ReadOnlySequence<byte> input, IBufferWriter<byte> output)
    {
        Start(output);
        while (_state != Http2ConnectionState.Closed)
        {
            try
            {
                if (_state == Http2ConnectionState.AwaitingPreface)
                {
                    if (!Http2Preface.TryRead(ref input))
                    {
                        break;
                    }

                    _state = Http2ConnectionState.AwaitingSettings;
                }

                if (!_reader.TryReadFrame(ref input, out var frame))
                {
                    break;
                }

                OnFrame(frame, output);
            }
            catch (Http2Exception e) when (!e.IsConnectionError)
            {
                try
                {
                    OnStreamError(e, output);
                }
                catch (Http2Exception c) when (c.IsConnectionError)
                {
                    Close(c, output);
                }
            }
            catch (Http2Exception e)
            {
                Close(e, output);
            }
        }

        return _state;
    }

    /// <summary>The caller's output is drained (the transport took the bytes): the answered-frames count starts over.</summary>
    public void OnOutputFlushed() => _pendingControlFrames = 0;

    /// <summary>The caller's timer fired: if our SETTINGS are still unacknowledged, GOAWAY SETTINGS_TIMEOUT (§6.5.3).</summary>
    public void OnSettingsTimeout(IBufferWriter<byte> output)
    {
        if (_awaitingSettingsAck && _state != Http2ConnectionState.Closed)
        {
            Close(new Http2Exception(Http2ErrorCode.SettingsTimeout, true, 0, "SETTINGS not acknowledged in time"), output);
        }
    }

    /// <summary>
    /// §6.8 graceful shutdown: GOAWAY NO_ERROR with the highest stream the client opened; streams up to it go on,
    /// newer ones are refused (RST_STREAM REFUSED_STREAM) so the client retries them elsewhere.
    /// </summary>
    public void BeginGracefulShutdown(IBufferWriter<byte> output)
    {
        if (_state is Http2ConnectionState.Closed or Http2ConnectionState.Draining)
        {
            return;
        }

        _goAwayLastStreamId = _highestStreamId;
        Http2FrameWriter.WriteGoAway(output, _goAwayLastStreamId, Http2ErrorCode.NoError, default);
        _state = Http2ConnectionState.Draining;
    }

    /// <summary>The response's field block (encoded by the caller's <see cref="HpackEncoder"/>), split at the peer's frame size.</summary>
    public void SendHeaders(int streamId, ReadOnlySpan<byte> fieldBlock, bool endStream, IBufferWriter<byte> output)
    {
        ref var stream = ref FindOrThrow(streamId);
        stream.Machine.OnSent(Http2FrameType.Headers, endStream);
        Http2FrameWriter.WriteHeaders(output, streamId, fieldBlock, endStream, (int)_peerSettings.MaxFrameSize);
        AfterSend(ref stream);
    }

    /// <summary>
    /// As much of <paramref name="data"/> as the stream's and the connection's send windows and the peer's frame size
    /// allow, as one DATA frame; returns the bytes sent. END_STREAM goes only on a frame that sends the rest.
    /// </summary>
    public int SendData(int streamId, ReadOnlySpan<byte> data, bool endStream, IBufferWriter<byte> output)
    {
        ref var stream = ref FindOrThrow(streamId);
        int length = Math.Min(Math.Min(data.Length, (int)_peerSettings.MaxFrameSize), Math.Min(_connectionSend.Available, stream.Send.Available));
        bool ends = endStream && length == data.Length;
        if (length == 0 && !ends)
        {
            return 0;
        }

        stream.Machine.OnSent(Http2FrameType.Data, ends);
        Http2FrameWriter.WriteData(output, streamId, data[..length], ends);
        stream.Send.Consume(length);
        _connectionSend.Consume(length);
        _windowUpdatesWithoutData = 0;
        AfterSend(ref stream);
        return length;
    }

    /// <summary>The application ends a stream early (RST_STREAM, §6.4), e.g. CANCEL or INTERNAL_ERROR.</summary>
    public void ResetStream(int streamId, Http2ErrorCode code, IBufferWriter<byte> output)
    {
        int index = Find(streamId);
        if (index >= 0)
        {
            WriteReset(index, code, output);
        }
    }

    /// <summary>
    /// The application consumed <paramref name="length"/> bytes of a stream's DATA: the windows are given back with
    /// WINDOW_UPDATE once half of each is owed (<see cref="Http2ReceiveWindow.Release"/>). The stream may be gone.
    /// </summary>
    public void ConsumeData(int streamId, int length, IBufferWriter<byte> output)
    {
        ReleaseConnection(length, output);
        int index = Find(streamId);
        if (index >= 0 && _streams[index].Machine.State is (Http2StreamState.Open or Http2StreamState.HalfClosedLocal))
        {
            int increment = _streams[index].Receive.Release(length);
            if (increment > 0)
            {
                Http2FrameWriter.WriteWindowUpdate(output, streamId, increment);
            }
        }
    }

    private void OnFrame(in Http2Frame frame, IBufferWriter<byte> output)
    {
        if (_state == Http2ConnectionState.AwaitingSettings)
        {
            if (frame.Type != Http2FrameType.Settings || frame.IsAck)
            {
                // §3.4: the client preface is the magic and a SETTINGS frame.
                Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, $"{frame.Type} before the client's SETTINGS");
            }

            _state = Http2ConnectionState.Open;
        }

        switch (frame.Type)
        {
            case Http2FrameType.Data:
                OnData(frame, output);
                break;
            case Http2FrameType.Headers:
                OnHeaders(frame, output);
                break;
            case Http2FrameType.Continuation:
                OnContinuation(frame, output);
                break;
            case Http2FrameType.Priority:
                // §5.3.2: deprecated; the reader checked its size, and it is valid on any stream in any state.
                break;
            case Http2FrameType.RstStream:
                OnRstStream(frame);
                break;
            case Http2FrameType.Settings:
                OnSettings(frame, output);
                break;
            case Http2FrameType.PushPromise:
                // §8.4: only a server pushes; a client's PUSH_PROMISE is a connection error.
                Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, frame.StreamId, "PUSH_PROMISE from a client");
                break;
            case Http2FrameType.Ping:
                if (!frame.IsAck)
                {
                    CountControlFrame();
                    Http2FrameWriter.WritePing(output, frame.PingData, ack: true);
                }

                // An ACK answers a PING we sent; this connection sends none, so it is ignored.
                break;
            case Http2FrameType.GoAway:
                _handler.OnGoAway(frame.LastStreamId, frame.ErrorCode);
                break;
            case Http2FrameType.WindowUpdate:
                OnWindowUpdate(frame);
                break;
        }
    }

    private void OnSettings(in Http2Frame frame, IBufferWriter<byte> output)
    {
        if (frame.IsAck)
        {
            if (_awaitingSettingsAck)
            {
                // §6.5.3: our settings are in force now. The frame size, header table size and stream window we
                // advertise are the initial values the reader, decoder and windows already use; only the list size
                // and concurrency differ, and both are enforced from the start.
                _awaitingSettingsAck = false;
            }

            return;
        }

        if (frame.Payload.Length > 6L * _options.MaxSettingsPerFrame)
        {
            Http2Throw.ConnectionError(Http2ErrorCode.EnhanceYourCalm, $"SETTINGS with more than {_options.MaxSettingsPerFrame} pairs");
        }

        var settings = frame.GetSettings();
        while (settings.TryRead(out var setting))
        {
            if (setting.Id == Http2SettingId.InitialWindowSize)
            {
                // §6.9.2: every stream's send window moves by the difference.
                for (int i = 0; i < _streams.Length; i++)
                {
                    if (_streams[i].Id != 0)
                    {
                        _streams[i].Send.OnInitialWindowSizeChanged(_peerSettings.InitialWindowSize, setting.Value);
                    }
                }
            }

            _peerSettings.Apply(setting);
        }

        CountControlFrame();
        Http2FrameWriter.WriteSettingsAck(output);
    }

    private void OnHeaders(in Http2Frame frame, IBufferWriter<byte> output)
    {
        int id = frame.StreamId;
        if ((id & 1) == 0)
        {
            // §5.1.1: clients open odd streams; a server never pushes here, so an even one is no stream of ours either.
            Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, id, "HEADERS on an even stream");
        }

        _consecutiveEmptyData = 0;
        _blockStreamId = id;
        _blockEndStream = frame.EndStream;
        _blockContinuations = 0;
        if (_block.Add(frame))
        {
            OnFieldBlock(output);
        }
    }

    private void OnContinuation(in Http2Frame frame, IBufferWriter<byte> output)
    {
        if (_blockStreamId == 0)
        {
            // The reader lets CONTINUATION through only after an open block; PUSH_PROMISE blocks never get here.
            Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, frame.StreamId, "CONTINUATION without a field block");
        }

        if (++_blockContinuations > _options.MaxContinuationFrames)
        {
            Http2Throw.ConnectionError(Http2ErrorCode.EnhanceYourCalm, frame.StreamId, $"More than {_options.MaxContinuationFrames} CONTINUATION frames in one field block");
        }

        if (_block.Add(frame))
        {
            OnFieldBlock(output);
        }
    }

    /// <summary>A whole field block: always decoded (the HPACK state is the connection's, §4.3), then applied or refused.</summary>
    private void OnFieldBlock(IBufferWriter<byte> output)
    {
        int id = _blockStreamId;
        bool endStream = _blockEndStream;
        _blockStreamId = 0;

        int index = Find(id);
        if (index >= 0)
        {
            OnTrailers(index, endStream);
            return;
        }

        if (id <= _highestStreamId)
        {
            // Not a new stream: a closed one (or a lower id never used, implicitly closed by a higher one, §5.1.1).
            DecodeOnly(id);
            switch (ClosureOf(id))
            {
                case Http2StreamClosure.ResetSent:
                    // §5.1: sent before the peer saw our RST_STREAM (trailers in flight); ignored.
                    return;
                case Http2StreamClosure.ResetReceived:
                    Http2Throw.StreamError(Http2ErrorCode.StreamClosed, id, "HEADERS after the peer's RST_STREAM");
                    break;
                case Http2StreamClosure.EndStream:
                    Http2Throw.ConnectionError(Http2ErrorCode.StreamClosed, id, "HEADERS on a stream closed by END_STREAM");
                    break;
                default:
                    // §5.1.1: a new stream's identifier must be above every one the client used.
                    Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, id, $"New stream {id} not above the highest stream {_highestStreamId}");
                    break;
            }

            return;
        }

        _highestStreamId = id;
        if (id > _goAwayLastStreamId || _activeStreams >= _streams.Length)
        {
            // §6.8 (after our GOAWAY) and §5.1.2 (SETTINGS_MAX_CONCURRENT_STREAMS): refused before any processing,
            // so the client may retry it. The stream never enters the table.
            DecodeOnly(id);
            RememberClosed(id, Http2StreamClosure.ResetSent);
            CountControlFrame();
            Http2FrameWriter.WriteRstStream(output, id, Http2ErrorCode.RefusedStream);
            return;
        }

        index = Open(id);
        ref var stream = ref _streams[index];
        stream.Machine.OnReceived(Http2FrameType.Headers, endStream);
        var checker = new Http2RequestFieldChecker(_handler, id, trailers: false, _options.EnableConnectProtocol);
        _decoder.Decode(_block.Block, ref checker);
        checker.Complete();
        if (checker.Error is null && endStream && checker.ContentLength > 0)
        {
            Http2Throw.StreamError(Http2ErrorCode.ProtocolError, id, "content-length with no DATA (RFC 9113 §8.1.1)");
        }

        if (checker.Error is not null)
        {
            Http2Throw.StreamError(Http2ErrorCode.ProtocolError, id, checker.Error);
        }

        stream.ContentLength = checker.ContentLength;
        _handler.OnHeaders(id, isTrailers: false, endStream);

        if (id == int.MaxValue && _state == Http2ConnectionState.Open)
        {
            // §5.1.1: the client's identifiers are exhausted; say so, so that it opens a new connection for more.
            BeginGracefulShutdown(output);
        }
    }

    private void OnTrailers(int index, bool endStream)
    {
        ref var stream = ref _streams[index];
        int id = stream.Id;
        if (stream.Machine.State is not (Http2StreamState.Open or Http2StreamState.HalfClosedLocal))
        {
            // Half-closed (remote): the state machine names the error.
            DecodeOnly(id);
            stream.Machine.OnReceived(Http2FrameType.Headers, endStream);
            return;
        }

        var checker = new Http2RequestFieldChecker(_handler, id, trailers: true, _options.EnableConnectProtocol);
        _decoder.Decode(_block.Block, ref checker);
        stream.Machine.OnReceived(Http2FrameType.Headers, endStream);
        if (checker.Error is not null)
        {
            Http2Throw.StreamError(Http2ErrorCode.ProtocolError, id, checker.Error);
        }

        if (!endStream)
        {
            // §8.1: a second HEADERS is the trailers and ends the stream.
            Http2Throw.StreamError(Http2ErrorCode.ProtocolError, id, "Trailers without END_STREAM (RFC 9113 §8.1)");
        }

        CheckContentLength(ref stream, endStream: true);
        _handler.OnHeaders(id, isTrailers: true, endStream: true);
        FreeIfClosed(index);
    }

    private void DecodeOnly(int id)
    {
        var checker = new Http2RequestFieldChecker(null, id, trailers: false, _options.EnableConnectProtocol);
        _decoder.Decode(_block.Block, ref checker);
    }

    private void OnData(in Http2Frame frame, IBufferWriter<byte> output)
    {
        int id = frame.StreamId;
        int flow = frame.FlowControlledLength;
        _connectionReceive.OnData(flow);
        _undeliveredData = flow;

        int dataLength = (int)frame.Payload.Length;
        if (dataLength == 0 && !frame.EndStream)
        {
            if (++_consecutiveEmptyData > _options.MaxConsecutiveEmptyData)
            {
                Http2Throw.ConnectionError(Http2ErrorCode.EnhanceYourCalm, id, $"More than {_options.MaxConsecutiveEmptyData} empty DATA frames without END_STREAM in a row");
            }
        }
        else
        {
            _consecutiveEmptyData = 0;
        }

        int index = Find(id);
        if (index < 0)
        {
            OnUntrackedFrame(id, Http2FrameType.Data);
            ReleaseUndelivered(output);
            return;
        }

        ref var stream = ref _streams[index];
        if (stream.Machine.OnReceived(Http2FrameType.Data, frame.EndStream) == Http2FrameVerdict.Ignore)
        {
            ReleaseUndelivered(output);
            return;
        }

        stream.Receive.OnData(flow);
        stream.DataReceived += dataLength;
        CheckContentLength(ref stream, frame.EndStream);

        // Padding (and the Pad Length byte) is consumed now; the data when the application says so.
        int padding = flow - dataLength;
        _undeliveredData = 0;
        if (padding > 0)
        {
            ReleaseConnection(padding, output);
            int increment = stream.Receive.Release(padding);
            if (increment > 0 && !frame.EndStream)
            {
                Http2FrameWriter.WriteWindowUpdate(output, id, increment);
            }
        }

        _handler.OnData(id, frame.Payload, frame.EndStream);
        FreeIfClosed(index);
    }

    /// <summary>§8.1.1: the DATA received must add up to content-length; more at any point, or less at the end, is malformed.</summary>
    private static void CheckContentLength(ref Stream stream, bool endStream)
    {
        if (stream.ContentLength >= 0 && (stream.DataReceived > stream.ContentLength || (endStream && stream.DataReceived != stream.ContentLength)))
        {
            Http2Throw.StreamError(Http2ErrorCode.ProtocolError, stream.Id, "DATA does not match content-length (RFC 9113 §8.1.1)");
        }
    }

    private void OnRstStream(in Http2Frame frame)
    {
        int index = Find(frame.StreamId);
        if (index < 0)
        {
            OnUntrackedFrame(frame.StreamId, Http2FrameType.RstStream);
            return;
        }

        ref var stream = ref _streams[index];
        stream.Machine.OnReceived(Http2FrameType.RstStream, false);
        if (stream.Machine.State == Http2StreamState.Closed && stream.Machine.Closure == Http2StreamClosure.ResetReceived)
        {
            int id = stream.Id;
            Free(index);
            _handler.OnStreamReset(id, frame.ErrorCode, byPeer: true);

            // CVE-2023-44487: a stream the client opened and reset before we finished it cost work for nothing.
            if (++_resetsWithoutCompletion > _options.MaxResetsWithoutCompletion)
            {
                Http2Throw.ConnectionError(Http2ErrorCode.EnhanceYourCalm, id, $"More than {_options.MaxResetsWithoutCompletion} streams reset by the client before they completed");
            }
        }
    }

    private void OnWindowUpdate(in Http2Frame frame)
    {
        if (++_windowUpdatesWithoutData > _options.MaxWindowUpdatesWithoutData)
        {
            Http2Throw.ConnectionError(Http2ErrorCode.EnhanceYourCalm, frame.StreamId, $"More than {_options.MaxWindowUpdatesWithoutData} WINDOW_UPDATE frames without DATA sent");
        }

        if (frame.StreamId == 0)
        {
            _connectionSend.OnWindowUpdate(frame.WindowSizeIncrement);
            return;
        }

        int index = Find(frame.StreamId);
        if (index < 0)
        {
            OnUntrackedFrame(frame.StreamId, Http2FrameType.WindowUpdate);
            return;
        }

        ref var stream = ref _streams[index];
        if (stream.Machine.OnReceived(Http2FrameType.WindowUpdate, false) == Http2FrameVerdict.Process)
        {
            stream.Send.OnWindowUpdate(frame.WindowSizeIncrement);
        }
    }

    /// <summary>A frame on a stream not in the table: idle (above the highest id) or closed (§5.1).</summary>
    private void OnUntrackedFrame(int id, Http2FrameType type)
    {
        if (id > _highestStreamId || (id & 1) == 0)
        {
            // Idle: only HEADERS (and PRIORITY) may open or touch it; even streams would be ours, and we push none.
            Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, id, $"{type} on an idle stream");
        }

        if (type is Http2FrameType.WindowUpdate or Http2FrameType.RstStream)
        {
            // §5.1: may arrive for a while after either side closed the stream.
            return;
        }

        switch (ClosureOf(id))
        {
            case Http2StreamClosure.ResetSent:
                return;
            case Http2StreamClosure.ResetReceived:
                Http2Throw.StreamError(Http2ErrorCode.StreamClosed, id, $"{type} after the peer's RST_STREAM");
                break;
            default:
                // Closed by END_STREAM, or implicitly closed (§5.1.1): §5.1 allows the connection error.
                Http2Throw.ConnectionError(Http2ErrorCode.StreamClosed, id, $"{type} on a closed stream");
                break;
        }
    }

    private void OnStreamError(Http2Exception e, IBufferWriter<byte> output)
    {
        ReleaseUndelivered(output);
        int id = e.StreamId;
        int index = Find(id);
        if (index >= 0)
        {
            WriteReset(index, e.Code, output);
            _handler.OnStreamReset(id, e.Code, byPeer: false);
            return;
        }

        if (id > _highestStreamId)
        {
            // §6.4: no RST_STREAM for an idle stream; a frame that is wrong there is the connection's error (§5.1).
            Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, id, e.Message);
        }

        if (ClosureOf(id) != Http2StreamClosure.ResetSent)
        {
            RememberClosed(id, Http2StreamClosure.ResetSent);
            CountControlFrame();
            Http2FrameWriter.WriteRstStream(output, id, e.Code);
        }
    }

    private void WriteReset(int index, Http2ErrorCode code, IBufferWriter<byte> output)
    {
        ref var stream = ref _streams[index];
        int id = stream.Id;
        stream.Machine.OnSent(Http2FrameType.RstStream, false);
        CountControlFrame();
        Http2FrameWriter.WriteRstStream(output, id, code);
        Free(index);
    }

    private void Close(Http2Exception e, IBufferWriter<byte> output)
    {
        CloseError = e;
        int last = Math.Min(_highestStreamId, _goAwayLastStreamId);
        Http2FrameWriter.WriteGoAway(output, last, e.Code, default);
        _state = Http2ConnectionState.Closed;
    }

    private void CountControlFrame()
    {
        if (++_pendingControlFrames > _options.MaxPendingControlFrames)
        {
            Http2Throw.ConnectionError(Http2ErrorCode.EnhanceYourCalm, $"More than {_options.MaxPendingControlFrames} frames to answer while the output is not drained");
        }
    }

    private void ReleaseUndelivered(IBufferWriter<byte> output)
    {
        int length = _undeliveredData;
        _undeliveredData = 0;
        ReleaseConnection(length, output);
    }

    private void ReleaseConnection(int length, IBufferWriter<byte> output)
    {
        if (length > 0)
        {
            int increment = _connectionReceive.Release(length);
            if (increment > 0)
            {
                Http2FrameWriter.WriteWindowUpdate(output, 0, increment);
            }
        }
    }

    private void AfterSend(ref Stream stream) => FreeIfClosed(Find(stream.Id));

    /// <summary>
    /// Frees a stream both sides ended (our END_STREAM last, or the peer's after our response, from half-closed
    /// (local)): a completed stream earns back one reset of the rapid-reset balance.
    /// </summary>
    private void FreeIfClosed(int index)
    {
        if (index >= 0 && _streams[index].Machine.State == Http2StreamState.Closed)
        {
            if (_resetsWithoutCompletion > 0)
            {
                _resetsWithoutCompletion--;
            }

            Free(index);
        }
    }

    private int Open(int id)
    {
        for (int i = 0; i < _streams.Length; i++)
        {
            if (_streams[i].Id == 0)
            {
                _streams[i] = new Stream(id, (int)_peerSettings.InitialWindowSize, _options.InitialStreamWindowSize);
                _activeStreams++;
                return i;
            }
        }

        throw new UnreachableException("The stream table is sized by the concurrency limit checked before");
    }

    private void Free(int index)
    {
        RememberClosed(_streams[index].Id, _streams[index].Machine.Closure);
        _streams[index] = default;
        _activeStreams--;
    }

    /// <summary>A linear scan: the table holds at most SETTINGS_MAX_CONCURRENT_STREAMS (100) entries and is cache-resident.</summary>
    private int Find(int id)
    {
        if (id == 0)
        {
            return -1;
        }

        var streams = _streams;
        for (int i = 0; i < streams.Length; i++)
        {
            if (streams[i].Id == id)
            {
                return i;
            }
        }

        return -1;
    }

    private ref Stream FindOrThrow(int streamId)
    {
        int index = Find(streamId);
        if (index < 0)
        {
            throw new InvalidOperationException($"Stream {streamId} is not open");
        }

        return ref _streams[index];
    }

    private void RememberClosed(int id, Http2StreamClosure closure)
    {
        _closedIds[_closedNext] = id;
        _closedHow[_closedNext] = closure;
        _closedNext = (_closedNext + 1) % _closedIds.Length;
    }

    private Http2StreamClosure ClosureOf(int id)
    {
        for (int i = 0; i < _closedIds.Length; i++)
        {
            if (_closedIds[i] == id)
            {
                return _closedHow[i];
            }
        }

        return Http2StreamClosure.None;
    }

    private struct Stream
    {
        public Http2StreamStateMachine Machine;
        public Http2SendWindow Send;
        public Http2ReceiveWindow Receive;
        public long ContentLength;
        public long DataReceived;

        public Stream(int id, int sendWindow, int receiveWindow)
        {
            Machine = new Http2StreamStateMachine(id);
            Send = new Http2SendWindow(id, sendWindow);
            Receive = new Http2ReceiveWindow(id, receiveWindow);
            ContentLength = -1;
        }

        public readonly int Id => Machine.StreamId;
    }
}
