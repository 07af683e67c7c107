using LLHttp;
using LLHttp.Pooling;
using LLRP.Balancing;
using LLRP.Buffers;
using LLRP.Exchanges;

namespace LLRP.Forwarding;

/// <summary>
/// The llhttp variant's connections: by default one downstream connection per inbound connection (the original
/// LLRP's affinity) while that connection is busy, given to the downstream's shared idle pool when it goes idle; or,
/// with shareClients or a per-request loadBalancing policy, that pool for every exchange.
/// </summary>
internal sealed class LLHttpForwarderFactory : IForwarderFactory
{
    /// <summary>The options every downstream connection is opened with (the downstream* options, as LLHttp takes them).</summary>
    internal LLHttpOptions ClientOptions { get; }

    private readonly Dictionary<Destination, LLHttpConnectionPool> _pools;
    private readonly bool _shared;
    private readonly TimeSpan _shareAfter;

    public LLHttpForwarderFactory(ProxyOptions options, DownstreamSet downstreams)
    {
        ClientOptions = new LLHttpOptions
        {
            ConnectTimeout = options.DownstreamConnectTimeout,
            // downstreamResponseTimeout is enforced by the connection's deadline, which cancels the token every LLHttp
            // call waits with: one timer per deadline, so the same expiry always gets the same answer.
            ResponseHeadTimeout = Timeout.InfiniteTimeSpan,
            BodyIdleTimeout = Timeout.InfiniteTimeSpan,
            MaxResponseHeadersLength = options.MaxResponseHeadersTotalSize,
            // The forwarded head is the client's (bounded by the request limits) plus Host, Via and X-Forwarded-For.
            MaxRequestHeadLength = options.MaxRequestLineSize + options.MaxRequestHeadersTotalSize + 1024,
            // Both the shared pools and the affinity slots close downstream connections idle this long.
            PooledConnectionIdleTimeout = options.DownstreamIdleTimeout,
            BufferPool = ProxyBuffers.Bytes,
            SocketEngine = options.SocketEngine,
            ReceiveBufferSize = options.DownstreamReceiveBuffer,
        };
        // One pool per downstream, always: with shareClients or a per-request policy (a connection's requests go to
        // different downstreams) every exchange rents from it; otherwise it holds the connections idle client
        // connections gave up (downstreamShareAfter), so idle downstream connections stay bounded either way.
        _shared = options.ShareClients || downstreams.PerRequest;
        _shareAfter = options.DownstreamShareAfter;
        _pools = downstreams.Destinations.ToDictionary(d => d, d => new LLHttpConnectionPool(
            d.EndPoint, d.Address.Scheme == Uri.UriSchemeHttps ? options.DownstreamTrust.ClientOptions(d.Address.IdnHost) : null, ClientOptions));
    }

    public string Description => _shared
        ? "llhttp: one shared connection pool per downstream"
        : "llhttp: one downstream connection per inbound connection";

    public IForwarder Create(DownstreamChoice choice, int connectionIndex) =>
        new LLHttpForwarder(new LLHttpDownstreamLease(choice, _pools, _shared ? null : _shareAfter, ClientOptions));

    public void Dispose()
    {
        foreach (var pool in _pools.Values)
        {
            pool.Dispose();
        }
    }
}
