namespace LLHttp2.Connection;

/// <summary>
/// What both sides of a connection advertise and the flood limits both enforce against their peer (a hostile client
/// for <see cref="Http2ServerConnection"/>, a hostile downstream for <see cref="Http2ClientConnection"/>). Each
/// default is a named constant with where its value comes from; the limits table of src/LLHttp2/README.md lists them.
/// </summary>
public abstract class Http2ConnectionOptions
{
    /// <summary>
    /// The stream table's size: SETTINGS_MAX_CONCURRENT_STREAMS a server advertises and enforces (a stream beyond it
    /// is refused with RST_STREAM REFUSED_STREAM, RFC 9113 §5.1.2), and the streams a client opens at most (fewer when
    /// the server allows fewer). 100, Kestrel's Http2Limits.MaxStreamsPerConnection default, and the value RFC 9113
    /// §6.5.2 recommends as the least a server allows ("no smaller than 100"), so that one of our clients can use
    /// all of what such a server offers.
    /// </summary>
    public const int DefaultMaxConcurrentStreams = 100;

    /// <summary>
    /// How long the caller waits for the peer's ACK of our SETTINGS before <see cref="Http2Connection.OnSettingsTimeout"/>
    /// (GOAWAY SETTINGS_TIMEOUT, RFC 9113 §6.5.3). Our own choice: RFC 9113 names no value; 10 s is long against any
    /// round trip, short against a peer that never answers. The library has no timer: the caller arms one after
    /// <see cref="Http2Connection.Start"/> and asks <see cref="Http2Connection.IsAwaitingSettingsAck"/>.
    /// </summary>
    public static readonly TimeSpan DefaultSettingsAckTimeout = TimeSpan.FromSeconds(10);

    /// <summary>
    /// CONTINUATION frames accepted after one HEADERS (CVE-2024-27316 class: many tiny or empty fragments cost the
    /// receiver work without adding bytes the block bound would catch): 8, nghttp2's documented default for
    /// nghttp2_option_set_max_continuations. More is a connection error ENHANCE_YOUR_CALM.
    /// </summary>
    public const int DefaultMaxContinuationFrames = 8;

    /// <summary>
    /// Frames this connection must answer (SETTINGS ACK, PING ACK, RST_STREAM) written since the caller last reported
    /// its output drained (<see cref="Http2Connection.OnOutputFlushed"/>), CVE-2019-9512/9514/9515: 1,000,
    /// nghttp2's documented default for nghttp2_option_set_max_outbound_ack (SETTINGS and PING ACKs; counting our
    /// RST_STREAM frames under the same bound is our choice). More is a connection error ENHANCE_YOUR_CALM.
    /// </summary>
    public const int DefaultMaxPendingControlFrames = 1000;

    /// <summary>
    /// Pairs in one SETTINGS frame: 32, nghttp2's documented default (nghttp2_option_set_max_settings). Every pair costs
    /// work and the frame is bounded only by the frame size. More is a connection error ENHANCE_YOUR_CALM.
    /// </summary>
    public const int DefaultMaxSettingsPerFrame = 32;

    /// <summary>
    /// Consecutive DATA frames without payload and without END_STREAM (CVE-2019-9518: frames that cost work and move
    /// nothing). Our own choice: 16; Netty bounds the same count (Http2EmptyDataFrameListener, ENHANCE_YOUR_CALM) but
    /// its default could not be verified here. A legitimate sender has no reason for more than one in a row.
    /// </summary>
    public const int DefaultMaxConsecutiveEmptyData = 16;

    /// <summary>
    /// WINDOW_UPDATE frames received since this endpoint last sent DATA (CVE-2019-9512..9518 family: frames that need
    /// no answer but cost work). Our own choice: 1,000, the same bound as the frames we must answer; a receiver has a
    /// reason for a WINDOW_UPDATE only after DATA it received.
    /// </summary>
    public const int DefaultMaxWindowUpdatesWithoutData = 1000;

    private protected Http2ConnectionOptions()
    {
    }

    public int MaxConcurrentStreams { get; init; } = DefaultMaxConcurrentStreams;

    /// <summary>SETTINGS_INITIAL_WINDOW_SIZE advertised; RFC 9113 §6.9.2's 65,535 by default, so no window moves on the ACK.</summary>
    public int InitialStreamWindowSize { get; init; } = (int)Frames.Http2Settings.InitialInitialWindowSize;

    /// <summary>The connection's receive window; above 65,535 a WINDOW_UPDATE on stream 0 follows our SETTINGS (§6.9.2).</summary>
    public int ConnectionWindowSize { get; init; } = (int)Frames.Http2Settings.InitialInitialWindowSize;

    /// <summary>
    /// SETTINGS_MAX_HEADER_LIST_SIZE advertised and the decoder's bound on a request's (server) or a response's
    /// (client) header list; the joined field block is bounded by the same number.
    /// </summary>
    public int MaxHeaderListSize { get; init; } = Hpack.HpackDecoder.DefaultMaxHeaderListSize;

    public TimeSpan SettingsAckTimeout { get; init; } = DefaultSettingsAckTimeout;

    public int MaxContinuationFrames { get; init; } = DefaultMaxContinuationFrames;

    public int MaxPendingControlFrames { get; init; } = DefaultMaxPendingControlFrames;

    public int MaxSettingsPerFrame { get; init; } = DefaultMaxSettingsPerFrame;

    public int MaxConsecutiveEmptyData { get; init; } = DefaultMaxConsecutiveEmptyData;

    public int MaxWindowUpdatesWithoutData { get; init; } = DefaultMaxWindowUpdatesWithoutData;
}
