namespace LLHttp;

/// <summary>Limits and timeouts of one destination. Immutable once a connection or pool uses it; share one instance.</summary>
public sealed class LLHttpOptions
{
    public static LLHttpOptions Default { get; } = new();

    /// <summary>
    /// Status line plus header fields, CRLFs included. Also bounds the trailer section of a chunked body.
    /// Matches SocketsHttpHandler.MaxResponseHeadersLength (64 KiB).
    /// </summary>
    public int MaxResponseHeadersLength { get; init; } = 64 * 1024;

    /// <summary>Header fields in one response head. Matches Kestrel's MaxRequestHeaderCount and Apache's LimitRequestFields (100).</summary>
    public int MaxResponseHeaderCount { get; init; } = 100;

    /// <summary>
    /// Request line plus header fields. Matches Kestrel's MaxRequestHeadersTotalSize (32 KiB): a Kestrel origin
    /// would refuse anything larger anyway.
    /// </summary>
    public int MaxRequestHeadLength { get; init; } = 32 * 1024;

    /// <summary>
    /// A body up to this size handed over at once is copied behind the head so both leave in one send. One page:
    /// copying 4 KiB costs far less than a second send syscall and a second TCP segment.
    /// </summary>
    public int MaxCoalescedBodyLength { get; init; } = 4 * 1024;

    /// <summary>
    /// Chunk-extension bytes per response body (extensions are skipped, so this only stops a peer from making the client
    /// spin on them). Matches hyper's CHUNKED_EXTENSIONS_LIMIT (16 KiB per body).
    /// </summary>
    public int MaxChunkExtensionsLength { get; init; } = 16 * 1024;

    /// <summary>Interim (1xx) responses before the final one. Ours: 100 and 103 each appear once in practice.</summary>
    public int MaxInformationalResponses { get; init; } = 8;

    /// <summary>Matches nginx proxy_connect_timeout (60 s). SocketsHttpHandler's default is infinite, too long for a proxy.</summary>
    public TimeSpan ConnectTimeout { get; init; } = TimeSpan.FromSeconds(60);

    /// <summary>From the end of the request head until a complete response head. Matches nginx proxy_read_timeout (60 s).</summary>
    public TimeSpan ResponseHeadTimeout { get; init; } = TimeSpan.FromSeconds(60);

    /// <summary>
    /// Longest wait of any single body receive or request send. Matches nginx proxy_read_timeout / proxy_send_timeout
    /// (60 s, "between two successive read operations").
    /// </summary>
    public TimeSpan BodyIdleTimeout { get; init; } = TimeSpan.FromSeconds(60);

    /// <summary>A pooled connection idle longer than this is closed. Matches SocketsHttpHandler.PooledConnectionIdleTimeout (1 min).</summary>
    public TimeSpan PooledConnectionIdleTimeout { get; init; } = TimeSpan.FromMinutes(1);

    /// <summary>
    /// Idle connections kept per destination; extra returns are closed. Ours: SocketsHttpHandler has no cap, but a
    /// burst should not pin thousands of sockets for a minute.
    /// </summary>
    public int MaxIdleConnections { get; init; } = 1024;

    /// <summary>
    /// Poll an idle connection before handing it out again (one non-blocking syscall), so a connection the origin
    /// closed while idle is dropped instead of failing the next request.
    /// </summary>
    public bool CheckIdleConnectionOnRent { get; init; } = true;

    /// <summary>
    /// The engine that carries the connections' sockets. Ours: the runtime's, which runs everywhere;
    /// <see cref="LLHttpSocketEngine.Epoll"/> (Linux x86-64) saves two system calls per exchange.
    /// </summary>
    public LLHttpSocketEngine SocketEngine { get; init; } = LLHttpSocketEngine.Runtime;

    /// <summary>
    /// SO_RCVBUF for each connection's socket, set before it connects; 0 (the default) leaves the kernel's receive
    /// buffer and its autotuning alone, as SocketsHttpHandler does. On Linux the kernel's starting buffer
    /// (net.ipv4.tcp_rmem, 128 KiB) advertises a window of about 62 KiB, and autotuning grows it only when more than
    /// a window arrives within one round trip, which one response at a time on a connection may never do: a response
    /// a little larger than the window then takes two round trips and costs both ends extra wake-ups. A set size
    /// fixes the window (the kernel doubles the value and caps it at twice net.core.rmem_max) and turns autotuning
    /// off for the socket, which limits a far origin's throughput to about the window per round trip.
    /// </summary>
    public int ReceiveBufferSize { get; init; }

    /// <summary>
    /// HTTP/2: how long the server may take to acknowledge our SETTINGS before the connection fails with GOAWAY
    /// SETTINGS_TIMEOUT (RFC 9113 §6.5.3 names no value). The codec's <c>Http2ConnectionOptions.DefaultSettingsAckTimeout</c>
    /// (10 s, our choice), the same bound LLRP's front end holds its clients to.
    /// </summary>
    public TimeSpan Http2SettingsAckTimeout { get; init; } = LLHttp2.Connection.Http2ConnectionOptions.DefaultSettingsAckTimeout;

    /// <summary>
    /// HTTP/2: streams opened at most on one connection, even when the server allows more. The codec's
    /// <c>Http2ConnectionOptions.DefaultMaxConcurrentStreams</c> (100, Kestrel's MaxStreamsPerConnection default); the
    /// server's SETTINGS_MAX_CONCURRENT_STREAMS lowers it.
    /// </summary>
    public int Http2MaxConcurrentStreams { get; init; } = LLHttp2.Connection.Http2ConnectionOptions.DefaultMaxConcurrentStreams;

    /// <summary>
    /// HTTP/2: how long <c>LLHttp2Connection.PingAsync</c> waits for the server's PING ACK before the connection is
    /// declared dead. Matches SocketsHttpHandler.KeepAlivePingTimeout (20 s).
    /// </summary>
    public TimeSpan Http2PingTimeout { get; init; } = TimeSpan.FromSeconds(20);

    /// <summary>Clock for idle eviction; replaceable in tests.</summary>
    public TimeProvider TimeProvider { get; init; } = TimeProvider.System;

    /// <summary>
    /// Where a connection rents its send and receive arrays for an exchange (it holds none while idle). The shared pool
    /// keeps only a few arrays of each size per core, so many exchanges in flight at once make rents miss and allocate;
    /// a caller that runs many at once passes a pool sized for them (LLRP does: ProxyBuffers).
    /// </summary>
    public ArrayPool<byte> BufferPool { get; init; } = ArrayPool<byte>.Shared;

    /// <summary>
    /// First receive buffer size; it grows up to <see cref="MaxResponseHeadersLength"/> for a large head.
    /// Matches SocketsHttpHandler's InitialReadBufferSize (4 KiB). Tests lower it to force buffer-boundary splits.
    /// </summary>
    internal int InitialReceiveBufferSize { get; init; } = 4 * 1024;

    internal void Validate()
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxResponseHeadersLength, 64);
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxResponseHeaderCount, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxRequestHeadLength, 64);
        ArgumentOutOfRangeException.ThrowIfNegative(MaxCoalescedBodyLength);
        ArgumentOutOfRangeException.ThrowIfNegative(MaxChunkExtensionsLength);
        ArgumentOutOfRangeException.ThrowIfNegative(MaxInformationalResponses);
        ArgumentOutOfRangeException.ThrowIfNegative(MaxIdleConnections);
        ArgumentOutOfRangeException.ThrowIfNegative(ReceiveBufferSize);
        ArgumentOutOfRangeException.ThrowIfLessThan(InitialReceiveBufferSize, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(Http2MaxConcurrentStreams, 1);
        if (!SocketEngine.IsSupported())
        {
            throw new PlatformNotSupportedException("LLHttp's epoll socket engine runs on Linux x86-64 only.");
        }
    }
}
