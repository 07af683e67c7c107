using System.Net;
using System.Net.Http.Headers;
using LLRP.Context;
using LLRP.Errors;
using LLRP.Http1;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;

namespace LLRP.Forwarding;

/// <summary>
/// The httpclient-httpcontext variant: the httpclient variant's exchange (same clients, same failure mapping) with the
/// request read from <see cref="HttpContext.Request"/> and the response written through <see cref="HttpContext.Response"/>
/// of a <see cref="ProxyHttpContext"/>, as YARP would see them. Against the httpclient variant it measures what the
/// HttpContext abstraction costs; against the yarp variant, what YARP adds on top of it.
/// </summary>
internal sealed class HttpContextForwarder(HttpClientForwarderFactory factory, Uri downstream, HttpMessageInvoker invoker, bool ownsInvoker) : RequestForwarder
{
    private const int RequestBodyBufferSize = 16 * 1024;

    private readonly string _origin = downstream.GetLeftPart(UriPartial.Authority);
    private readonly ProxyHttpContext _context = new();

    // One async method for the whole exchange, as in the httpclient variant, so both pay for one state machine.
    protected override async ValueTask ForwardAsync(ProxyConnection connection)
    {
        var context = _context.Start(connection);
        try
        {
            var requestFeature = context.Features.Get<IHttpRequestFeature>()!;
            if (requestFeature.RawTarget == "*")
            {
                // HttpRequestMessage always carries an absolute URI, so asterisk-form cannot be expressed.
                ProxyThrow.Throw(ProxyError.NotImplemented, "OPTIONS * is not supported by the httpclient-httpcontext variant.");
            }

            var aborted = context.RequestAborted;
            using var request = CreateRequest(context, requestFeature.RawTarget);
            HttpResponseMessage response;
            try
            {
                response = await factory.Pick(invoker).SendAsync(request, aborted);
            }
            catch (HttpRequestException e)
            {
                throw HttpClientForwarder.Translate(e);
            }
            catch (OperationCanceledException e) when (!aborted.IsCancellationRequested)
            {
                throw HttpClientForwarder.ConnectTimedOut(e);
            }
            using var _ = response;

            // Validated as in the httpclient variant (a Content-Length the proxy cannot trust is a 502); the response feature
            // then frames the body from the Content-Length field copied below.
            HttpClientForwarder.DownstreamContentLength(response);
            var target = context.Response;
            target.StatusCode = (int)response.StatusCode;
            response.Headers.NonValidated.TryGetValues("Connection", out var connectionOptions);
            CopyFields(target.Headers, response.Headers.NonValidated, connectionOptions);
            CopyFields(target.Headers, response.Content.Headers.NonValidated, connectionOptions);

            // Read straight into the response writer's memory, as the httpclient variant does, so the two variants differ
            // only in the layer in between. GetMemory sends the head (HEAD/204/304 then get memory that is discarded).
            var body = await response.Content.ReadAsStreamAsync(aborted);
            var writer = target.BodyWriter;
            while (true)
            {
                int read;
                try
                {
                    read = await body.ReadAsync(writer.GetMemory(), aborted);
                }
                catch (Exception e) when (e is HttpRequestException or IOException)
                {
                    throw HttpClientForwarder.BodyFailed(e);
                }
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
            await target.CompleteAsync();
        }
        finally
        {
            await _context.EndAsync();
        }
    }

    private HttpRequestMessage CreateRequest(HttpContext context, string rawTarget)
    {
        var source = context.Request;
        var request = HttpClientForwarder.NewRequest(System.Net.Http.HttpMethod.Parse(source.Method), _origin + rawTarget);
        var contentLength = source.ContentLength;
        if (contentLength is not null || context.Features.Get<IHttpRequestBodyDetectionFeature>()?.CanHaveBody == true)
        {
            request.Content = new RequestStreamContent(source.Body, contentLength);
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
        _context.AddProxyFields(headers);
        return request;
    }

    private static void CopyFields(IHeaderDictionary target, HttpHeadersNonValidated fields, HeaderStringValues connectionOptions)
    {
        foreach (var (name, values) in fields)
        {
            if (HttpClientForwarder.IsNominated(name, connectionOptions))
            {
                continue;
            }
            foreach (var value in values)
            {
                ProxyHttpContext.AddField(target, name, value);
            }
        }
    }

    public override void Dispose()
    {
        if (ownsInvoker)
        {
            invoker.Dispose();
        }
    }

    /// <summary>Streams HttpContext.Request.Body; HttpClient frames it again (Content-Length or chunked).</summary>
    private sealed class RequestStreamContent(Stream body, long? length) : HttpContent
    {
        protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context) =>
            SerializeToStreamAsync(stream, context, CancellationToken.None);

        protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context, CancellationToken cancellationToken) =>
            body.CopyToAsync(stream, RequestBodyBufferSize, cancellationToken);

        protected override bool TryComputeLength(out long computed)
        {
            computed = length ?? 0;
            return length.HasValue;
        }
    }
}
