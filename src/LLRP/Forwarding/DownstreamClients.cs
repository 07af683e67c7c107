using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Text;

namespace LLRP.Forwarding;

/// <summary>
/// The HttpMessageInvoker clients of the httpclient, httpclient-httpcontext and yarp variants: SocketsHttpHandler, one
/// per inbound connection by default, or a shared set ("shareClients") assigned per connection or rotated per request
/// ("shareClients.roundRobin"). The three variants get the same clients, so that they differ only in the layers above.
/// They are also the one place that decides what the requests speak downstream (<see cref="Version"/>, from
/// --downstreamProtocol): every request these variants build or hand to YARP takes its version from here.
/// </summary>
internal sealed class DownstreamClients : IDisposable
{
    private readonly ProxyOptions _options;
    private readonly HttpMessageInvoker[] _shared;
    private int _next;

    public DownstreamClients(ProxyOptions options)
    {
        _options = options;
        Version = options.Balancing.DownstreamVersion;
        _shared = new HttpMessageInvoker[options.ShareClients ? options.ShareClientsCount : 0];
        for (var i = 0; i < _shared.Length; i++)
        {
            _shared[i] = CreateInvoker(options);
        }
    }

    /// <summary>
    /// The HTTP version of every forwarded request, sent exactly (RequestVersionExact: no downgrade, no upgrade). HTTP/2
    /// goes with prior knowledge to http:// downstreams (h2c) or over TLS with ALPN h2 to https:// ones (see
    /// <see cref="Prefix"/>).
    /// </summary>
    public Version Version { get; }

    /// <summary>
    /// The scheme and authority the forwarded URIs start with. HTTP/1.1 and h2c: "http://host:port" whatever the
    /// scheme (<see cref="Balancing.Destination.InvokerPrefix"/>; TLS, if any, in <see cref="TlsConnect"/>). h2: the
    /// https:// address itself, because HTTP/2 puts the scheme on the wire (:scheme, RFC 9113 §8.3.1) and an origin over
    /// TLS refuses "http" there (Kestrel resets the stream with PROTOCOL_ERROR); the handler then runs the TLS handshake
    /// itself, offering h2 by ALPN and failing the request when the downstream does not choose it. Its SNI is the
    /// request's Host (SocketsHttpHandler names the peer after :authority); the certificate is still checked against the
    /// downstream's own name (<see cref="Tls.DownstreamTrust.ForHosts"/>).
    /// </summary>
    public string Prefix(Balancing.Destination destination) =>
        _options.Balancing.DownstreamProtocol == DownstreamProtocol.H2 ? destination.Id : destination.InvokerPrefix;

    /// <summary>Whether the requests speak HTTP/2 downstream (trailers can come back, TE: trailers may go).</summary>
    public bool Http2 => Version.Major == 2;

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
        SslOptions = options.Balancing.DownstreamProtocol == DownstreamProtocol.H2
            ? new SslClientAuthenticationOptions { RemoteCertificateValidationCallback = options.Balancing.DownstreamTrust.ForHosts(HttpsHosts(options)) }
            : new SslClientAuthenticationOptions(),
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
        ConnectCallback = options.Balancing.DownstreamProtocol == DownstreamProtocol.H2 ? null : TlsConnect(options),
        // HTTP/2: a connection whose streams reach the downstream's SETTINGS_MAX_CONCURRENT_STREAMS opens another instead of
        // queueing requests, as YARP's benchmark app configures its handler; irrelevant to HTTP/1.1.
        EnableMultipleHttp2Connections = true,
    }, disposeHandler: true);

    /// <summary>
    /// https downstreams. SocketsHttpHandler would name the TLS peer (SNI and the name the certificate must carry)
    /// after the request's Host field, which a proxy forwards from its client, not after the downstream. So the handler
    /// is given the downstream's address as an http:// URI (<see cref="Balancing.Destination.InvokerPrefix"/>; the
    /// request line carries no scheme) and this callback opens its connections, running the TLS handshake with the
    /// downstream's own host as llhttp does. Null (the handler's own connect) when no downstream is https.
    /// </summary>
    private static Func<SocketsHttpConnectionContext, CancellationToken, ValueTask<Stream>>? TlsConnect(ProxyOptions options)
    {
        var tls = options.Balancing.Downstreams.Where(d => d.Scheme == Uri.UriSchemeHttps).Select(d => (d.IdnHost, d.Port)).ToHashSet();
        if (tls.Count == 0)
        {
            return null;
        }
        var trust = options.Balancing.DownstreamTrust;
        return async (context, cancellationToken) =>
        {
            var endPoint = context.DnsEndPoint;
            var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            try
            {
                await socket.ConnectAsync(endPoint, cancellationToken);
                var stream = new NetworkStream(socket, ownsSocket: true);
                if (!tls.Contains((endPoint.Host, endPoint.Port)))
                {
                    return stream;
                }
                var ssl = new SslStream(stream);
                try
                {
                    await ssl.AuthenticateAsClientAsync(trust.ClientOptions(endPoint.Host), cancellationToken);
                    return ssl;
                }
                catch
                {
                    await ssl.DisposeAsync();
                    throw;
                }
            }
            catch
            {
                socket.Dispose();
                throw;
            }
        };
    }

    private static string[] HttpsHosts(ProxyOptions options) =>
        [.. options.Balancing.Downstreams.Where(d => d.Scheme == Uri.UriSchemeHttps).Select(d => d.IdnHost).Distinct()];

    public void Dispose()
    {
        foreach (var invoker in _shared)
        {
            invoker.Dispose();
        }
    }
}
