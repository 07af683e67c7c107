using LLHttp2.FlowControl;
using LLHttp2.Frames;
using LLHttp2.Hpack;
using LLHttp2.Streams;

namespace LLHttp2.Connection;

/// <summary>Where a connection is; it only moves forward.</summary>
public enum Http2ConnectionState : byte
{
    /// <summary>A server waiting for the 24 bytes of the client preface (RFC 9113 §3.4).</summary>
    AwaitingPreface,
    /// <summary>The next frame must be the peer's SETTINGS (§3.4): the client's after its preface, or the server's first frame.</summary>
    AwaitingSettings,
    Open,
    /// <summary>This endpoint sent a graceful GOAWAY: streams up to its last-stream-id go on, no new ones.</summary>
    Draining,
    /// <summary>A GOAWAY with an error was written (see <see cref="Http2Connection.CloseError"/>); nothing more is read.</summary>
    Closed,
}

/// <summary>
/// What both sides of an HTTP/2 connection share (RFC 9113): reading frames, the SETTINGS exchange and its ACK, PING
/// answers, flow-control windows both ways, the stream table and the ring of closed streams, field blocks joined and
/// bounded, the flood limits, RST_STREAM for stream errors and GOAWAY for connection errors.
/// <see cref="Http2ServerConnection"/> and <see cref="Http2ClientConnection"/> add what differs: the preface, the
/// streams each side opens, and the checks of requests or responses. No sockets, threads or timers; nothing is
/// allocated per frame or per request once the connection exists; only errors allocate their exception.
/// <para>
/// Output batching: nothing is flushed here. The caller feeds what one read returned to <see cref="Process"/>, then
/// flushes the writer once for the whole pass (and once after its own sends), and calls <see cref="OnOutputFlushed"/>
/// when the transport has taken the bytes: the bound on frames this connection must answer
/// (<see cref="Http2ConnectionOptions.MaxPendingControlFrames"/>) counts what was written since then.
/// </para>
/// <para>
/// Errors: a stream error (§5.4.2) writes RST_STREAM and reading goes on; a connection error (§5.4.1) writes GOAWAY
/// and the state becomes <see cref="Http2ConnectionState.Closed"/>: the caller flushes and closes the transport.
/// </para>
/// </summary>
public abstract class Http2Connection
{
    private readonly Http2ConnectionOptions _options;
    private readonly Http2FrameReader _reader = new();
    private readonly Http2FieldBlockBuffer _block;

    // Streams closed lately and how (a ring of twice the table's size): what may still arrive on them depends on it
    // (§5.1, "closed"). A stream this endpoint reset gets the peer's frames in flight ignored. An id below the highest
    // that the ring does not hold is taken as never used (implicitly closed, §5.1.1).
    private readonly int[] _closedIds;
    private readonly Http2StreamClosure[] _closedHow;
    private int _closedNext;

    private bool _started;
    private bool _awaitingSettingsAck;
    private Http2SendWindow _connectionSend = new(0, (int)Http2Settings.InitialInitialWindowSize);
    private Http2ReceiveWindow _connectionReceive = new(0, (int)Http2Settings.InitialInitialWindowSize);

    // The field block being joined: its stream, END_STREAM of its HEADERS, and the CONTINUATION frames so far.
    private int _blockStreamId;
    private bool _blockEndStream;
    private int _blockContinuations;

    // Flood counters (Http2ConnectionOptions names each limit and its source).
    private int _pendingControlFrames;
    private int _consecutiveEmptyData;
    private int _windowUpdatesWithoutData;

    // Connection-window bytes of the DATA frame being processed not yet delivered to the application: given back if a
    // stream error drops the frame, so the connection's window does not leak.
    private int _undeliveredData;

    private protected Http2Connection(Http2ConnectionOptions options, Http2ConnectionState initialState)
    {
        _options = options;
        if (_options.MaxConcurrentStreams < 1)
        {
            Http2Throw.Argument(nameof(options), "MaxConcurrentStreams must allow one stream");
        }

        _block = new Http2FieldBlockBuffer(_options.MaxHeaderListSize);
        Decoder = new HpackDecoder(HpackDecoder.DefaultHeaderTableSize, _options.MaxHeaderListSize);
        Streams = new Stream[_options.MaxConcurrentStreams];
        _closedIds = new int[2 * _options.MaxConcurrentStreams];
        _closedHow = new Http2StreamClosure[_closedIds.Length];
        ConnectionState = initialState;
    }

    public Http2ConnectionState State => ConnectionState;

    /// <summary>The connection error that closed the connection (the GOAWAY written carries its code), null otherwise.</summary>
    public Http2Exception? CloseError { get; private set; }

    /// <summary>
    /// True from <see cref="Start"/> until the peer acknowledges our SETTINGS. The caller's timer, armed for
    /// <see cref="Http2ConnectionOptions.SettingsAckTimeout"/>, calls <see cref="OnSettingsTimeout"/> if it is still
    /// true; the library keeps no time itself.
    /// </summary>
    public bool IsAwaitingSettingsAck => _awaitingSettingsAck;

    /// <summary>The peer's settings in force (SETTINGS_MAX_FRAME_SIZE for what we send, its header table size for the encoder).</summary>
    public Http2Settings PeerSettings => PeerSettingsInForce;

    /// <summary>Streams in the table (open, half-closed, or opened by this client and not yet sent).</summary>
    public int ActiveStreams { get; private set; }

    /// <summary>Draining and no stream left: the caller may close the transport.</summary>
    public bool IsDrained => ConnectionState == Http2ConnectionState.Draining && ActiveStreams == 0;

    private protected Http2ConnectionState ConnectionState { get; set; }

    private protected Http2Settings PeerSettingsInForce = Http2Settings.Initial;

    private protected HpackDecoder Decoder { get; }

    private protected Stream[] Streams { get; }

    /// <summary>The highest stream the client opened (or, on a server, tried to), 0 before any.</summary>
    public int HighestStreamId { get; private protected set; }

    /// <summary>The last-stream-id of a GOAWAY this endpoint writes for a connection error.</summary>
    private protected abstract int GoAwayLastStreamId { get; }

    /// <summary>
    /// §3.4: this side's SETTINGS (after the client preface on a client), the first frame it sends, and a
    /// WINDOW_UPDATE on stream 0 when the connection window is larger than 65,535. <see cref="Process"/> calls it if
    /// the caller did not.
    /// </summary>
    public void Start(IBufferWriter<byte> output)
    {
        if (_started)
        {
            return;
        }

        _started = true;
        WriteStart(output);
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
        while (ConnectionState != Http2ConnectionState.Closed)
        {
            try
            {
                if (!ReadPreface(ref input) || !_reader.TryReadFrame(ref input, out var frame))
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

        return ConnectionState;
    }

    /// <summary>The caller's output is drained (the transport took the bytes): the answered-frames count starts over.</summary>
    public void OnOutputFlushed() => _pendingControlFrames = 0;

    /// <summary>The caller's timer fired: if our SETTINGS are still unacknowledged, GOAWAY SETTINGS_TIMEOUT (§6.5.3).</summary>
    public void OnSettingsTimeout(IBufferWriter<byte> output)
    {
        if (_awaitingSettingsAck && ConnectionState != Http2ConnectionState.Closed)
        {
            Close(new Http2Exception(Http2ErrorCode.SettingsTimeout, true, 0, "SETTINGS not acknowledged in time"), output);
        }
    }

    /// <summary>
    /// As much of <paramref name="data"/> as the stream's and the connection's send windows and the peer's frame size
    /// allow, as one DATA frame; returns the bytes sent (0: wait for a WINDOW_UPDATE). END_STREAM goes only on a frame
    /// that sends the rest.
    /// </summary>
    public int SendData(int streamId, ReadOnlySpan<byte> data, bool endStream, IBufferWriter<byte> output)
    {
        ref var stream = ref FindOrThrow(streamId);
        int length = Math.Min(Math.Min(data.Length, (int)PeerSettingsInForce.MaxFrameSize), Math.Min(_connectionSend.Available, stream.Send.Available));
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
        FreeIfClosed(Find(streamId));
        return length;
    }

    /// <summary>
    /// What may be sent on a stream now (the smaller of its and the connection's send window), 0 for a stream not in
    /// the table.
    /// </summary>
    public int GetSendWindow(int streamId)
    {
        int index = Find(streamId);
        return index < 0 ? 0 : Math.Min(_connectionSend.Available, Streams[index].Send.Available);
    }

    /// <summary>The application ends a stream early (RST_STREAM, §6.4), e.g. CANCEL or INTERNAL_ERROR.</summary>
    public void ResetStream(int streamId, Http2ErrorCode code, IBufferWriter<byte> output)
    {
        int index = Find(streamId);
        if (index < 0)
        {
            return;
        }

        if (Streams[index].Machine.State == Http2StreamState.Idle)
        {
            // A client's stream never sent: nothing to tell the peer (§6.4: no RST_STREAM on an idle stream).
            Free(index, Http2StreamClosure.ResetSent);
            return;
        }

        WriteReset(index, code, output);
    }

    /// <summary>
    /// The application consumed <paramref name="length"/> bytes of a stream's DATA: the windows are given back with
    /// WINDOW_UPDATE once half of each is owed (<see cref="Http2ReceiveWindow.Release"/>). The stream may be gone.
    /// </summary>
    public void ConsumeData(int streamId, int length, IBufferWriter<byte> output)
    {
        ReleaseConnection(length, output);
        int index = Find(streamId);
        if (index >= 0 && Streams[index].Machine.State is (Http2StreamState.Open or Http2StreamState.HalfClosedLocal))
        {
            int increment = Streams[index].Receive.Release(length);
            if (increment > 0)
            {
                Http2FrameWriter.WriteWindowUpdate(output, streamId, increment);
            }
        }
    }

    /// <summary>
    /// §6.8 graceful shutdown: GOAWAY NO_ERROR (its last-stream-id from <see cref="BeginDraining"/>); streams up to it
    /// go on, no new ones.
    /// </summary>
    public void BeginGracefulShutdown(IBufferWriter<byte> output)
    {
        if (ConnectionState is Http2ConnectionState.Closed or Http2ConnectionState.Draining)
        {
            return;
        }

        Http2FrameWriter.WriteGoAway(output, BeginDraining(), Http2ErrorCode.NoError, default);
        ConnectionState = Http2ConnectionState.Draining;
    }

    /// <summary>Writes what this side sends first (§3.4).</summary>
    private protected abstract void WriteStart(IBufferWriter<byte> output);

    /// <summary>The last-stream-id of a graceful GOAWAY, and what the side does when draining starts.</summary>
    private protected abstract int BeginDraining();

    /// <summary>A server reads the client preface before any frame; false while it has not all arrived.</summary>
    private protected virtual bool ReadPreface(ref ReadOnlySequence<byte> input) => true;

    /// <summary>A whole field block (<see cref="FieldBlock"/>) for <paramref name="streamId"/> arrived.</summary>
    private protected abstract void OnFieldBlock(int streamId, bool endStream, IBufferWriter<byte> output);

    /// <summary>DATA of a stream to the application's handler.</summary>
    private protected abstract void DeliverData(int streamId, ReadOnlySequence<byte> data, bool endStream);

    /// <summary>A stream reset (by the peer, or by us after a stream error) to the application's handler.</summary>
    private protected abstract void DeliverReset(int streamId, Http2ErrorCode code, bool byPeer);

    /// <summary>The peer's GOAWAY (§6.8).</summary>
    private protected abstract void OnGoAway(int lastStreamId, Http2ErrorCode code);

    /// <summary>A PING ACK: the answer to a PING of ours.</summary>
    private protected virtual void OnPingAck(ulong data)
    {
    }

    /// <summary>The peer's SETTINGS were applied (<see cref="PeerSettingsInForce"/>).</summary>
    private protected virtual void OnPeerSettingsApplied()
    {
    }

    /// <summary>The peer reset a stream (RST_STREAM) before this endpoint finished it.</summary>
    private protected virtual void OnResetByPeer(int streamId)
    {
    }

    /// <summary>A stream both sides ended normally left the table.</summary>
    private protected virtual void OnStreamCompleted()
    {
    }

    private protected ReadOnlySpan<byte> FieldBlock => _block.Block;

    private void OnFrame(in Http2Frame frame, IBufferWriter<byte> output)
    {
        if (ConnectionState == Http2ConnectionState.AwaitingSettings)
        {
            if (frame.Type != Http2FrameType.Settings || frame.IsAck)
            {
                // §3.4: each side's preface ends with (the client) or is (the server) a SETTINGS frame.
                Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, $"{frame.Type} before the peer's SETTINGS");
            }

            ConnectionState = Http2ConnectionState.Open;
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
                // §8.4: only a server pushes, and only to a client that did not send SETTINGS_ENABLE_PUSH 0 (§6.5.2);
                // both sides here refuse push, so a PUSH_PROMISE is a connection error.
                Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, frame.StreamId, "PUSH_PROMISE, which this endpoint does not accept");
                break;
            case Http2FrameType.Ping:
                if (!frame.IsAck)
                {
                    CountControlFrame();
                    Http2FrameWriter.WritePing(output, frame.PingData, ack: true);
                }
                else
                {
                    OnPingAck(frame.PingData);
                }

                break;
            case Http2FrameType.GoAway:
                OnGoAway(frame.LastStreamId, frame.ErrorCode);
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
                for (int i = 0; i < Streams.Length; i++)
                {
                    if (Streams[i].Id != 0)
                    {
                        Streams[i].Send.OnInitialWindowSizeChanged(PeerSettingsInForce.InitialWindowSize, setting.Value);
                    }
                }
            }

            PeerSettingsInForce.Apply(setting);
        }

        OnPeerSettingsApplied();
        CountControlFrame();
        Http2FrameWriter.WriteSettingsAck(output);
    }

    private void OnHeaders(in Http2Frame frame, IBufferWriter<byte> output)
    {
        int id = frame.StreamId;
        if ((id & 1) == 0)
        {
            // §5.1.1: clients open odd streams; even ones would be pushed, and neither side here accepts push.
            Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, id, "HEADERS on an even stream");
        }

        _consecutiveEmptyData = 0;
        _blockStreamId = id;
        _blockEndStream = frame.EndStream;
        _blockContinuations = 0;
        if (_block.Add(frame))
        {
            EndFieldBlock(output);
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
            EndFieldBlock(output);
        }
    }

    /// <summary>A whole field block: always decoded by the side (the HPACK state is the connection's, §4.3), then applied or refused.</summary>
    private void EndFieldBlock(IBufferWriter<byte> output)
    {
        int id = _blockStreamId;
        _blockStreamId = 0;
        OnFieldBlock(id, _blockEndStream, output);
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

        ref var stream = ref Streams[index];
        if (stream.Machine.OnReceived(Http2FrameType.Data, frame.EndStream) == Http2FrameVerdict.Ignore)
        {
            ReleaseUndelivered(output);
            return;
        }

        stream.Receive.OnData(flow);
        if (stream.AwaitingHead)
        {
            // §8.1: a response's DATA comes after its final (non-1xx) HEADERS.
            Http2Throw.StreamError(Http2ErrorCode.ProtocolError, id, "DATA before the response's HEADERS (RFC 9113 §8.1)");
        }

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

        DeliverData(id, frame.Payload, frame.EndStream);
        FreeIfClosed(index);
    }

    /// <summary>§8.1.1: the DATA received must add up to content-length; more at any point, or less at the end, is malformed.</summary>
    private protected static void CheckContentLength(ref Stream stream, bool endStream)
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

        ref var stream = ref Streams[index];
        stream.Machine.OnReceived(Http2FrameType.RstStream, false);
        if (stream.Machine.State == Http2StreamState.Closed && stream.Machine.Closure == Http2StreamClosure.ResetReceived)
        {
            int id = stream.Id;
            Free(index);
            DeliverReset(id, frame.ErrorCode, byPeer: true);
            OnResetByPeer(id);
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

        ref var stream = ref Streams[index];
        if (stream.Machine.OnReceived(Http2FrameType.WindowUpdate, false) == Http2FrameVerdict.Process)
        {
            stream.Send.OnWindowUpdate(frame.WindowSizeIncrement);
        }
    }

    /// <summary>A frame on a stream not in the table: idle (above the highest id, or even) or closed (§5.1).</summary>
    private protected void OnUntrackedFrame(int id, Http2FrameType type)
    {
        if (id > HighestStreamId || (id & 1) == 0)
        {
            // Idle: only HEADERS (and PRIORITY) may open or touch it; even streams would be pushed, and neither side pushes.
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

    /// <summary>
    /// A field block (already decoded) on a stream that left the table (§5.1, closed): ignored after our RST_STREAM,
    /// a stream error STREAM_CLOSED after the peer's, a connection error STREAM_CLOSED after both END_STREAMs. False
    /// when the ring does not know the stream (never used, or closed long ago): the side decides.
    /// </summary>
    private protected bool OnClosedStreamFieldBlock(int id)
    {
        switch (ClosureOf(id))
        {
            case Http2StreamClosure.ResetSent:
                // §5.1: sent before the peer saw our RST_STREAM (trailers in flight); ignored.
                return true;
            case Http2StreamClosure.ResetReceived:
                Http2Throw.StreamError(Http2ErrorCode.StreamClosed, id, "HEADERS after the peer's RST_STREAM");
                break;
            case Http2StreamClosure.EndStream:
                Http2Throw.ConnectionError(Http2ErrorCode.StreamClosed, id, "HEADERS on a stream closed by END_STREAM");
                break;
        }

        return false;
    }

    private void OnStreamError(Http2Exception e, IBufferWriter<byte> output)
    {
        ReleaseUndelivered(output);
        int id = e.StreamId;
        int index = Find(id);
        if (index >= 0)
        {
            WriteReset(index, e.Code, output);
            DeliverReset(id, e.Code, byPeer: false);
            return;
        }

        if (id > HighestStreamId)
        {
            // §6.4: no RST_STREAM for an idle stream; a frame that is wrong there is the connection's error (§5.1).
            Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, id, e.Message);
        }

        if (ClosureOf(id) != Http2StreamClosure.ResetSent)
        {
            WriteUntrackedReset(id, e.Code, output);
        }
    }

    /// <summary>RST_STREAM on a stream not in the table (refused, or closed), remembered as reset by us.</summary>
    private protected void WriteUntrackedReset(int id, Http2ErrorCode code, IBufferWriter<byte> output)
    {
        RememberClosed(id, Http2StreamClosure.ResetSent);
        CountControlFrame();
        Http2FrameWriter.WriteRstStream(output, id, code);
    }

    private void WriteReset(int index, Http2ErrorCode code, IBufferWriter<byte> output)
    {
        ref var stream = ref Streams[index];
        int id = stream.Id;
        stream.Machine.OnSent(Http2FrameType.RstStream, false);
        CountControlFrame();
        Http2FrameWriter.WriteRstStream(output, id, code);
        Free(index);
    }

    private void Close(Http2Exception e, IBufferWriter<byte> output)
    {
        CloseError = e;
        Http2FrameWriter.WriteGoAway(output, GoAwayLastStreamId, e.Code, default);
        ConnectionState = Http2ConnectionState.Closed;
    }

    private protected void CountControlFrame()
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

    /// <summary>Frees a stream both sides ended (the last END_STREAM either way): a completed stream.</summary>
    private protected void FreeIfClosed(int index)
    {
        if (index >= 0 && Streams[index].Machine.State == Http2StreamState.Closed)
        {
            OnStreamCompleted();
            Free(index);
        }
    }

    private protected int Open(int id)
    {
        var streams = Streams;
        for (int i = 0; i < streams.Length; i++)
        {
            if (streams[i].Id == 0)
            {
                streams[i] = new Stream(id, (int)PeerSettingsInForce.InitialWindowSize, _options.InitialStreamWindowSize);
                ActiveStreams++;
                return i;
            }
        }

        throw new UnreachableException("The stream table is sized by the concurrency limit checked before");
    }

    private protected void Free(int index) => Free(index, Streams[index].Machine.Closure);

    private protected void Free(int index, Http2StreamClosure closure)
    {
        RememberClosed(Streams[index].Id, closure);
        Streams[index] = default;
        ActiveStreams--;
    }

    /// <summary>A linear scan: the table holds at most SETTINGS_MAX_CONCURRENT_STREAMS (100) entries and is cache-resident.</summary>
    private protected int Find(int id)
    {
        if (id == 0)
        {
            return -1;
        }

        var streams = Streams;
        for (int i = 0; i < streams.Length; i++)
        {
            if (streams[i].Id == id)
            {
                return i;
            }
        }

        return -1;
    }

    private protected ref Stream FindOrThrow(int streamId)
    {
        int index = Find(streamId);
        if (index < 0)
        {
            throw new InvalidOperationException($"Stream {streamId} is not open");
        }

        return ref Streams[index];
    }

    private void RememberClosed(int id, Http2StreamClosure closure)
    {
        _closedIds[_closedNext] = id;
        _closedHow[_closedNext] = closure;
        _closedNext = (_closedNext + 1) % _closedIds.Length;
    }

    private protected Http2StreamClosure ClosureOf(int id)
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

    private protected struct Stream
    {
        public Http2StreamStateMachine Machine;
        public Http2SendWindow Send;
        public Http2ReceiveWindow Receive;
        public long ContentLength;
        public long DataReceived;

        /// <summary>A client's stream before its final response HEADERS: DATA is malformed (§8.1).</summary>
        public bool AwaitingHead;

        /// <summary>A client's request was HEAD: a response's content-length describes no DATA (RFC 9110 §8.6).</summary>
        public bool IsHead;

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
