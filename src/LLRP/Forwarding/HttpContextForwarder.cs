using System.Buffers;
using System.Net;
using System.Net.Http.Headers;
using LLRP.Balancing;
using LLRP.Context;
using LLRP.Errors;
using LLRP.Exchanges;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;

namespace LLRP.Forwarding;

/// <summary>
/// The httpclient-httpcontext variant: the httpclient variant's exchange (same clients, same failure mapping) with the
/// request read from <see cref="HttpContext.Request"/> and the response written through <see cref="HttpContext.Response"/>
/// of a <see cref="ProxyHttpContext"/>, as YARP would see them. Against the httpclient variant it measures what the
/// HttpContext abstraction costs; against the yarp variant, what YARP adds on top of it.
/// </summary>
internal sealed class HttpContextForwarder(DownstreamClients clients, DownstreamChoice downstream, HttpMessageInvoker invoker, bool ownsInvoker)
    : InvokerForwarder(clients, downstream, invoker, ownsInvoker)
{
    private const int RequestBodyBufferSize = 16 * 1024;

    private readonly ProxyHttpContext _context = new();

    // One async method for the whole exchange, as in the httpclient variant, so both pay for one state machine.
    protected override async ValueTask ForwardThroughInvokerAsync(Exchange exchange)
    {
        var context = _context.Start(exchange);
        try
        {
            var aborted = context.RequestAborted;
            using var request = CreateRequest(context);
            if (request.Content is not null)
            {
                ExpectContinueForLargeOrChunkedBody(request.Headers, exchange.Head);
            }
            var switching = await SendAsync(request, exchange, aborted);
            if (await SwitchProtocolsAsync(switching, exchange))
            {
                return;
            }
            using var response = switching;

            // Validated as in the httpclient variant (a Content-Length the proxy cannot trust is a 502); the response feature
            // then frames the body from the Content-Length field copied below.
            DownstreamContentLength(response);
            var target = context.Response;
            target.StatusCode = (int)response.StatusCode;
            ForEachEndToEndField(response, target.Headers, static (headers, name, value) => ProxyHttpContext.AddField(headers, name, value));

            // Read straight into the response writer's memory, as the httpclient variant does, so the two variants differ
            // only in the layer in between. GetMemory sends the head (HEAD/204/304 then get memory that is discarded).
            var body = await response.Content.ReadAsStreamAsync(aborted);
            var writer = target.BodyWriter;
            if (exchange.Response.SendsHeadAtOnce && (await writer.FlushAsync(aborted)).IsCompleted)
            {
                ProxyThrow.ClientGone();
            }
            while (true)
            {
                var read = await ReadBodyAsync(body, writer.GetMemory(), exchange, aborted);
                if (read == 0)
                {
                    break;
                }
                writer.Advance(read);
                if ((await writer.FlushAsync(aborted)).IsCompleted)
                {
                    ProxyThrow.ClientGone();
                }
            }
            ForEachTrailer(response, target, static (target, name, value) => target.AppendTrailer(name, value));
            await target.CompleteAsync();
        }
        finally
        {
            await _context.EndAsync();
        }
    }

    private HttpRequestMessage CreateRequest(HttpContext context)
    {
        var source = context.Request;
        var rawTarget = context.Features.Get<IHttpRequestFeature>()!.RawTarget;
        var request = NewRequest(HttpMethod.Parse(source.Method), DownstreamPrefix + rawTarget);
        var contentLength = source.ContentLength;
        if (contentLength is not null || context.Features.Get<IHttpRequestBodyDetectionFeature>()?.CanHaveBody == true)
        {
            request.Content = new RequestStreamContent(source.Body, contentLength, Http2Downstream);
        }

        // The fields are the request side's policy already applied (RequestFeature): end-to-end fields, Host, and the
        // framing to generate; Content-Length goes to the content, Transfer-Encoding: chunked makes HttpClient chunk.
        var headers = request.Headers;
        foreach (var (name, values) in source.Headers)
        {
            foreach (var value in values)
            {
                if (!headers.TryAddWithoutValidation(name, value))
                {
                    // Content fields (Content-Type...) live on the content; without a body there is nothing to describe.
                    request.Content?.Headers.TryAddWithoutValidation(name, value);
                }
            }
        }
        // An upgrade request's Connection and Upgrade came with the fields (RequestFeature keeps them), for a downstream
        // that can switch.
        if (_context.Exchange.Upgrading && !AsksToUpgrade(_context.Exchange))
        {
            headers.Remove("Connection");
            headers.Remove("Upgrade");
        }
        _context.AddProxyFields(headers);
        AcceptTrailersFromDownstream(headers, _context.Exchange);
        return request;
    }

    /// <summary>Streams HttpContext.Request.Body.</summary>
    private sealed class RequestStreamContent(Stream body, long? length, bool flushEachWrite) : RequestContent(length, flushEachWrite)
    {
        protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context, CancellationToken cancellationToken)
        {
            if (!FlushEachWrite)
            {
                await body.CopyToAsync(stream, RequestBodyBufferSize, cancellationToken);
                return;
            }
            var buffer = ArrayPool<byte>.Shared.Rent(RequestBodyBufferSize);
            try
            {
                int read;
                while ((read = await body.ReadAsync(buffer, cancellationToken)) > 0)
                {
                    await WritePieceAsync(stream, buffer.AsMemory(0, read), cancellationToken);
                }
            }
            finally
            {
                ArrayPool<byte>.Shared.Return(buffer);
            }
        }
    }
}
