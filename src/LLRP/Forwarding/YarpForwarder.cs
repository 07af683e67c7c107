using LLRP.Balancing;
using LLRP.Context;
using LLRP.Errors;
using LLRP.Exchanges;
using LLRP.Http1;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Yarp.ReverseProxy.Forwarder;

namespace LLRP.Forwarding;

/// <summary>
/// The yarp variant: YARP's <see cref="IHttpForwarder"/> over the same per-connection <see cref="ProxyHttpContext"/>
/// and the same HttpMessageInvoker clients as the httpclient-httpcontext variant, so the two differ only in what
/// HttpForwarder does between the context and the client (header transforms, StreamCopyHttpContent, its activity
/// timeout, its error handling). The response goes back through the context's response feature, so the client
/// framing and the header policy are the shared request side's, as for every variant.
/// </summary>
internal sealed class YarpForwarder : InvokerForwarder
{
    private readonly IHttpForwarder _forwarder;
    private readonly ForwarderRequestConfig _config;
    private readonly ProxyHttpContext _context;
    private readonly LLRPTransformer _transformer;

    public YarpForwarder(IHttpForwarder forwarder, ForwarderRequestConfig config, DownstreamClients clients, DownstreamChoice downstream, HttpMessageInvoker invoker, bool ownsInvoker)
        : base(clients, downstream, invoker, ownsInvoker)
    {
        _forwarder = forwarder;
        _config = config;
        _context = new ProxyHttpContext();
        _transformer = new LLRPTransformer(_context, this);
    }

    protected override async ValueTask ForwardThroughInvokerAsync(Exchange exchange)
    {
        var context = _context.Start(exchange);
        try
        {
            _transformer.Head = exchange.Head;
            var error = await _forwarder.SendAsync(context, DownstreamPrefix, Invoker, _config, _transformer);
            if (exchange.RelayedTunnel is { } relayed)
            {
                // HttpForwarder upgraded the client (the response feature's UpgradeAsync) and copied both ways until
                // either side ended: its error says how the tunnel ended, not how to answer (the 101 is sent).
                relayed.Failed = error != ForwarderError.None;
                return;
            }
            if (error != ForwarderError.None)
            {
                throw Classify(exchange, error, context.Features.Get<IForwarderErrorFeature>()?.Exception);
            }
            if (_context.IsAborted)
            {
                throw new ProxyException(ProxyError.DownstreamBodyCutShort, FailureSide.Downstream, ExchangePhase.ResponseBody, requestSent: true,
                    connectionFailed: false, "YARP aborted the request.");
            }
            // HttpForwarder leaves completing an HTTP/1.1 response to the server; here that ends the client framing.
            await context.Response.CompleteAsync();
        }
        finally
        {
            await _context.EndAsync();
        }
    }

    /// <summary>
    /// The one conversion of HttpForwarder's outcome, at the call that reports it. YARP has already set a status (or
    /// aborted the context); the front end answers from the failure instead, so every variant maps the same failure to
    /// the same answer. What failed where it was known comes first: the exchange's own abort (its deadline or its client
    /// gone: 408, 504 or nothing), the client's body failing while YARP sent it, or the proxy's own failure that YARP
    /// caught (a response the shared side refused).
    /// </summary>
    private static ProxyException Classify(Exchange exchange, ForwarderError error, Exception? exception)
    {
        if (exchange.IsAborted)
        {
            return exchange.AbortFailure();
        }
        if (exchange.RequestFailure is { } requestSide)
        {
            return requestSide;
        }
        if (exception is ProxyException proxy)
        {
            return proxy;
        }
        return error switch
        {
            ForwarderError.Request when exception is HttpRequestException e => Classify(e, aborted: false),
            // HttpClient's connect timeout cancels the send without YARP's token or ours being cancelled.
            ForwarderError.RequestCanceled when exception is OperationCanceledException e => ConnectTimedOut(e),
            ForwarderError.RequestTimedOut => new ProxyException(ProxyError.DownstreamTimeout, FailureSide.Downstream, ExchangePhase.ResponseHead,
                requestSent: true, connectionFailed: false, "The downstream did not answer within downstreamResponseTimeout.", exception),
            ForwarderError.ResponseHeaders => new ProxyException(ProxyError.DownstreamInvalidResponse, FailureSide.Downstream, ExchangePhase.ResponseHead,
                requestSent: true, connectionFailed: false, "The downstream response head could not be relayed.", exception),
            ForwarderError.ResponseBodyDestination or ForwarderError.ResponseBodyCanceled => BodyCutShort(exception ?? new IOException(error.ToString()), aborted: false),
            ForwarderError.ResponseBodyClient => new ProxyException(ProxyError.ClientGone, "The client closed the connection.", exception),
            _ => new ProxyException(ProxyError.DownstreamUnavailable, FailureSide.Downstream, ExchangePhase.ResponseHead, requestSent: true,
                connectionFailed: IsConnectionFailure(exception), $"YARP reported {error}.", exception),
        };
    }

    /// <summary>
    /// YARP's base transformer (every request field but its hop-by-hop list, Host included, so the downstream sees the
    /// Host the request side chose) plus what the contract adds: Via and X-Forwarded-For, as the other variants add them,
    /// and the removal of response fields the downstream's Connection nominates (RFC 9110 §7.6.1), which YARP's static
    /// list does not do. The request fields are already the request side's policy applied (RequestFeature). One per
    /// connection, like the context.
    /// </summary>
    private sealed class LLRPTransformer(ProxyHttpContext context, YarpForwarder forwarder) : HttpTransformer
    {
        /// <summary>The current request's head, for the expectation the other variants add too.</summary>
        public RequestHead Head { get; set; } = null!;

        public override async ValueTask TransformRequestAsync(HttpContext httpContext, HttpRequestMessage proxyRequest, string downstreamPrefix, CancellationToken cancellationToken)
        {
            await base.TransformRequestAsync(httpContext, proxyRequest, downstreamPrefix, cancellationToken);

            // HttpForwarder would build the URI from the decoded Path (System.Uri then removes dot-segments and
            // re-escapes): the downstream must see the request-target exactly as the client sent it, as with every variant.
            proxyRequest.RequestUri = RawUri(downstreamPrefix + ((RequestFeature)httpContext.Features.Get<IHttpRequestFeature>()!).RawTarget);

            var headers = proxyRequest.Headers;
            var source = httpContext.Request.Headers;
            foreach (var name in s_endToEndDroppedByYarp)
            {
                if (source.TryGetValue(name, out var values))
                {
                    headers.TryAddWithoutValidation(name, (IEnumerable<string?>)values);
                }
            }
            context.AddProxyFields(headers);
            forwarder.AcceptTrailersFromDownstream(headers, context.Exchange);
            if (proxyRequest.Content is not null)
            {
                forwarder.ExpectContinueForLargeOrChunkedBody(headers, Head);
            }
        }

        public override async ValueTask<bool> TransformResponseAsync(HttpContext httpContext, HttpResponseMessage? proxyResponse, CancellationToken cancellationToken)
        {
            if (proxyResponse is not null)
            {
                // RFC 9112 §6.3 rule 5: a Content-Length the proxy cannot trust is a 502, as in the other variants.
                DownstreamContentLength(proxyResponse);
                context.Exchange.Response.ReceivedWith(proxyResponse.Version);
            }
            var copy = await base.TransformResponseAsync(httpContext, proxyResponse, cancellationToken);
            if (proxyResponse is null)
            {
                return copy;
            }
            var fields = httpContext.Response.Headers;
            var downstreamFields = proxyResponse.Headers.NonValidated;
            downstreamFields.TryGetValues("Connection", out var connectionOptions);
            foreach (var name in s_endToEndDroppedByYarp)
            {
                if (downstreamFields.TryGetValues(name, out var values) && !IsNominated(name, connectionOptions))
                {
                    foreach (var value in values)
                    {
                        ProxyHttpContext.AddField(fields, name, value);
                    }
                }
            }
            if (connectionOptions.Count > 0)
            {
                foreach (var (name, _) in downstreamFields)
                {
                    RemoveIfNominated(fields, name, connectionOptions);
                }
                foreach (var (name, _) in proxyResponse.Content.Headers.NonValidated)
                {
                    RemoveIfNominated(fields, name, connectionOptions);
                }
            }
            if (copy && context.Exchange.Response.SendsHeadAtOnce && proxyResponse.StatusCode != System.Net.HttpStatusCode.SwitchingProtocols)
            {
                // The head is complete here (HttpForwarder set the status before this call and copies only the body
                // after it); HttpForwarder itself would send it with the first body bytes.
                await httpContext.Response.BodyWriter.FlushAsync(cancellationToken);
            }
            return copy;
        }

        // YARP's RequestUtilities drops these in both directions (its static exclusion list) although RFC 9110 makes them
        // end-to-end or leaves relaying them to the proxy; the shared header policy forwards them for every variant, so
        // they are put back here. The hop-by-hop names of that list are removed by the shared policy already.
        private static readonly string[] s_endToEndDroppedByYarp =
        [
            "Proxy-Authenticate", "Proxy-Authentication-Info", "Proxy-Authorization", "Proxy-Features", "Proxy-Instruction",
            "Security-Scheme", "ALPN", "Close", "HTTP2-Settings", "Upgrade-Insecure-Requests", "Alt-Svc",
        ];

        private static void RemoveIfNominated(IHeaderDictionary fields, string name, System.Net.Http.Headers.HeaderStringValues options)
        {
            if (IsNominated(name, options))
            {
                fields.Remove(name);
            }
        }
    }
}
