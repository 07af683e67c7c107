namespace LLHttp2.Connection;

/// <summary>
/// What <see cref="Http2ServerConnection"/> tells the application, synchronously from
/// <see cref="Http2ServerConnection.Process"/>. Spans and sequences are valid only during the call. A handler must not
/// throw: the connection's state would be left half-way through a frame.
/// </summary>
public interface IHttp2ServerConnectionHandler
{
    /// <summary>
    /// One field of a request's field block (or trailers), pseudo-headers included, as decoded. The block is checked
    /// while it is decoded (RFC 9113 §8.1.1, §8.2, §8.3), so a field handed over may belong to a block that is refused
    /// later: <see cref="OnHeaders"/> confirms the block, <see cref="OnStreamReset"/> (not by the peer) discards it.
    /// </summary>
    void OnField(int streamId, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed);

    /// <summary>The block whose fields were just handed over is whole and valid; <paramref name="endStream"/>: no body follows.</summary>
    void OnHeaders(int streamId, bool isTrailers, bool endStream);

    /// <summary>
    /// Request body bytes (padding removed). The stream's and the connection's windows are given back only when the
    /// application calls <see cref="Http2ServerConnection.ConsumeData"/>; <paramref name="endStream"/> ends the body.
    /// </summary>
    void OnData(int streamId, ReadOnlySequence<byte> data, bool endStream);

    /// <summary>
    /// The stream ended abnormally: reset by the peer (<paramref name="byPeer"/>) or by this connection after a stream
    /// error it found (a malformed request, a content-length mismatch, a flow-control error of the stream).
    /// </summary>
    void OnStreamReset(int streamId, Http2ErrorCode code, bool byPeer);

    /// <summary>The peer sent GOAWAY: it will open no more streams, and processed none above <paramref name="lastStreamId"/>.</summary>
    void OnGoAway(int lastStreamId, Http2ErrorCode code);
}
