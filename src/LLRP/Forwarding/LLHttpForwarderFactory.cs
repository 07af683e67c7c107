using System.Net;
using LLHttp;
using LLHttp.Pooling;
using LLRP.Buffers;
using LLRP.Connections;

namespace LLRP.Forwarding;

/// <summary>
/// The llhttp variant's connections: by default one downstream connection per inbound connection (the original
/// LLRP's affinity) while that connection is busy, given to the downstream's shared idle pool when it goes idle; or with
/// shareClients one LIFO pool per downstream shared by every exchange.
/// </summary>
internal sealed class LLHttpForwarderFactory : IForwarderFactory
{
    private readonly ProxyOptions _options;
    private readonly LLHttpOptions _clientOptions;
    private readonly Dictionary<Uri, LLHttpConnectionPool> _pools = [];

    public LLHttpForwarderFactory(ProxyOptions options)
    {
        _options = options;
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
        // With shareClients every exchange rents from these; otherwise they hold the connections idle client
        // connections gave up (downstreamShareAfter), so idle downstream connections stay bounded either way.
        foreach (var downstream in options.Downstreams)
        {
            _pools[downstream] = new LLHttpConnectionPool(EndPointOf(downstream), _clientOptions);
        }
    }

    public string Description => _options.ShareClients
        ? "llhttp: one shared connection pool per downstream"
        : "llhttp: one downstream connection per inbound connection";

    public IForwarder Create(Uri downstream, int connectionIndex) => _options.ShareClients
        ? new LLHttpForwarder(null, _pools[downstream], downstream)
        : new LLHttpForwarder(new LLHttpAffinitySlot(_pools[downstream], _options.DownstreamShareAfter, _clientOptions), null, downstream);

    private static EndPoint EndPointOf(Uri uri) =>
        IPAddress.TryParse(uri.Host.Trim('[', ']'), out var address)
            ? new IPEndPoint(address, uri.Port)
            : new DnsEndPoint(uri.Host, uri.Port);

    public void Dispose()
    {
        foreach (var pool in _pools.Values)
        {
            pool.Dispose();
        }
    }
}
