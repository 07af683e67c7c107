using System.Net;
using System.Text;

namespace LLRP.Forwarding;

/// <summary>
/// The HttpMessageInvoker clients of the httpclient, httpclient-httpcontext and yarp variants: SocketsHttpHandler, one
/// per inbound connection by default, or a shared set ("shareClients") assigned per connection or rotated per request
/// ("shareClients.roundRobin"). The three variants get the same clients, so that they differ only in the layers above.
/// </summary>
internal sealed class DownstreamClients : IDisposable
{
    private readonly ProxyOptions _options;
    private readonly HttpMessageInvoker[] _shared;
    private int _next;

    public DownstreamClients(ProxyOptions options)
    {
        _options = options;
        _shared = new HttpMessageInvoker[options.ShareClients ? options.ShareClientsCount : 0];
        for (var i = 0; i < _shared.Length; i++)
        {
            _shared[i] = CreateInvoker(options);
        }
    }

    public string Description => _options.ShareClients
        ? $"{ProxyOptions.Name(_options.Client)}: {_shared.Length} shared clients, {(_options.ShareClientsRoundRobin ? "rotated per request" : "assigned per connection")}"
        : $"{ProxyOptions.Name(_options.Client)}: one client per inbound connection";

    /// <summary>The client of a new inbound connection; <paramref name="owned"/> says whether the connection must dispose it.</summary>
    public HttpMessageInvoker ForConnection(int connectionIndex, out bool owned)
    {
        owned = _shared.Length == 0;
        return owned ? CreateInvoker(_options) : _shared[(uint)connectionIndex % (uint)_shared.Length];
    }

    /// <summary>The client for the next request: the connection's own, or the next shared one in round-robin mode.</summary>
    public HttpMessageInvoker Pick(HttpMessageInvoker assigned) =>
        _options.ShareClientsRoundRobin && _shared.Length > 1
            ? _shared[(uint)Interlocked.Increment(ref _next) % (uint)_shared.Length]
            : assigned;

    // The settings YARP's ForwarderHttpClientFactory applies: a proxy must not follow redirects, decompress,
    // keep cookies or go through another proxy.
    private static HttpMessageInvoker CreateInvoker(ProxyOptions options) => new(new SocketsHttpHandler
    {
        UseProxy = false,
        AllowAutoRedirect = false,
        AutomaticDecompression = DecompressionMethods.None,
        UseCookies = false,
        ActivityHeadersPropagator = null,
        ConnectTimeout = options.DownstreamConnectTimeout,
        MaxResponseHeadersLength = Math.Max(1, options.MaxResponseHeadersTotalSize / 1024),
        // Field values may carry obs-text (RFC 9110 §5.5); Latin-1 moves those bytes through unchanged.
        RequestHeaderEncodingSelector = static (_, _) => Encoding.Latin1,
        ResponseHeaderEncodingSelector = static (_, _) => Encoding.Latin1,
    }, disposeHandler: true);

    public void Dispose()
    {
        foreach (var invoker in _shared)
        {
            invoker.Dispose();
        }
    }
}
