using LLHttp2.Frames;
using LLHttp2.Hpack;
using LLHttp2.Streams;

namespace LLHttp2.Connection;

/// <summary>
/// The server side of one HTTP/2 connection (RFC 9113) as an explicit state machine without sockets, threads or
/// timers: <see cref="Http2Connection.Process"/> takes the bytes that arrived and writes the frames the connection
/// must send (its SETTINGS, ACKs, RST_STREAM, WINDOW_UPDATE, GOAWAY) into the caller's <see cref="IBufferWriter{T}"/>,
/// and tells the application what happened through <see cref="IHttp2ServerConnectionHandler"/>. What both sides share
/// (output batching, errors, flow control, flood limits) is <see cref="Http2Connection"/>'s; this class adds the
/// client preface, the streams the client opens (refused beyond SETTINGS_MAX_CONCURRENT_STREAMS or after our GOAWAY)
/// and the request checks of RFC 9113 §8. Nothing is allocated per frame or per request once the connection exists
/// (its stream table is sized by SETTINGS_MAX_CONCURRENT_STREAMS); only errors allocate their exception.
/// </summary>
public sealed class Http2ServerConnection : Http2Connection
{
    private readonly Http2ServerConnectionOptions _options;
    private readonly IHttp2ServerConnectionHandler _handler;

    private int _goAwayLastStreamId = int.MaxValue;
    private int _resetsWithoutCompletion;

    public Http2ServerConnection(IHttp2ServerConnectionHandler handler, Http2ServerConnectionOptions? options = null)
        : base(options ??= new Http2ServerConnectionOptions(), Http2ConnectionState.AwaitingPreface)
    {
        _handler = handler ?? throw new ArgumentNullException(nameof(handler));
        _options = options;
    }

    private protected override int GoAwayLastStreamId => Math.Min(HighestStreamId, _goAwayLastStreamId);

    /// <summary>The response's field block (encoded by the caller's <see cref="HpackEncoder"/>), split at the peer's frame size.</summary>
    public void SendHeaders(int streamId, ReadOnlySpan<byte> fieldBlock, bool endStream, IBufferWriter<byte> output)
    {
        ref var stream = ref FindOrThrow(streamId);
        stream.Machine.OnSent(Http2FrameType.Headers, endStream);
        Http2FrameWriter.WriteHeaders(output, streamId, fieldBlock, endStream, (int)PeerSettingsInForce.MaxFrameSize);
        FreeIfClosed(Find(streamId));
    }

    /// <summary>§3.4: the server's SETTINGS, which may be sent before the client preface arrives.</summary>
    private protected override void WriteStart(IBufferWriter<byte> output)
    {
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
    }

    /// <summary>
    /// §6.8: the GOAWAY's last stream is the highest the client opened; newer ones are refused (RST_STREAM
    /// REFUSED_STREAM) so the client retries them elsewhere.
    /// </summary>
    private protected override int BeginDraining() => _goAwayLastStreamId = HighestStreamId;

    private protected override bool ReadPreface(ref ReadOnlySequence<byte> input)
    {
        if (ConnectionState == Http2ConnectionState.AwaitingPreface)
        {
            if (!Http2Preface.TryRead(ref input))
            {
                return false;
            }

            ConnectionState = Http2ConnectionState.AwaitingSettings;
        }

        return true;
    }

    private protected override void OnGoAway(int lastStreamId, Http2ErrorCode code) => _handler.OnGoAway(lastStreamId, code);

    private protected override void DeliverData(int streamId, ReadOnlySequence<byte> data, bool endStream) => _handler.OnData(streamId, data, endStream);

    private protected override void DeliverReset(int streamId, Http2ErrorCode code, bool byPeer) => _handler.OnStreamReset(streamId, code, byPeer);

    private protected override void OnResetByPeer(int streamId)
    {
        // CVE-2023-44487: a stream the client opened and reset before we finished it cost work for nothing.
        if (++_resetsWithoutCompletion > _options.MaxResetsWithoutCompletion)
        {
            Http2Throw.ConnectionError(Http2ErrorCode.EnhanceYourCalm, streamId, $"More than {_options.MaxResetsWithoutCompletion} streams reset by the client before they completed");
        }
    }

    /// <summary>A completed stream earns back one reset of the rapid-reset balance.</summary>
    private protected override void OnStreamCompleted()
    {
        if (_resetsWithoutCompletion > 0)
        {
            _resetsWithoutCompletion--;
        }
    }

    /// <summary>A whole field block: always decoded (the HPACK state is the connection's, §4.3), then applied or refused.</summary>
    private protected override void OnFieldBlock(int id, bool endStream, IBufferWriter<byte> output)
    {
        int index = Find(id);
        if (index >= 0)
        {
            OnTrailers(index, endStream);
            return;
        }

        if (id <= HighestStreamId)
        {
            // Not a new stream: a closed one (or a lower id never used, implicitly closed by a higher one, §5.1.1).
            DecodeOnly(id);
            if (!OnClosedStreamFieldBlock(id))
            {
                // §5.1.1: a new stream's identifier must be above every one the client used.
                Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, id, $"New stream {id} not above the highest stream {HighestStreamId}");
            }

            return;
        }

        HighestStreamId = id;
        if (id > _goAwayLastStreamId || ActiveStreams >= Streams.Length)
        {
            // §6.8 (after our GOAWAY) and §5.1.2 (SETTINGS_MAX_CONCURRENT_STREAMS): refused before any processing,
            // so the client may retry it. The stream never enters the table.
            DecodeOnly(id);
            WriteUntrackedReset(id, Http2ErrorCode.RefusedStream, output);
            return;
        }

        index = Open(id);
        ref var stream = ref Streams[index];
        stream.Machine.OnReceived(Http2FrameType.Headers, endStream);
        var checker = new Http2RequestFieldChecker(_handler, id, trailers: false, _options.EnableConnectProtocol);
        Decoder.Decode(FieldBlock, ref checker);
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

        if (id == int.MaxValue && ConnectionState == Http2ConnectionState.Open)
        {
            // §5.1.1: the client's identifiers are exhausted; say so, so that it opens a new connection for more.
            BeginGracefulShutdown(output);
        }
    }

    private void OnTrailers(int index, bool endStream)
    {
        ref var stream = ref Streams[index];
        int id = stream.Id;
        if (stream.Machine.State is not (Http2StreamState.Open or Http2StreamState.HalfClosedLocal))
        {
            // Half-closed (remote): the state machine names the error.
            DecodeOnly(id);
            stream.Machine.OnReceived(Http2FrameType.Headers, endStream);
            return;
        }

        var checker = new Http2RequestFieldChecker(_handler, id, trailers: true, _options.EnableConnectProtocol);
        Decoder.Decode(FieldBlock, ref checker);
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
        Decoder.Decode(FieldBlock, ref checker);
    }
}
