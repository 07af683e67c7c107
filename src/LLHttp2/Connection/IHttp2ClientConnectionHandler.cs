namespace LLHttp2.Connection;

/// <summary>
/// What <see cref="Http2ClientConnection"/> tells the application, synchronously from
/// <see cref="Http2Connection.Process"/>. Spans and sequences are valid only during the call. A handler must not throw:
/// the connection's state would be left half-way through a frame. A stream the server reset with REFUSED_STREAM, or
/// one above the last-stream-id of its GOAWAY (reported the same way), was not processed: its request may be retried
/// (RFC 9113 §8.7).
/// </summary>
public interface IHttp2ClientConnectionHandler
{
    /// <summary>
    /// One field of a response's field block (or trailers), :status included, as decoded. The block is checked while it
    /// is decoded (RFC 9113 §8.1.1, §8.2, §8.3.2), so a field handed over may belong to a block that is refused later:
    /// <see cref="OnResponseHeaders"/> confirms the block, <see cref="OnStreamReset"/> (not by the peer) discards it.
    /// </summary>
    void OnResponseField(int streamId, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed);

    /// <summary>
    /// The block whose fields were just handed over is whole and valid. <paramref name="status"/> is its :status: 1xx
    /// for an informational head (more HEADERS follow, §8.1), the final status, or 0 for the trailers (which end the
    /// stream). <paramref name="endStream"/>: no DATA follows.
    /// </summary>
    void OnResponseHeaders(int streamId, int status, bool endStream);

    /// <summary>
    /// Response body bytes (padding removed). The stream's and the connection's windows are given back only when the
    /// application calls <see cref="Http2Connection.ConsumeData"/>; <paramref name="endStream"/> ends the body.
    /// </summary>
    void OnData(int streamId, ReadOnlySequence<byte> data, bool endStream);

    /// <summary>
    /// The stream ended abnormally: reset by the server (<paramref name="byPeer"/>; REFUSED_STREAM: not processed, may
    /// be retried), refused by its GOAWAY (REFUSED_STREAM, by peer), or reset by this connection after a stream error
    /// it found (a malformed response, a content-length mismatch, a flow-control error of the stream).
    /// </summary>
    void OnStreamReset(int streamId, Http2ErrorCode code, bool byPeer);

    /// <summary>
    /// The server sent GOAWAY: no new stream may be opened here, and it processed none above
    /// <paramref name="lastStreamId"/> (those are then reported through <see cref="OnStreamReset"/> as REFUSED_STREAM).
    /// </summary>
    void OnGoAway(int lastStreamId, Http2ErrorCode code);

    /// <summary>The server acknowledged our <see cref="Http2ClientConnection.SendPing"/> carrying <paramref name="data"/>: it is alive.</summary>
    void OnPingAck(ulong data);
}
