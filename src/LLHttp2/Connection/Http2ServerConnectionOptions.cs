namespace LLHttp2.Connection;

/// <summary>
/// The settings a <see cref="Http2ServerConnection"/> advertises and the flood limits it enforces: those of every
/// connection (<see cref="Http2ConnectionOptions"/>) and the server's own, each a named default with where its value
/// comes from.
/// </summary>
public sealed class Http2ServerConnectionOptions : Http2ConnectionOptions
{
    /// <summary>
    /// Rapid reset (CVE-2023-44487): streams the peer reset before this endpoint finished them, less the streams that
    /// completed normally (each completion earns one back, so the window is the recent balance, without a clock).
    /// Our own choice: 100, the concurrency limit, so a client may cancel a whole window of requests once but not keep
    /// opening and cancelling. nghttp2 uses a token bucket (nghttp2_option_set_stream_reset_rate_limit) that needs a
    /// clock, which this library does not have. More is GOAWAY ENHANCE_YOUR_CALM.
    /// </summary>
    public const int DefaultMaxResetsWithoutCompletion = 100;

    /// <summary>
    /// SETTINGS_ENABLE_CONNECT_PROTOCOL = 1 advertised (RFC 8441 §3), and so a request with :protocol accepted as an
    /// extended CONNECT (§4); true by default. Without it :protocol is an unknown pseudo-header, a malformed request.
    /// The application decides what it does with each protocol named.
    /// </summary>
    public bool EnableConnectProtocol { get; init; } = true;

    public int MaxResetsWithoutCompletion { get; init; } = DefaultMaxResetsWithoutCompletion;
}
