using System.Globalization;
using System.Net;
using System.Net.Http.Headers;
using System.Runtime.CompilerServices;
using LLRP.Balancing;
using LLRP.Errors;
using LLRP.Exchanges;
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
    protected string DownstreamPrefix => clients.Prefix(_current!);

    /// <summary>The requests speak HTTP/2 downstream (<see cref="DownstreamClients.Version"/>).</summary>
    protected bool Http2Downstream => clients.Http2;

    /// <summary>The invoker for this request (the connection's, or the next shared one in round-robin mode).</summary>
    protected HttpMessageInvoker Invoker => clients.Pick(invoker);

    public ValueTask ForwardAsync(Exchange exchange)
    {
        if (exchange.Head.Target is [(byte)'*'])
        {
            // HttpRequestMessage always carries an absolute URI, so asterisk-form cannot be expressed.
            return ValueTask.FromException(new ProxyException(ProxyError.NotImplemented, "OPTIONS * cannot be sent through HttpClient."));
        }
        return ForwardToChosenAsync(exchange);
    }

    /// <summary>
    /// The exchange with the downstream the balancer chooses; whether a failed attempt goes once more, elsewhere, and
    /// what passive health learns from it, is <see cref="DownstreamChoice.Failed"/>'s one rule.
    /// </summary>
    private async ValueTask ForwardToChosenAsync(Exchange exchange)
    {
        Destination? failed = null;
        while (true)
        {
            var destination = _current = downstream.Acquire(exclude: failed);
            try
            {
                await ForwardThroughInvokerAsync(exchange);
                downstream.Release(destination);
                return;
            }
            catch (Exception e)
            {
                var failure = exchange.FailureOf(e);
                failed = downstream.Failed(destination, failure, failed, exchange.Response.HasStarted);
                if (failed is null)
                {
                    throw failure;
                }
            }
        }
    }

    /// <summary>The variant's exchange, for a request HttpClient can express.</summary>
    protected abstract ValueTask ForwardThroughInvokerAsync(Exchange exchange);

    /// <summary>Sends through <see cref="Invoker"/>; HttpClient's failures before a response are classified here, at the call.</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    protected async ValueTask<HttpResponseMessage> SendAsync(HttpRequestMessage request, Exchange exchange, CancellationToken aborted)
    {
        HttpResponseMessage response;
        try
        {
            response = await Invoker.SendAsync(request, aborted);
        }
        catch (HttpRequestException e)
        {
            throw exchange.RequestFailure ?? Classify(e, exchange.IsAborted);
        }
        catch (OperationCanceledException e) when (!aborted.IsCancellationRequested)
        {
            throw exchange.RequestFailure ?? ConnectTimedOut(e);
        }
        exchange.Response.ReceivedWith(response.Version);
        if (response.StatusCode == HttpStatusCode.SwitchingProtocols && !(AsksToUpgrade(exchange) && SwitchesToOffered(response, exchange)))
        {
            // SocketsHttpHandler returns a 101 as the final response, its connection then a raw stream. RFC 9110 §15.2.2,
            // §7.8: a server sends 101 only to a request with Upgrade, and only to a protocol it offered; this one was
            // not asked for: a 502, and the connection, which now speaks another protocol, is closed.
            response.Dispose();
            throw new ProxyException(ProxyError.DownstreamInvalidResponse, FailureSide.Downstream, ExchangePhase.ResponseHead, requestSent: true,
                connectionFailed: false, "The downstream switched protocols (101) without being asked to, or to a protocol the client did not offer.");
        }
        return response;
    }

    /// <summary>
    /// The request is forwarded as an upgrade (<see cref="Exchange.Upgrading"/>): to an HTTP/1.1 downstream only, since
    /// HTTP/2 has no Upgrade (RFC 9113 §8.6; extended CONNECT to a downstream, RFC 8441, is not done here) and the field is dropped.
    /// </summary>
    protected bool AsksToUpgrade(Exchange exchange) => exchange.Upgrading && !clients.Http2;

    /// <summary>Connection and Upgrade for a request that asks to upgrade; the request side removed both otherwise.</summary>
    protected void AskToUpgrade(HttpRequestHeaders headers, Exchange exchange)
    {
        if (AsksToUpgrade(exchange))
        {
            headers.TryAddWithoutValidation("Connection", "upgrade");
            headers.TryAddWithoutValidation("Upgrade", System.Text.Encoding.Latin1.GetString(exchange.Head.UpgradeProtocols));
        }
    }

    private static bool SwitchesToOffered(HttpResponseMessage response, Exchange exchange) =>
        UpgradeOf(response) is { } upgrade && exchange.Head.AcceptsSwitchTo(System.Text.Encoding.Latin1.GetBytes(upgrade));

    private static string? UpgradeOf(HttpResponseMessage response) =>
        response.Headers.NonValidated.TryGetValues("Upgrade", out var values) ? values.ToString() : null;

    /// <summary>
    /// A 101 that <see cref="SendAsync"/> let through (the request asked to upgrade and the downstream switched to a
    /// protocol it offered): writes the 101 head to the client and hands the response's raw connection stream to the
    /// front end as the tunnel's downstream end, which owns the response from then on. False for any other response.
    /// </summary>
    protected static async ValueTask<bool> SwitchProtocolsAsync(HttpResponseMessage response, Exchange exchange)
    {
        if (response.StatusCode != HttpStatusCode.SwitchingProtocols)
        {
            return false;
        }
        Stream connection;
        try
        {
            connection = await response.Content.ReadAsStreamAsync(exchange.Aborted);
        }
        catch
        {
            response.Dispose();
            throw;
        }
        var writer = exchange.Response;
        try
        {
            writer.BeginSwitch();
            ForEachEndToEndField(response, writer, static (writer, name, value) => writer.WriteField(name, value));
            // Refuses a handshake the downstream did not complete for a key the proxy made (a 502): no tunnel then.
            writer.EndSwitch(UpgradeOf(response)!);
        }
        catch
        {
            await connection.DisposeAsync();
            response.Dispose();
            throw;
        }
        exchange.SwitchProtocols(new StreamTunnelDownstream(response, connection));
        return true;
    }

    /// <summary>Reads the downstream body; a failed read means the body was cut short, classified here, at the call.</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    protected static async ValueTask<int> ReadBodyAsync(Stream body, Memory<byte> destination, Exchange exchange, CancellationToken aborted)
    {
        try
        {
            return await body.ReadAsync(destination, aborted);
        }
        catch (Exception e) when (e is HttpRequestException or IOException)
        {
            throw BodyCutShort(e, exchange.IsAborted);
        }
    }

    /// <summary>
    /// The one conversion of HttpClient's failures before a response (the client's own failing body is recorded where
    /// it failed, <see cref="Exchange.RequestFailure"/>): an invalid response, or no downstream. No connection or no
    /// name is a connect failure, nothing sent; a connection that closed before a complete response head
    /// (ResponseEnded) or failed under the request (an I/O failure) is the connection failing, as LLHttp's
    /// ConnectionClosedBeforeResponse and SendFailed are, so passive health counts it unless the exchange's own abort
    /// (<paramref name="aborted"/>) ended it.
    /// </summary>
    protected static ProxyException Classify(HttpRequestException e, bool aborted)
    {
        // A failed TLS handshake (in DownstreamClients' connect callback) is part of connecting: nothing was sent.
        var connect = e.HttpRequestError is HttpRequestError.ConnectionError or HttpRequestError.NameResolutionError or HttpRequestError.SecureConnectionError;
        var (error, message) = e.HttpRequestError switch
        {
            HttpRequestError.InvalidResponse => (ProxyError.DownstreamInvalidResponse, "The downstream response was not valid HTTP."),
            HttpRequestError.ResponseEnded => (ProxyError.DownstreamUnavailable, "The downstream closed the connection before a complete response."),
            // HTTP/2: the downstream reset this stream (RST_STREAM) or broke the protocol's rules; not its connection failing.
            HttpRequestError.HttpProtocolError => (ProxyError.DownstreamInvalidResponse, "The downstream reset the HTTP/2 stream or broke the protocol."),
            _ => (ProxyError.DownstreamUnavailable, "The downstream could not be reached."),
        };
        var connectionFailed = !aborted && error == ProxyError.DownstreamUnavailable && (connect || IsConnectionFailure(e));
        return new ProxyException(error, FailureSide.Downstream, connect ? ExchangePhase.Connect : ExchangePhase.ResponseHead,
            requestSent: !connect, connectionFailed, message, e);
    }

    /// <summary>
    /// Whether HttpClient's failure is its connection failing: an I/O failure (a reset, a close mid-body), or the
    /// response ended before it was complete.
    /// An HTTP/2 stream reset (HttpProtocolException) is the downstream ending one stream, not its connection: a healthy
    /// origin does that (a gRPC server cancelling a call), so passive health does not count it.
    /// </summary>
    protected static bool IsConnectionFailure(Exception? e) =>
        e is IOException and not HttpProtocolException ||
        e is HttpRequestException { HttpRequestError: HttpRequestError.ResponseEnded } ||
        e is HttpRequestException { InnerException: IOException and not HttpProtocolException };

    /// <summary>HttpClient's token-independent cancellation before a response: its connect timeout; nothing was sent.</summary>
    protected static ProxyException ConnectTimedOut(OperationCanceledException e) =>
        new(ProxyError.DownstreamUnavailable, FailureSide.Downstream, ExchangePhase.Connect, requestSent: false, connectionFailed: true,
            "Connecting to the downstream timed out.", e);

    /// <summary>The downstream's body failed before its end (<paramref name="e"/>: HttpClient's or YARP's failure).</summary>
    protected static ProxyException BodyCutShort(Exception e, bool aborted) =>
        new(ProxyError.DownstreamBodyCutShort, FailureSide.Downstream, ExchangePhase.ResponseBody, requestSent: true,
            connectionFailed: !aborted && IsConnectionFailure(e), "The downstream body failed before its end.", e);

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
            throw new ProxyException(ProxyError.DownstreamInvalidResponse, FailureSide.Downstream, ExchangePhase.ResponseHead, requestSent: true,
                connectionFailed: false, "The downstream sent an invalid Content-Length.");
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
    protected void ExpectContinueForLargeOrChunkedBody(HttpRequestHeaders headers, RequestHead head)
    {
        // HTTP/2 streams are full duplex in SocketsHttpHandler (the response comes back while the body is still sent), so
        // the reason above is HTTP/1.1's alone; a gRPC stream would otherwise wait for 100 before its first message.
        if (clients.Http2)
        {
            return;
        }
        if (head.LengthUnknown ||
            (head.Framing == BodyFraming.ContentLength && head.ContentLength >= ExpectContinueMinimumContentLength))
        {
            headers.ExpectContinue = true;
        }
    }

    /// <summary>
    /// "TE: trailers" to an HTTP/2 downstream when the client sent it and can be given trailers (an HTTP/2 client):
    /// RFC 9113 §8.2.2 allows exactly that TE, and gRPC servers may require it. SocketsHttpHandler sends no other TE
    /// value over HTTP/2. Not to an HTTP/1.1 downstream: its chunked trailers are not relayed.
    /// </summary>
    protected void AcceptTrailersFromDownstream(HttpRequestHeaders headers, Exchange exchange)
    {
        if (clients.Http2 && exchange.Response.ClientTakesTrailers && exchange.Head.AcceptsTrailers())
        {
            headers.TryAddWithoutValidation("TE", "trailers");
        }
    }

    /// <summary>
    /// The response's trailer fields (HttpClient fills them once the body was read to its end) to <paramref name="add"/>;
    /// the shared writer's trailer policy decides what reaches the client (<see cref="ResponseWriter.WriteTrailer"/>).
    /// </summary>
    protected static void ForEachTrailer<TTarget>(HttpResponseMessage response, TTarget target, Action<TTarget, string, string> add)
    {
        foreach (var (name, values) in response.TrailingHeaders.NonValidated)
        {
            foreach (var value in values)
            {
                add(target, name, value);
            }
        }
    }

    /// <summary>An absolute URI whose path and query are sent exactly as written.</summary>
    protected static Uri RawUri(string uri) => new(uri, s_rawUri);

    /// <summary>
    /// A request to <paramref name="uri"/> in the downstream protocol (<see cref="DownstreamClients.Version"/>, exactly),
    /// whose path and query are sent exactly as the client wrote them.
    /// </summary>
    protected HttpRequestMessage NewRequest(HttpMethod method, string uri) => new(method, RawUri(uri))
    {
        Version = clients.Version,
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
