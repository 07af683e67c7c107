using LLHttp;
using LLHttp.Pooling;
using LLRP.Balancing;
using LLRP.Buffers;
using LLRP.Connections;

namespace LLRP.Forwarding;

/// <summary>
/// The llhttp variant's connections: by default one downstream connection per inbound connection (the original
/// LLRP's affinity), or with shareClients or a per-request loadBalancing policy one LIFO pool per downstream shared by
/// every inbound connection.
/// </summary>
internal sealed class LLHttpForwarderFactory : IForwarderFactory
{
    private readonly LLHttpOptions _clientOptions;
    private readonly Dictionary<Destination, LLHttpConnectionPool>? _pools;

    public LLHttpForwarderFactory(ProxyOptions options, DownstreamSet downstreams)
    {
        _clientOptions = new LLHttpOptions
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
        };
        // A per-request policy sends a connection's requests to different downstreams, so it needs the shared pools.
        if (options.ShareClients || downstreams.PerRequest)
        {
            _pools = downstreams.Destinations.ToDictionary(d => d, d => new LLHttpConnectionPool(d.EndPoint, _clientOptions));
        }
    }

    public string Description => _pools is not null
        ? "llhttp: one shared connection pool per downstream"
        : "llhttp: one downstream connection per inbound connection";

    public IForwarder Create(DownstreamChoice choice, int connectionIndex) =>
        new LLHttpForwarder(new LLHttpDownstreamLease(choice, _pools, _clientOptions));

    public void Dispose()
    {
        foreach (var pool in _pools?.Values ?? Enumerable.Empty<LLHttpConnectionPool>())
        {
            pool.Dispose();
        }
    }
}
