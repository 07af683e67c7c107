using System.Globalization;
using System.Net;
using System.Net.Http.Headers;
using System.Runtime.CompilerServices;
using LLRP.Balancing;
using LLRP.Connections;
using LLRP.Errors;
using LLRP.Http1;

namespace LLRP.Forwarding;

/// <summary>
/// What the httpclient, httpclient-httpcontext and yarp variants share: an HttpMessageInvoker (owned or shared), the
/// one request form HttpRequestMessage cannot express, HttpClient's failures as <see cref="ProxyError"/>s, and the
/// response checks HttpClient leaves to the caller. Each variant adds only how it builds the request and relays the
/// response.
/// </summary>
internal abstract class InvokerForwarder(DownstreamClients clients, DownstreamChoice downstream, HttpMessageInvoker invoker, bool ownsInvoker) : IForwarder
{
    private static readonly UriCreationOptions s_rawUri = new() { DangerousDisablePathAndQueryCanonicalization = true };

    // The downstream of the exchange in progress (loadBalancing chooses it per request or per connection).
    private Destination? _current;

    /// <summary>The current downstream's scheme and authority, to which the request-target is appended.</summary>
    protected string DownstreamPrefix => _current!.InvokerPrefix;

    /// <summary>The invoker for this request (the connection's, or the next shared one in round-robin mode).</summary>
    protected HttpMessageInvoker Invoker => clients.Pick(invoker);

    public ValueTask ForwardAsync(ProxyConnection connection)
    {
        if (connection.Head.Target is [(byte)'*'])
        {
            // HttpRequestMessage always carries an absolute URI, so asterisk-form cannot be expressed.
            return ValueTask.FromException(new ProxyException(ProxyError.NotImplemented, "OPTIONS * cannot be sent through HttpClient."));
        }
        return ForwardToChosenAsync(connection);
    }

    /// <summary>
    /// The exchange with the downstream the balancer chooses; a request that could not even connect (nothing was sent)
    /// goes once more to another downstream. Failures go to passive health.
    /// </summary>
    private async ValueTask ForwardToChosenAsync(ProxyConnection connection)
    {
        Destination? failed = null;
        while (true)
        {
            var destination = _current = downstream.Acquire(exclude: failed);
            try
            {
                await ForwardThroughInvokerAsync(connection);
                downstream.Release(destination, null, cancelled: false);
                return;
            }
            catch (Exception e)
            {
                var cancelled = connection.Aborted.IsCancellationRequested;
                downstream.Release(destination, e, cancelled);
                if (failed is not null || connection.Response.HasStarted || !downstream.MayRetryElsewhere(destination, e, cancelled))
                {
                    throw;
                }
                failed = destination;
            }
        }
    }

    /// <summary>The variant's exchange, for a request HttpClient can express.</summary>
    protected abstract ValueTask ForwardThroughInvokerAsync(ProxyConnection connection);

    /// <summary>Sends through <see cref="Invoker"/>; HttpClient's failures before a response come back as <see cref="ProxyException"/>.</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    protected async ValueTask<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken aborted)
    {
        try
        {
            return await Invoker.SendAsync(request, aborted);
        }
        catch (HttpRequestException e)
        {
            throw Translate(e);
        }
        catch (OperationCanceledException e) when (!aborted.IsCancellationRequested)
        {
            throw ConnectTimedOut(e);
        }
    }

    /// <summary>Reads the downstream body; a failed read means the body was cut short.</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    protected static async ValueTask<int> ReadBodyAsync(Stream body, Memory<byte> destination, CancellationToken aborted)
    {
        try
        {
            return await body.ReadAsync(destination, aborted);
        }
        catch (Exception e) when (e is HttpRequestException or IOException)
        {
            throw BodyCutShort(e);
        }
    }

    /// <summary>
    /// The one mapping from HttpClient's failures before a response: the client's bad body (unwrapped), an invalid
    /// response, or no downstream. A connection that closed before a complete response head (ResponseEnded) is the
    /// transport failing, as LLHttp's ConnectionClosedBeforeResponse is, so passive health counts it.
    /// </summary>
    protected static ProxyException Translate(HttpRequestException e) => RequestSideFailure(e) ?? e.HttpRequestError switch
    {
        HttpRequestError.InvalidResponse =>
            new ProxyException(ProxyError.DownstreamInvalidResponse, "The downstream response was not valid HTTP/1.1.", e),
        HttpRequestError.ResponseEnded =>
            new ProxyException(ProxyError.DownstreamUnavailable, "The downstream closed the connection before a complete response.", e),
        _ => new ProxyException(ProxyError.DownstreamUnavailable, "The downstream could not be reached.", e),
    };

    /// <summary>The request side's failure (the client's bad body, read while HttpClient sent it) inside a client failure.</summary>
    protected static ProxyException? RequestSideFailure(Exception? e)
    {
        for (var inner = e; inner is not null; inner = inner.InnerException)
        {
            if (inner is ProxyException requestSide)
            {
                return requestSide;
            }
        }
        return null;
    }

    /// <summary>HttpClient's token-independent cancellation before a response: its connect timeout.</summary>
    protected static ProxyException ConnectTimedOut(OperationCanceledException e) =>
        new(ProxyError.DownstreamUnavailable, "Connecting to the downstream timed out.", e);

    protected static ProxyException BodyCutShort(Exception e) =>
        new(ProxyError.DownstreamBodyCutShort, "The downstream body failed before its end.", e);

    // RFC 9112 §6.3 rule 5: an invalid or repeated Content-Length, or one beside Transfer-Encoding, means the downstream's
    // framing cannot be trusted; a proxy discards the response and answers 502. HttpClient itself is lenient here.
    protected static long? DownstreamContentLength(HttpResponseMessage response)
    {
        if (!response.Content.Headers.NonValidated.TryGetValues("Content-Length", out var values))
        {
            return null;
        }
        if (values.Count != 1 || response.Headers.NonValidated.Contains("Transfer-Encoding") ||
            !long.TryParse(values.ToString(), NumberStyles.None, CultureInfo.InvariantCulture, out var length))
        {
            throw new ProxyException(ProxyError.DownstreamInvalidResponse, "The downstream sent an invalid Content-Length.");
        }
        return length;
    }

    /// <summary>
    /// Hands every response field line (message and content fields) to <paramref name="add"/>, except those the
    /// downstream's Connection nominates; the shared header policy removes the hop-by-hop and framing ones.
    /// </summary>
    protected static void ForEachEndToEndField<TTarget>(HttpResponseMessage response, TTarget target, Action<TTarget, string, string> add)
    {
        response.Headers.NonValidated.TryGetValues("Connection", out var connectionOptions);
        Add(response.Headers.NonValidated, connectionOptions, target, add);
        Add(response.Content.Headers.NonValidated, connectionOptions, target, add);

        static void Add(HttpHeadersNonValidated fields, HeaderStringValues connectionOptions, TTarget target, Action<TTarget, string, string> add)
        {
            foreach (var (name, values) in fields)
            {
                if (IsNominated(name, connectionOptions))
                {
                    continue;
                }
                foreach (var value in values)
                {
                    add(target, name, value);
                }
            }
        }
    }

    // RFC 9110 §7.6.1: the downstream's Connection names fields meant for this hop only.
    protected static bool IsNominated(string name, HeaderStringValues connectionOptions)
    {
        foreach (var value in connectionOptions)
        {
            foreach (var range in value.AsSpan().Split(','))
            {
                if (value.AsSpan()[range].Trim().Equals(name, StringComparison.OrdinalIgnoreCase))
                {
                    return true;
                }
            }
        }
        return false;
    }

    /// <summary>
    /// A request body whose Content-Length is at least this is sent downstream with "Expect: 100-continue". 1 MiB is
    /// Kestrel's default MaxRequestBufferSize: an origin takes a smaller body into its buffers whether or not it reads
    /// it, so SocketsHttpHandler's send completes and an early answer is read after it; only a larger one can be held up
    /// by an origin that answers without reading it.
    /// </summary>
    internal const long ExpectContinueMinimumContentLength = 1024 * 1024;

    /// <summary>
    /// Asks the downstream for "100 (Continue)" before a chunked body, whose size is unknown until it ends, and before a
    /// body whose Content-Length is at least <see cref="ExpectContinueMinimumContentLength"/> (RFC 9110 §10.1.1).
    /// Without the expectation SocketsHttpHandler sends the whole body before it reads a byte of the response
    /// (HttpConnection.SendAsync), so an origin that refuses the body early (413, 401) and stops reading it would hold
    /// the exchange until downstreamResponseTimeout, or make the send fail (502) when it closes under the body; with it,
    /// a final status before 100 comes back at once, the body is not sent, and the handler closes that downstream
    /// connection. The cost is one round trip per chunked upload and per such Content-Length body, or, with an origin
    /// that never sends 100, SocketsHttpHandler's Expect100ContinueTimeout, after which the body is sent anyway:
    /// DownstreamClients.CreateInvoker does not set it, so it is the handler's default of 1 s
    /// (HttpHandlerDefaults.DefaultExpect100ContinueTimeout in System.Net.Http). This is the proxy's own expectation:
    /// the client's "Expect" is answered by the proxy and never forwarded. A smaller Content-Length body is sent without
    /// it, so small uploads of a known size do not pay the round trip.
    /// </summary>
    protected static void ExpectContinueForLargeOrChunkedBody(HttpRequestHeaders headers, RequestHead head)
    {
        if (head.Framing == BodyFraming.Chunked ||
            (head.Framing == BodyFraming.ContentLength && head.ContentLength >= ExpectContinueMinimumContentLength))
        {
            headers.ExpectContinue = true;
        }
    }

    /// <summary>An absolute URI whose path and query are sent exactly as written.</summary>
    protected static Uri RawUri(string uri) => new(uri, s_rawUri);

    /// <summary>An HTTP/1.1 request to <paramref name="uri"/>, whose path and query are sent exactly as the client wrote them.</summary>
    protected static HttpRequestMessage NewRequest(HttpMethod method, string uri) => new(method, RawUri(uri))
    {
        Version = HttpVersion.Version11,
        VersionPolicy = HttpVersionPolicy.RequestVersionExact,
    };

    public void Dispose()
    {
        if (ownsInvoker)
        {
            invoker.Dispose();
        }
    }
}
