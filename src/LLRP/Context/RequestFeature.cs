using System.Runtime.CompilerServices;
using System.Text;
using LLRP.Errors;
using LLRP.Exchanges;
using LLRP.Http1;
using LLRP.Semantics;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Net.Http.Headers;

namespace LLRP.Context;

/// <summary>
/// The request as an HttpContext sees it, filled from the shared request side's <see cref="RequestHead"/>, which has
/// already validated it and applied the header policy: <see cref="Headers"/> holds the end-to-end fields, the Host
/// to send (the absolute-form authority if there was one) and the framing the proxy will generate (a canonical
/// Content-Length, or Transfer-Encoding: chunked). Hop-by-hop, Connection-nominated and Expect fields are absent, except
/// the Upgrade and "Connection: upgrade" of a request that asks to switch protocols where the front end can tunnel.
/// Via and X-Forwarded-For are the forwarder's to add. <see cref="Body"/> streams the de-framed body.
/// One instance per connection; <see cref="Start"/> per request.
/// </summary>
internal sealed class RequestFeature : IHttpRequestFeature, IHttpRequestBodyDetectionFeature
{
    private readonly HeaderDictionary _ownHeaders = new();
    private readonly RequestBodyStream _ownBody = new();
    private string? _path;
    private string? _queryString;
    private string? _lastCustomMethod;

    public RequestFeature()
    {
        Headers = _ownHeaders;
        Body = _ownBody;
    }

    public string Protocol { get; set; } = HttpProtocol.Http11;
    public string Scheme { get; set; } = "http";
    public string Method { get; set; } = HttpMethods.Get;
    public string PathBase { get; set; } = "";

    /// <summary>The decoded path (PathString's decoding of the raw path); computed from <see cref="RawTarget"/> on first use.</summary>
    public string Path
    {
        get => _path ??= SplitTarget().Path;
        set => _path = value;
    }

    /// <summary>The query with its '?', as received; computed from <see cref="RawTarget"/> on first use.</summary>
    public string QueryString
    {
        get => _queryString ??= SplitTarget().Query;
        set => _queryString = value;
    }

    /// <summary>The request-target exactly as received in origin-form, or "*".</summary>
    public string RawTarget { get; set; } = "/";
    public IHeaderDictionary Headers { get; set; }
    public Stream Body { get; set; }

    /// <summary>A body follows the head (chunked, or a non-zero Content-Length), as Kestrel reports it.</summary>
    public bool CanHaveBody { get; private set; }

    public void Start(Exchange exchange)
    {
        var head = exchange.Head;
        // The protocol the client spoke (YARP streams a gRPC request body with a flush per write only from an HTTP/2 client).
        // An HTTP/2 extended CONNECT for WebSocket is forwarded as the HTTP/1.1 upgrade the front end made of it, key
        // included (RequestHead.UpgradeToWebSocket): HTTP/1.1 here, or YARP would translate it again with a key of its own.
        Protocol = head.Protocol switch
        {
            ClientProtocol.Http2 when !exchange.Upgrading => HttpProtocol.Http2,
            ClientProtocol.Http10 => HttpProtocol.Http10,
            _ => HttpProtocol.Http11,
        };
        Scheme = exchange.Tls ? "https" : "http";
        Method = MethodString(head);
        PathBase = "";
        RawTarget = Encoding.ASCII.GetString(head.Target);
        _path = _queryString = null;
        Body = _ownBody;
        _ownBody.Start(exchange);

        var headers = _ownHeaders;
        Headers = headers;
        headers.Clear();
        var authority = head.Authority;
        if (!authority.IsEmpty)
        {
            headers[HeaderNames.Host] = Encoding.Latin1.GetString(authority);
        }
        for (var i = 0; i < head.HeaderCount; i++)
        {
            if (head.Header(i).Kind == HeaderKind.Other)
            {
                ProxyHttpContext.AddField(headers, Encoding.Latin1.GetString(head.Name(i)), Encoding.Latin1.GetString(head.Value(i)));
            }
        }
        if (exchange.Upgrading)
        {
            // An upgrade request (RequestHead.IsUpgrade) keeps what asks for the switch, as it reaches the downstream: the
            // Upgrade value and "Connection: upgrade", nothing else of the client's Connection.
            headers[HeaderNames.Connection] = "upgrade";
            headers[HeaderNames.Upgrade] = Encoding.Latin1.GetString(head.UpgradeProtocols);
        }
        switch (head.Framing)
        {
            case BodyFraming.ContentLength:
                headers.ContentLength = head.ContentLength;
                CanHaveBody = head.ContentLength > 0;
                break;
            case BodyFraming.Chunked or BodyFraming.UntilEnd:
                headers[HeaderNames.TransferEncoding] = "chunked";
                CanHaveBody = true;
                break;
            default:
                CanHaveBody = false;
                break;
        }
    }

    private (string Path, string Query) SplitTarget()
    {
        var target = RawTarget;
        if (target == "*")
        {
            return ("", "");
        }
        var query = target.IndexOf('?');
        return query < 0
            ? (PathString.FromUriComponent(target).Value ?? "", "")
            : (PathString.FromUriComponent(target[..query]).Value ?? "", target[query..]);
    }

    private string MethodString(RequestHead head) => head.Method switch
    {
        RequestMethod.Get => HttpMethods.Get,
        RequestMethod.Post => HttpMethods.Post,
        RequestMethod.Put => HttpMethods.Put,
        RequestMethod.Delete => HttpMethods.Delete,
        RequestMethod.Head => HttpMethods.Head,
        RequestMethod.Options => HttpMethods.Options,
        RequestMethod.Trace => HttpMethods.Trace,
        RequestMethod.Patch => HttpMethods.Patch,
        _ => CustomMethod(head.MethodBytes),
    };

    // Extension methods are rare but, when used, usually repeat on a connection: keep the last one's string.
    private string CustomMethod(ReadOnlySpan<byte> method)
    {
        if (_lastCustomMethod is { } last && last.Length == method.Length && Ascii.Equals(method, last))
        {
            return last;
        }
        return _lastCustomMethod = Encoding.ASCII.GetString(method);
    }

    /// <summary>The client's de-framed body (RequestBodyReader); reading it counts as downstream activity.</summary>
    private sealed class RequestBodyStream : Stream
    {
        private Exchange _exchange = null!;

        public void Start(Exchange exchange) => _exchange = exchange;

        public override bool CanRead => true;
        public override bool CanSeek => false;
        public override bool CanWrite => false;
        public override long Length => throw new NotSupportedException();
        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

        [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
        public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            int read;
            try
            {
                read = await _exchange.Body.ReadAsync(buffer, cancellationToken);
            }
            catch (ProxyException e)
            {
                // The client's failure, known here: HttpClient and YARP will report their send failed, and the exchange
                // answers this instead.
                _exchange.RequestBodyFailed(e);
                throw;
            }
            _exchange.RestartDeadline();
            return read;
        }

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        // Like Kestrel without AllowSynchronousIO: a blocking read would hold a thread per slow client.
        public override int Read(byte[] buffer, int offset, int count) =>
            throw new InvalidOperationException("Synchronous reads of the request body are not supported; use ReadAsync.");

        public override void Flush()
        {
        }

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
        public override void SetLength(long value) => throw new NotSupportedException();
        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }
}
