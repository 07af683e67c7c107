using LLRP.Exchanges;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Primitives;

namespace LLRP.Context;

/// <summary>
/// A minimal HttpContext over the shared request side, for the variants that hand the exchange to HttpContext-based
/// code (httpclient-httpcontext and yarp). It is ASP.NET Core's own DefaultHttpContext over a
/// feature collection that provides exactly what HttpForwarder reads and writes:
/// <list type="bullet">
/// <item><see cref="RequestFeature"/>: IHttpRequestFeature and IHttpRequestBodyDetectionFeature, from RequestHead and RequestBodyReader;</item>
/// <item><see cref="ResponseFeature"/>: IHttpResponseFeature, IHttpResponseBodyFeature and IHttpResponseTrailersFeature, into ResponseWriter,
/// and IHttpUpgradeFeature, for a 101 that HttpForwarder relays itself;</item>
/// <item><see cref="LifetimeFeature"/>: IHttpRequestLifetimeFeature; <see cref="ConnectionFeature"/>: IHttpConnectionFeature.</item>
/// </list>
/// Like Kestrel's pooled HttpProtocol, the whole graph (context, request/response objects, features, header
/// dictionaries, body stream and writer) lives as long as the client connection and is reset per request, so the
/// context adds no per-request allocation of its own beyond the header strings.
/// Anything else (Items, TraceIdentifier, RequestServices...) falls back to DefaultHttpContext's lazy defaults, which
/// the feature collection forgets at the next request.
/// </summary>
internal sealed class ProxyHttpContext
{
    private readonly RequestFeature _request = new();
    private readonly LifetimeFeature _lifetime = new();
    private readonly ConnectionFeature _connection = new();
    private readonly ResponseFeature _response;
    private readonly ProxyFeatureCollection _features;

    public ProxyHttpContext()
    {
        _response = new ResponseFeature(_lifetime);
        _features = new ProxyFeatureCollection(_request, _response, _response, _request, _lifetime, _connection, _response, _response);
        HttpContext = new DefaultHttpContext(_features);
    }

    public HttpContext HttpContext { get; }

    /// <summary>HttpContext.Abort() was called: the response must not be completed; the client connection must be aborted.</summary>
    public bool IsAborted => _lifetime.IsAborted;

    private Exchange? _exchange;

    /// <summary>The exchange the context is started for.</summary>
    public Exchange Exchange => _exchange!;

    /// <summary>Resets the context for <paramref name="exchange"/>, the request in flight on its connection.</summary>
    public HttpContext Start(Exchange exchange)
    {
        _features.Reset();
        _connection.Bind(exchange);
        _lifetime.Start(exchange);
        _request.Start(exchange);
        _response.Reset(exchange);
        _exchange = exchange;
        return HttpContext;
    }

    /// <summary>Adds what every variant adds to the forwarded request (<see cref="Exchange.ProxyFieldValue"/>).</summary>
    public void AddProxyFields(System.Net.Http.Headers.HttpRequestHeaders headers) => _exchange!.AddProxyFieldsTo(headers);

    /// <summary>Ends the request: runs the OnCompleted callbacks (HttpResponse.RegisterForDispose among them).</summary>
    public ValueTask EndAsync() => _response.RunOnCompletedAsync();

    /// <summary>
    /// Adds one field line. Unlike IHeaderDictionary.Append, an empty value is kept (RFC 9110 §5.5 allows it, and a
    /// proxy forwards it); a repeated name adds a value to the same entry.
    /// </summary>
    public static void AddField(IHeaderDictionary headers, string name, string value) =>
        headers[name] = headers.TryGetValue(name, out var existing) ? StringValues.Concat(existing, value) : new StringValues(value);
}
