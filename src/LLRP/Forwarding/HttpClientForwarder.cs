using System.Buffers;
using System.Globalization;
using System.Net;
using System.Net.Http.Headers;
using System.Text;
using LLRP.Errors;
using LLRP.Http1;
using Yarp.ReverseProxy.Forwarder;
using KestrelMethod = Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http.HttpMethod;

namespace LLRP.Forwarding;

/// <summary>
/// The clients of the httpclient and httpclient-httpcontext variants: HttpMessageInvoker over SocketsHttpHandler, one
/// per inbound connection by default, or a shared set ("shareClients") assigned per connection or rotated per request
/// ("shareClients.roundRobin"). The httpclient, httpclient-httpcontext and yarp variants get the same clients, so that
/// they differ only in the layers above the client.
/// </summary>
internal sealed class HttpClientForwarderFactory : IForwarderFactory
{
    private readonly ProxyOptions _options;
    private readonly HttpMessageInvoker[] _shared;
    private int _next;

    public HttpClientForwarderFactory(ProxyOptions options)
    {
        _options = options;
        if (options.Client == ClientKind.Yarp)
        {
            Forwarder = YarpForwarder.CreateHttpForwarder();
            // HTTP/1.1 exactly, as the other variants send; YARP's activity timeout is the proxy's downstreamResponseTimeout.
            ForwarderConfig = new ForwarderRequestConfig
            {
                ActivityTimeout = options.DownstreamResponseTimeout,
                Version = HttpVersion.Version11,
                VersionPolicy = HttpVersionPolicy.RequestVersionExact,
            };
        }
        _shared = new HttpMessageInvoker[options.ShareClients ? options.ShareClientsCount : 0];
        for (var i = 0; i < _shared.Length; i++)
        {
            _shared[i] = CreateInvoker(options);
        }
    }

    /// <summary>The yarp variant's HttpForwarder, shared by every connection as YARP shares it (null for the others).</summary>
    internal IHttpForwarder Forwarder { get; } = null!;

    internal ForwarderRequestConfig ForwarderConfig { get; } = ForwarderRequestConfig.Empty;

    public string Description => _options.ShareClients
        ? $"{ProxyOptions.Name(_options.Client)}: {_shared.Length} shared clients, {(_options.ShareClientsRoundRobin ? "rotated per request" : "assigned per connection")}"
        : $"{ProxyOptions.Name(_options.Client)}: one client per inbound connection";

    public IForwarder Create(Uri downstream, int connectionIndex)
    {
        var owns = _shared.Length == 0;
        var invoker = owns ? CreateInvoker(_options) : _shared[(uint)connectionIndex % (uint)_shared.Length];
        return _options.Client switch
        {
            ClientKind.HttpClientWithContext => new HttpContextForwarder(this, downstream, invoker, owns),
            ClientKind.Yarp => new YarpForwarder(this, downstream, invoker, owns),
            _ => new HttpClientForwarder(this, downstream, invoker, owns),
        };
    }

    /// <summary>The invoker for the next request: the connection's own, or the next shared one in round-robin mode.</summary>
    internal HttpMessageInvoker Pick(HttpMessageInvoker assigned) =>
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

internal sealed class HttpClientForwarder(HttpClientForwarderFactory factory, Uri downstream, HttpMessageInvoker invoker, bool ownsInvoker) : RequestForwarder
{
    private readonly string _origin = downstream.GetLeftPart(UriPartial.Authority);

    protected override async ValueTask ForwardAsync(ProxyConnection connection)
    {
        var head = connection.Head;
        if (head.Target is [(byte)'*'])
        {
            // HttpRequestMessage always carries an absolute URI, so asterisk-form cannot be expressed.
            ProxyThrow.Throw(ProxyError.NotImplemented, "OPTIONS * is not supported by the httpclient variant.");
        }

        using var request = CreateRequest(connection);
        HttpResponseMessage response;
        try
        {
            response = await factory.Pick(invoker).SendAsync(request, connection.Aborted);
        }
        catch (HttpRequestException e)
        {
            throw Translate(e);
        }
        catch (OperationCanceledException e) when (!connection.Aborted.IsCancellationRequested)
        {
            throw ConnectTimedOut(e);
        }

        using (response)
        {
            await RelayAsync(connection, response);
        }
    }

    // The failure mapping both HttpClient variants share. (The try/catch stays in each caller: a wrapping async helper
    // would cost a state machine per request or per body read.)

    /// <summary>HttpClient's token-independent cancellation before a response: its connect timeout.</summary>
    internal static ProxyException ConnectTimedOut(OperationCanceledException e) =>
        new(ProxyError.DownstreamUnavailable, "Connecting to the downstream timed out.", e);

    /// <summary>A read of the downstream body failed (HttpRequestException or IOException): the body was cut short.</summary>
    internal static ProxyException BodyFailed(Exception e) =>
        new(ProxyError.DownstreamBodyCutShort, "The downstream body failed before its end.", e);

    private HttpRequestMessage CreateRequest(ProxyConnection connection)
    {
        var head = connection.Head;
        var request = NewRequest(Method(head), _origin + Encoding.ASCII.GetString(head.Target));
        if (head.Framing != BodyFraming.None)
        {
            request.Content = new RequestBodyContent(connection, head.Framing == BodyFraming.ContentLength ? head.ContentLength : null);
            request.Headers.TransferEncodingChunked = head.Framing == BodyFraming.Chunked;
        }

        var headers = request.Headers;
        headers.Host = Encoding.Latin1.GetString(head.Authority);
        for (var i = 0; i < head.HeaderCount; i++)
        {
            if (head.Header(i).Kind != HeaderKind.Other)
            {
                continue;
            }
            var name = Encoding.Latin1.GetString(head.Name(i));
            var value = Encoding.Latin1.GetString(head.Value(i));
            if (!headers.TryAddWithoutValidation(name, value))
            {
                // Content fields (Content-Type...) live on the content; without a body there is nothing to describe.
                request.Content?.Headers.TryAddWithoutValidation(name, value);
            }
        }
        headers.TryAddWithoutValidation("Via", head.Version == Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http.HttpVersion.Http10 ? "1.0 llrp" : "1.1 llrp");
        headers.TryAddWithoutValidation("X-Forwarded-For", Encoding.ASCII.GetString(connection.ForwardedFor));
        return request;
    }

    private static async ValueTask RelayAsync(ProxyConnection connection, HttpResponseMessage response)
    {
        var writer = connection.Response;
        var length = DownstreamContentLength(response);
        writer.BeginHead((int)response.StatusCode);
        response.Headers.NonValidated.TryGetValues("Connection", out var connectionOptions);
        WriteFields(writer, response.Headers.NonValidated, connectionOptions);
        WriteFields(writer, response.Content.Headers.NonValidated, connectionOptions);

        if (!writer.EndHead(length is null ? DownstreamBody.UntilEnd : DownstreamBody.ContentLength, length ?? 0))
        {
            return;
        }

        var body = await response.Content.ReadAsStreamAsync(connection.Aborted);
        while (writer.ExpectsMoreBody)
        {
            int read;
            try
            {
                read = await body.ReadAsync(writer.GetBodyMemory(), connection.Aborted);
            }
            catch (Exception e) when (e is HttpRequestException or IOException)
            {
                throw BodyFailed(e);
            }
            if (read == 0)
            {
                break;
            }
            writer.AdvanceBody(read);
            connection.Touch();
            // A body that is now complete is flushed once with the head by the connection loop.
            if (writer.ExpectsMoreBody && (await writer.FlushAsync()).IsCompleted)
            {
                ProxyThrow.ClientGone();
            }
        }
        writer.CompleteBody();
    }

    // RFC 9112 §6.3 rule 5: an invalid or repeated Content-Length, or one beside Transfer-Encoding, means the downstream's
    // framing cannot be trusted; a proxy discards the response and answers 502. HttpClient itself is lenient here.
    internal static long? DownstreamContentLength(HttpResponseMessage response)
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

    private static void WriteFields(ResponseWriter writer, HttpHeadersNonValidated fields, HeaderStringValues connectionOptions)
    {
        foreach (var (name, values) in fields)
        {
            if (IsNominated(name, connectionOptions))
            {
                continue;
            }
            foreach (var value in values)
            {
                writer.WriteField(name, value);
            }
        }
    }

    // RFC 9110 §7.6.1: the downstream's Connection names fields meant for this hop only.
    internal static bool IsNominated(string name, HeaderStringValues connectionOptions)
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

    /// <summary>HttpClient's failure before a response: the client's bad body (unwrapped), an invalid response, or no downstream.</summary>
    internal static Exception Translate(HttpRequestException e)
    {
        for (Exception? inner = e; inner is not null; inner = inner.InnerException)
        {
            if (inner is ProxyException body)
            {
                return body;
            }
        }
        return e.HttpRequestError is HttpRequestError.InvalidResponse or HttpRequestError.ResponseEnded
            ? new ProxyException(ProxyError.DownstreamInvalidResponse, "The downstream response was not valid HTTP/1.1.", e)
            : new ProxyException(ProxyError.DownstreamUnavailable, "The downstream could not be reached.", e);
    }

    private static readonly UriCreationOptions s_rawUri = new() { DangerousDisablePathAndQueryCanonicalization = true };

    /// <summary>An absolute URI whose path and query are sent exactly as written.</summary>
    internal static Uri RawUri(string uri) => new(uri, s_rawUri);

    /// <summary>An HTTP/1.1 request to <paramref name="uri"/>, whose path and query are sent exactly as the client wrote them.</summary>
    internal static HttpRequestMessage NewRequest(System.Net.Http.HttpMethod method, string uri) => new(method, RawUri(uri))
    {
        Version = HttpVersion.Version11,
        VersionPolicy = HttpVersionPolicy.RequestVersionExact,
    };

    private static System.Net.Http.HttpMethod Method(RequestHead head) => head.Method switch
    {
        KestrelMethod.Get => System.Net.Http.HttpMethod.Get,
        KestrelMethod.Post => System.Net.Http.HttpMethod.Post,
        KestrelMethod.Put => System.Net.Http.HttpMethod.Put,
        KestrelMethod.Delete => System.Net.Http.HttpMethod.Delete,
        KestrelMethod.Head => System.Net.Http.HttpMethod.Head,
        KestrelMethod.Options => System.Net.Http.HttpMethod.Options,
        KestrelMethod.Trace => System.Net.Http.HttpMethod.Trace,
        KestrelMethod.Patch => System.Net.Http.HttpMethod.Patch,
        _ => new System.Net.Http.HttpMethod(Encoding.ASCII.GetString(head.MethodBytes)),
    };

    public override void Dispose()
    {
        if (ownsInvoker)
        {
            invoker.Dispose();
        }
    }

    /// <summary>Streams the client's de-framed body; HttpClient frames it again (Content-Length or chunked).</summary>
    private sealed class RequestBodyContent(ProxyConnection connection, long? length) : HttpContent
    {
        protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context) =>
            SerializeToStreamAsync(stream, context, CancellationToken.None);

        protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context, CancellationToken cancellationToken)
        {
            var buffer = ArrayPool<byte>.Shared.Rent(16 * 1024);
            try
            {
                while (true)
                {
                    var read = await connection.Body.ReadAsync(buffer, connection.Aborted);
                    if (read == 0)
                    {
                        return;
                    }
                    await stream.WriteAsync(buffer.AsMemory(0, read), cancellationToken);
                    connection.Touch();
                }
            }
            finally
            {
                ArrayPool<byte>.Shared.Return(buffer);
            }
        }

        protected override bool TryComputeLength(out long computed)
        {
            computed = length ?? 0;
            return length.HasValue;
        }
    }
}
