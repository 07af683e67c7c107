using LLHttp2.Frames;
using LLHttp2.Hpack;
using LLHttp2.Streams;

namespace LLHttp2.Connection;

/// <summary>
/// The client side of one HTTP/2 connection (RFC 9113) as an explicit state machine without sockets, threads or
/// timers, the mirror of <see cref="Http2ServerConnection"/>: <see cref="Http2Connection.Process"/> takes the server's
/// bytes and writes what the connection must answer (ACKs, RST_STREAM, WINDOW_UPDATE, GOAWAY) into the caller's
/// <see cref="IBufferWriter{T}"/>, and tells the application what happened through
/// <see cref="IHttp2ClientConnectionHandler"/>. What both sides share (output batching, errors, flow control, flood
/// limits) is <see cref="Http2Connection"/>'s; this class adds the client preface, the streams it opens (odd,
/// increasing, within the server's SETTINGS_MAX_CONCURRENT_STREAMS), request field blocks encoded by its own
/// <see cref="HpackEncoder"/>, PING for liveness, and the response checks of RFC 9113 §8.
/// <para>
/// A request: <see cref="TryOpenStream"/>, <see cref="BeginRequestHeaders"/> and <see cref="Http2FieldWriter.Add"/>
/// for each field, <see cref="SendRequestHeaders"/>, then <see cref="Http2Connection.SendData"/> as the windows allow
/// and, optionally, trailers (<see cref="BeginTrailers"/>, <see cref="SendTrailers"/>). Field blocks are encoded one at
/// a time, in the order they are sent (the encoder's table is the connection's, RFC 7541 §2.2), and a stream's
/// HEADERS goes out before the next stream is opened, so identifiers reach the server in increasing order (§5.1.1).
/// Nothing is allocated per frame or per request once the connection exists (the block buffer grows to the largest
/// request head and stays); only errors allocate their exception.
/// </para>
/// </summary>
public sealed class Http2ClientConnection : Http2Connection
{
    private readonly Http2ClientConnectionOptions _options;
    private readonly IHttp2ClientConnectionHandler _handler;
    private readonly HpackEncoder _encoder;
    private readonly ArrayBufferWriter<byte> _requestBlock = new(256);

    private long _nextStreamId = 1;

    // The stream opened whose HEADERS is not sent yet (0 when none), and the stream whose block is being encoded.
    private int _unsentStreamId;
    private int _encodingStreamId;
    private bool _encodingTrailers;

    // The server's SETTINGS_HEADER_TABLE_SIZE changed while a block was being encoded: applied once it is sent, so
    // one block is never encoded against two tables.
    private bool _tableSizeChanged;

    private bool _pingOutstanding;
    private ulong _pingData;

    public Http2ClientConnection(IHttp2ClientConnectionHandler handler, Http2ClientConnectionOptions? options = null)
        : base(options ??= new Http2ClientConnectionOptions(), Http2ConnectionState.AwaitingSettings)
    {
        _handler = handler ?? throw new ArgumentNullException(nameof(handler));
        _options = options;
        _encoder = new HpackEncoder(HpackEncoder.DefaultHeaderTableSize, options.MaxEncoderTableSize);
    }

    /// <summary>
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS (unlimited, 2^32-1, until its SETTINGS says otherwise, §6.5.2); a
    /// pool opens another connection when <see cref="CanOpenStream"/> is false for this reason.
    /// </summary>
    public uint PeerMaxConcurrentStreams => PeerSettingsInForce.MaxConcurrentStreams;

    /// <summary>The streams that may still be opened now: the smaller of the server's limit and our table's, less those active.</summary>
    public int AvailableStreams
    {
        get
        {
            if (!IsAcceptingStreams)
            {
                return 0;
            }

            long limit = Math.Min(Streams.Length, PeerSettingsInForce.MaxConcurrentStreams);
            return (int)Math.Clamp(Math.Min(limit - ActiveStreams, (int.MaxValue - _nextStreamId + 2) >> 1), 0, int.MaxValue);
        }
    }

    /// <summary>Whether <see cref="TryOpenStream"/> would succeed.</summary>
    public bool CanOpenStream => AvailableStreams > 0;

    /// <summary>The server sent GOAWAY: no stream may be opened on this connection any more.</summary>
    public bool IsGoAwayReceived { get; private set; }

    /// <summary>The lowest last-stream-id of the server's GOAWAY frames (int.MaxValue before any): streams above it were not processed.</summary>
    public int PeerGoAwayLastStreamId { get; private set; } = int.MaxValue;

    /// <summary>A PING of ours (<see cref="SendPing"/>) is not acknowledged yet; the caller's liveness timer asks.</summary>
    public bool IsAwaitingPingAck => _pingOutstanding;

    private bool IsAcceptingStreams
        => ConnectionState is Http2ConnectionState.AwaitingSettings or Http2ConnectionState.Open && !IsGoAwayReceived && _nextStreamId <= int.MaxValue;

    private protected override int GoAwayLastStreamId => 0; // §6.8: the last server-initiated stream processed; we accept none (no push).

    /// <summary>
    /// Allocates the next stream (odd, above every earlier one, §5.1.1) and its slot in the table; false when the
    /// server's concurrency limit or ours is reached, after a GOAWAY either way, or when identifiers are exhausted
    /// (then a new connection is needed). Its HEADERS must be sent before another stream is opened.
    /// </summary>
    public bool TryOpenStream(out int streamId)
    {
        if (_unsentStreamId != 0 && Find(_unsentStreamId) is int unsent and >= 0 && Streams[unsent].Machine.State == Http2StreamState.Idle)
        {
            throw new InvalidOperationException($"Stream {_unsentStreamId}'s request HEADERS are not sent yet; streams open in order (RFC 9113 §5.1.1)");
        }

        if (!CanOpenStream)
        {
            streamId = 0;
            return false;
        }

        streamId = (int)_nextStreamId;
        _nextStreamId += 2;
        HighestStreamId = streamId;
        _unsentStreamId = streamId;
        Streams[Open(streamId)].AwaitingHead = true;
        return true;
    }

    /// <summary>
    /// Starts the request's field block with its pseudo-headers (§8.3.1: :method, :scheme, :authority, :path, in this
    /// order; an empty :scheme, :authority or :path is left out, as CONNECT needs, §8.5); the caller adds the regular
    /// fields to the writer returned and sends the block with <see cref="SendRequestHeaders"/>. A block begun must be
    /// sent: its fields are already in the encoder's table.
    /// </summary>
    public Http2FieldWriter BeginRequestHeaders(int streamId, ReadOnlySpan<byte> method, ReadOnlySpan<byte> scheme, ReadOnlySpan<byte> authority, ReadOnlySpan<byte> path)
    {
        ref var stream = ref FindOrThrow(streamId);
        if (stream.Machine.State != Http2StreamState.Idle)
        {
            throw new InvalidOperationException($"Stream {streamId}'s request HEADERS were sent already");
        }

        BeginBlock(streamId, trailers: false);
        stream.IsHead = method.SequenceEqual("HEAD"u8);
        EncodePseudo(":method"u8, method);
        EncodePseudo(":scheme"u8, scheme);
        EncodePseudo(":authority"u8, authority);
        EncodePseudo(":path"u8, path);
        return new Http2FieldWriter(this, streamId);
    }

    /// <summary>Writes the request's HEADERS (and CONTINUATION frames beyond the server's frame size); <paramref name="endStream"/>: no body.</summary>
    public void SendRequestHeaders(ref Http2FieldWriter fields, bool endStream, IBufferWriter<byte> output)
        => SendBlock(ref fields, trailers: false, endStream, output);

    /// <summary>Starts the request's trailers (§8.1: a HEADERS frame with END_STREAM after the body, no pseudo-headers).</summary>
    public Http2FieldWriter BeginTrailers(int streamId)
    {
        FindOrThrow(streamId);
        BeginBlock(streamId, trailers: true);
        return new Http2FieldWriter(this, streamId);
    }

    /// <summary>Writes the trailers, which end the request.</summary>
    public void SendTrailers(ref Http2FieldWriter fields, IBufferWriter<byte> output)
        => SendBlock(ref fields, trailers: true, endStream: true, output);

    /// <summary>Cancels a request (RST_STREAM CANCEL, §8.7); a stream whose HEADERS were not sent is just released.</summary>
    public void ResetStream(int streamId, IBufferWriter<byte> output) => ResetStream(streamId, Http2ErrorCode.Cancel, output);

    /// <summary>
    /// §6.7: a PING for liveness; <see cref="IHttp2ClientConnectionHandler.OnPingAck"/> reports its ACK. One at a time:
    /// the caller's timer, armed now, closes the connection if <see cref="IsAwaitingPingAck"/> stays true.
    /// </summary>
    public void SendPing(ulong data, IBufferWriter<byte> output)
    {
        _pingOutstanding = true;
        _pingData = data;
        Http2FrameWriter.WritePing(output, data, ack: false);
    }

    internal void AddField(int streamId, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, HpackIndexing indexing)
    {
        RequireEncoding(streamId);
        long contentLength = -1;
        string? error = name.IsEmpty || name[0] == (byte)':'
            ? "Pseudo-headers are the connection's (RFC 9113 §8.3)"
            : Http2FieldRules.CheckSyntax(name, value) ?? Http2FieldRules.CheckRegular(name, value, ref contentLength);
        if (error is null && name.SequenceEqual("te"u8) && !value.SequenceEqual("trailers"u8))
        {
            error = "TE other than \"trailers\" (RFC 9113 §8.2.2)";
        }

        if (error is not null)
        {
            // A caller's bug: the server would refuse the request as malformed, and the block is half-encoded.
            Http2Throw.Argument(nameof(name), error);
        }

        _encoder.Encode(name, value, _requestBlock, indexing);
    }

    private protected override void WriteStart(IBufferWriter<byte> output)
    {
        // §3.4: the preface, then our SETTINGS; requests may follow at once, before the server's SETTINGS arrive.
        output.Write(Http2Preface.Client);
        Span<Http2Setting> settings =
        [
            new(Http2SettingId.EnablePush, 0),
            new(Http2SettingId.InitialWindowSize, (uint)_options.InitialStreamWindowSize),
            new(Http2SettingId.MaxHeaderListSize, (uint)_options.MaxHeaderListSize),
        ];
        Http2FrameWriter.WriteSettings(output, settings);
    }

    /// <summary>§6.8: a client's GOAWAY names the last server-initiated stream (none); its own streams go on.</summary>
    private protected override int BeginDraining() => 0;

    private protected override void OnPeerSettingsApplied()
    {
        if (_encodingStreamId != 0)
        {
            _tableSizeChanged = true;
            return;
        }

        _encoder.SetPeerHeaderTableSize(PeerSettingsInForce.HeaderTableSize);
    }

    private protected override void DeliverData(int streamId, ReadOnlySequence<byte> data, bool endStream) => _handler.OnData(streamId, data, endStream);

    private protected override void DeliverReset(int streamId, Http2ErrorCode code, bool byPeer) => _handler.OnStreamReset(streamId, code, byPeer);

    private protected override void OnPingAck(ulong data)
    {
        // An ACK of nothing we sent is ignored (§6.7 asks nothing of it); ours is reported once.
        if (_pingOutstanding && data == _pingData)
        {
            _pingOutstanding = false;
            _handler.OnPingAck(data);
        }
    }

    /// <summary>
    /// §6.8: streams above <paramref name="lastStreamId"/> were not processed; each leaves the table and is reported
    /// as reset with REFUSED_STREAM, so that the caller retries it on another connection.
    /// </summary>
    private protected override void OnGoAway(int lastStreamId, Http2ErrorCode code)
    {
        IsGoAwayReceived = true;
        PeerGoAwayLastStreamId = Math.Min(PeerGoAwayLastStreamId, lastStreamId);
        _handler.OnGoAway(lastStreamId, code);
        var streams = Streams;
        for (int i = 0; i < streams.Length; i++)
        {
            int id = streams[i].Id;
            if (id > PeerGoAwayLastStreamId)
            {
                // Remembered as reset by us: anything the server still sends on it is ignored.
                Free(i, Http2StreamClosure.ResetSent);
                _handler.OnStreamReset(id, Http2ErrorCode.RefusedStream, byPeer: true);
            }
        }
    }

    /// <summary>A response's HEADERS (informational, final, or trailers): always decoded (§4.3), then checked and applied.</summary>
    private protected override void OnFieldBlock(int id, bool endStream, IBufferWriter<byte> output)
    {
        int index = Find(id);
        if (index < 0)
        {
            OnUntrackedFieldBlock(id);
            return;
        }

        ref var stream = ref Streams[index];
        var state = stream.Machine.State;
        if (state == Http2StreamState.Idle)
        {
            // The stream is allocated but its request was not sent: the server cannot know it (§5.1, idle).
            Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, id, "HEADERS on a stream whose request was not sent");
        }

        if (state is not (Http2StreamState.Open or Http2StreamState.HalfClosedLocal))
        {
            // Half-closed (remote): the response ended; the state machine names the error.
            DecodeOnly(id);
            stream.Machine.OnReceived(Http2FrameType.Headers, endStream);
            return;
        }

        bool trailers = !stream.AwaitingHead;
        var checker = new Http2ResponseFieldChecker(_handler, id, trailers);
        Decoder.Decode(FieldBlock, ref checker);
        checker.Complete();
        stream.Machine.OnReceived(Http2FrameType.Headers, endStream);
        if (checker.Error is not null)
        {
            Http2Throw.StreamError(Http2ErrorCode.ProtocolError, id, checker.Error);
        }

        int status = checker.Status;
        if (trailers)
        {
            if (!endStream)
            {
                // §8.1: a HEADERS after the final response's is the trailers and ends the stream.
                Http2Throw.StreamError(Http2ErrorCode.ProtocolError, id, "Trailers without END_STREAM (RFC 9113 §8.1)");
            }

            CheckContentLength(ref stream, endStream: true);
        }
        else if (status < 200)
        {
            // §8.1: an informational head; the final one follows. §8.6: HTTP/2 has no 101 (Switching Protocols).
            if (endStream || status == 101)
            {
                Http2Throw.StreamError(Http2ErrorCode.ProtocolError, id, "An informational response with END_STREAM, or 101 (RFC 9113 §8.1, §8.6)");
            }
        }
        else
        {
            stream.AwaitingHead = false;

            // RFC 9110 §8.6: the content-length of a response to HEAD, or of a 304, describes a body not sent.
            stream.ContentLength = stream.IsHead || status == 304 ? -1 : checker.ContentLength;
            if (endStream && stream.ContentLength > 0)
            {
                Http2Throw.StreamError(Http2ErrorCode.ProtocolError, id, "content-length with no DATA (RFC 9113 §8.1.1)");
            }
        }

        _handler.OnResponseHeaders(id, trailers ? 0 : status, endStream);
        FreeIfClosed(index);
    }

    /// <summary>A field block on a stream not in the table: never opened (even, or above ours) or closed (§5.1).</summary>
    private void OnUntrackedFieldBlock(int id)
    {
        if (id > HighestStreamId)
        {
            // A response to no request: an idle stream gets HEADERS only from its opener, the client.
            Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, id, "HEADERS on a stream this client never opened");
        }

        DecodeOnly(id);
        if (!OnClosedStreamFieldBlock(id))
        {
            // Closed long ago (the ring forgot it): §5.1 allows the connection error for frames on a closed stream.
            Http2Throw.ConnectionError(Http2ErrorCode.StreamClosed, id, "HEADERS on a closed stream");
        }
    }

    private void DecodeOnly(int id)
    {
        var checker = new Http2ResponseFieldChecker(null, id, trailers: false);
        Decoder.Decode(FieldBlock, ref checker);
    }

    private void BeginBlock(int streamId, bool trailers)
    {
        if (_encodingStreamId != 0)
        {
            throw new InvalidOperationException($"The field block of stream {_encodingStreamId} is not sent yet; blocks are encoded one at a time (RFC 7541 §2.2)");
        }

        _encodingStreamId = streamId;
        _encodingTrailers = trailers;
        _requestBlock.ResetWrittenCount();
        _encoder.BeginBlock(_requestBlock);
    }

    private void EncodePseudo(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        if (!value.IsEmpty)
        {
            _encoder.Encode(name, value, _requestBlock);
        }
    }

    private void SendBlock(ref Http2FieldWriter fields, bool trailers, bool endStream, IBufferWriter<byte> output)
    {
        int streamId = fields.StreamId;
        RequireEncoding(streamId);
        if (_encodingTrailers != trailers)
        {
            throw new InvalidOperationException(trailers ? "The block was begun as request HEADERS" : "The block was begun as trailers");
        }

        ref var stream = ref FindOrThrow(streamId);
        stream.Machine.OnSent(Http2FrameType.Headers, endStream);
        Http2FrameWriter.WriteHeaders(output, streamId, _requestBlock.WrittenSpan, endStream, (int)PeerSettingsInForce.MaxFrameSize);
        _encodingStreamId = 0;
        fields = default;
        if (_tableSizeChanged)
        {
            _tableSizeChanged = false;
            _encoder.SetPeerHeaderTableSize(PeerSettingsInForce.HeaderTableSize);
        }

        FreeIfClosed(Find(streamId));
    }

    private void RequireEncoding(int streamId)
    {
        if (streamId == 0 || streamId != _encodingStreamId)
        {
            throw new InvalidOperationException($"No field block is being written for stream {streamId}");
        }
    }
}

/// <summary>
/// Adds the regular fields of a request's field block (or trailers) begun by
/// <see cref="Http2ClientConnection.BeginRequestHeaders"/> or <see cref="Http2ClientConnection.BeginTrailers"/>: each
/// is HPACK-encoded at once into the connection's block buffer, nothing allocated. Names are lowercase and no field is
/// connection-specific (RFC 9113 §8.2); a field that breaks the rules is an <see cref="ArgumentException"/>.
/// </summary>
public readonly ref struct Http2FieldWriter
{
    private readonly Http2ClientConnection? _connection;

    internal Http2FieldWriter(Http2ClientConnection connection, int streamId)
    {
        _connection = connection;
        StreamId = streamId;
    }

    public int StreamId { get; }

    /// <summary>One field; <paramref name="indexing"/> as <see cref="HpackEncoder.TryEncode"/> takes it (never indexed to forward a field received so, RFC 7541 §7.1.3).</summary>
    public void Add(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, HpackIndexing indexing = HpackIndexing.Auto)
    {
        if (_connection is null)
        {
            throw new InvalidOperationException("This field writer was not begun by a connection, or its block was sent");
        }

        _connection.AddField(StreamId, name, value, indexing);
    }
}
