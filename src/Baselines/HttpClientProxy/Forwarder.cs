using System.Net;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.Primitives;

namespace HttpClientProxy;

/// <summary>
/// Forwards each request with one shared <see cref="HttpMessageInvoker"/> over <see cref="SocketsHttpHandler"/>,
/// configured as YARP's ForwarderHttpClientFactory configures it.
/// </summary>
public sealed class Forwarder : IDisposable
{
    // The path and query go downstream as the client sent them; Uri would otherwise unescape and collapse dot segments.
    private static readonly UriCreationOptions _verbatim = new() { DangerousDisablePathAndQueryCanonicalization = true };

    private readonly HttpMessageInvoker _invoker;
    private readonly string[] _downstreams;
    private readonly TimeSpan _timeout;
    private uint _next;

    public Forwarder(ForwarderOptions options)
    {
        _downstreams = options.Downstreams;
        _timeout = options.DownstreamResponseTimeout;
        var handler = new SocketsHttpHandler
        {
            // A proxy forwards exactly what it got: no system proxy, no following redirects, no decompressing,
            // no cookie jar shared across clients (YARP's four settings).
            UseProxy = false,
            AllowAutoRedirect = false,
            AutomaticDecompression = DecompressionMethods.None,
            UseCookies = false,
            // YARP's value; failing to connect in time is answered with 504.
            ConnectTimeout = TimeSpan.FromSeconds(15),
            // YARP's value; only matters for an HTTP/2 downstream.
            EnableMultipleHttp2Connections = true,
            // Connections are pooled and reused with the handler's defaults: no cap per server and a 1 min idle timeout,
            // below Kestrel's 130 s keep-alive so the downstream never closes a connection we are about to reuse.
        };
        _invoker = new HttpMessageInvoker(handler, disposeHandler: true);
    }

    public async Task ForwardAsync(HttpContext context)
    {
        HttpRequestMessage message;
        try
        {
            message = CreateRequest(context);
        }
        catch (UriFormatException)
        {
            context.Response.StatusCode = StatusCodes.Status400BadRequest;
            return;
        }

        // One token for the whole exchange: the client going away, or no downstream progress for the timeout
        // (re-armed before every body read, so it limits idle time, not the length of a download).
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(context.RequestAborted);
        timeout.CancelAfter(_timeout);
        using (message)
        {
            HttpResponseMessage response;
            try
            {
                response = await _invoker.SendAsync(message, timeout.Token);
            }
            catch (Exception e)
            {
                Fail(context, e, timeout);
                return;
            }

            using (response)
            {
                try
                {
                    CopyResponseHead(context, response);
                    await CopyResponseBodyAsync(context, response, timeout);
                }
                catch (Exception e)
                {
                    Fail(context, e, timeout);
                }
            }
        }
    }

    public void Dispose() => _invoker.Dispose();

    private HttpRequestMessage CreateRequest(HttpContext context)
    {
        var request = context.Request;
        var downstream = _downstreams.Length == 1 ? _downstreams[0] : _downstreams[Interlocked.Increment(ref _next) % (uint)_downstreams.Length];
        var message = new HttpRequestMessage(HttpMethod.Parse(request.Method), new Uri(downstream + Target(context), in _verbatim))
        {
            // The downstreams are plain-HTTP origins: HTTP/1.1, as the other proxies in the comparison speak to them.
            Version = HttpVersion.Version11,
            VersionPolicy = HttpVersionPolicy.RequestVersionOrLower,
        };

        var headers = request.Headers;
        var chunked = headers.TransferEncoding.Count > 0;
        // Only a request framed with Content-Length or chunked has a body (RFC 9112 §6.3); HttpClient re-frames it.
        if (chunked || request.ContentLength is not null)
        {
            message.Content = new RequestBodyContent(request.BodyReader);
        }

        var connection = headers.Connection;
        foreach (var (name, value) in headers)
        {
            // Host is regenerated from the downstream's authority; ':'-names are HTTP/2 pseudo-headers, not fields.
            if (HopByHop.IsHopByHop(name, connection) || name.Equals("Host", StringComparison.OrdinalIgnoreCase) || name.StartsWith(':'))
            {
                continue;
            }
            // Transfer-Encoding wins over Content-Length (RFC 9112 §6.3); Kestrel has de-chunked the body, so a stale
            // length must not reach the downstream.
            if (chunked && name.Equals("Content-Length", StringComparison.OrdinalIgnoreCase))
            {
                continue;
            }
            // Content-* fields are refused by the request's headers and belong on its content.
            if (!AddHeader(message.Headers, name, value) && message.Content is not null)
            {
                AddHeader(message.Content.Headers, name, value);
            }
        }
        return message;
    }

    /// <summary>The request-target as received when it is origin-form; rebuilt from the parsed path otherwise.</summary>
    private static string Target(HttpContext context)
    {
        var raw = context.Features.GetRequiredFeature<IHttpRequestFeature>().RawTarget;
        if (raw.StartsWith('/'))
        {
            return raw;
        }
        // Absolute-form ("http://host/path") goes downstream as origin-form (RFC 9112 §3.2.2); "OPTIONS *" becomes "/".
        var request = context.Request;
        var target = request.PathBase.ToUriComponent() + request.Path.ToUriComponent() + request.QueryString.ToUriComponent();
        return target.Length == 0 ? "/" : target;
    }

    private static bool AddHeader(System.Net.Http.Headers.HttpHeaders headers, string name, StringValues value) =>
        value.Count == 1
            ? headers.TryAddWithoutValidation(name, value.ToString())
            : headers.TryAddWithoutValidation(name, value.ToArray());

    private static void CopyResponseHead(HttpContext context, HttpResponseMessage response)
    {
        var target = context.Response;
        target.StatusCode = (int)response.StatusCode;
        var connection = response.Headers.NonValidated.TryGetValues("Connection", out var values) ? ToStringValues(values) : default;
        CopyHeaders(response.Headers.NonValidated, target.Headers, connection);
        // Content-Type, Content-Length and the other content fields; a Content-Length makes Kestrel frame the body
        // with it, and without one Kestrel chunks it.
        CopyHeaders(response.Content.Headers.NonValidated, target.Headers, connection);
    }

    private static void CopyHeaders(System.Net.Http.Headers.HttpHeadersNonValidated source, IHeaderDictionary target, StringValues connection)
    {
        foreach (var (name, values) in source)
        {
            if (!HopByHop.IsHopByHop(name, connection))
            {
                // Each value stays a separate field line: Set-Cookie cannot be joined with commas (RFC 9110 §5.3).
                target[name] = ToStringValues(values);
            }
        }
    }

    private static StringValues ToStringValues(System.Net.Http.Headers.HeaderStringValues values)
    {
        if (values.Count == 1)
        {
            return values.ToString();
        }
        var array = new string[values.Count];
        var i = 0;
        foreach (var value in values)
        {
            array[i++] = value;
        }
        return array;
    }

    private async Task CopyResponseBodyAsync(HttpContext context, HttpResponseMessage response, CancellationTokenSource timeout)
    {
        var source = await response.Content.ReadAsStreamAsync(timeout.Token);
        var writer = context.Response.BodyWriter;
        // Reading straight into Kestrel's output buffer saves a copy; the response is not started first, so the head
        // and the first body bytes leave in one write.
        while (true)
        {
            timeout.CancelAfter(_timeout);
            var read = await source.ReadAsync(writer.GetMemory(), timeout.Token);
            if (read == 0)
            {
                return;
            }
            writer.Advance(read);
            var flush = await writer.FlushAsync(timeout.Token);
            if (flush.IsCompleted)
            {
                return;
            }
        }
    }

    private static void Fail(HttpContext context, Exception e, CancellationTokenSource timeout)
    {
        if (context.RequestAborted.IsCancellationRequested)
        {
            // The client is gone: nobody to answer.
            return;
        }
        if (context.Response.HasStarted)
        {
            // Part of the body is out: only closing the connection tells the client it is incomplete (RFC 9112 §6.3).
            context.Abort();
            return;
        }
        context.Response.Clear();
        context.Response.StatusCode = StatusFor(e, timeout.IsCancellationRequested);
    }

    /// <summary>504 when the downstream was too slow, the client's own error for a bad request body, else 502.</summary>
    private static int StatusFor(Exception e, bool timedOut)
    {
        if (timedOut)
        {
            return StatusCodes.Status504GatewayTimeout;
        }
        for (var inner = e; inner is not null; inner = inner.InnerException)
        {
            switch (inner)
            {
                // SocketsHttpHandler reports its ConnectTimeout as a cancellation wrapping a TimeoutException.
                case TimeoutException:
                    return StatusCodes.Status504GatewayTimeout;
                // Kestrel rejected the client's body (too large, bad chunking) while HttpClient was sending it.
                case BadHttpRequestException bad:
                    return bad.StatusCode;
            }
        }
        return StatusCodes.Status502BadGateway;
    }
}
