using System.IO.Pipelines;
using System.Runtime.CompilerServices;
using LLRP.Errors;
using LLRP.Exchanges;
using LLRP.Http1;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Net.Http.Headers;

namespace LLRP.Context;

/// <summary>
/// The response as an HttpContext writes it, straight into the connection's <see cref="ResponseWriter"/>: nothing is
/// buffered here. The head (status, <see cref="Headers"/> through the writer's hop-by-hop policy, client framing) is
/// written when the body starts (first GetMemory/write/flush, or StartAsync) or, for an empty body, at
/// <see cref="CompleteAsync"/>; the client framing is the writer's choice from the Content-Length field: that length,
/// else chunked for HTTP/1.1 and close-delimited for HTTP/1.0, and nothing for HEAD/204/304. A response that completes
/// before any body was written, without Content-Length, is sent with Content-Length: 0 (as Kestrel does).
/// CompleteAsync ends the body (the last chunk); the connection flushes after the exchange, and a flush once the
/// body is complete is left to it.
/// One instance per connection; <see cref="Reset"/> per request.
/// </summary>
internal sealed class ResponseFeature : IHttpResponseFeature, IHttpResponseBodyFeature, IHttpResponseTrailersFeature, IHttpUpgradeFeature
{
    // Where the bytes of a body that is not sent (HEAD, 204, 304) go: shared, because nobody ever reads it.
    private static readonly byte[] s_discard = new byte[16 * 1024];

    private enum Lease : byte
    {
        None,
        /// <summary>The memory handed out is the writer's body memory.</summary>
        Direct,
        /// <summary>The caller asked for more than the writer had at once: the bytes are copied in on Advance.</summary>
        Scratch,
        /// <summary>There is no body to send.</summary>
        Discard,
    }

    private readonly HeaderDictionary _ownHeaders = new();
    private readonly HeaderDictionary _ownTrailers = new();
    private readonly LifetimeFeature _lifetime;
    private readonly BodyStream _stream;
    private readonly BodyWriter _writer;
    private Exchange _exchange = null!;
    private List<KeyValuePair<Func<object, Task>, object>>? _onStarting;
    private List<KeyValuePair<Func<object, Task>, object>>? _onCompleted;
    private byte[]? _scratch;
    private Lease _lease;
    private bool _bodyFollows;
    private bool _completed;
    private int _statusCode = 200;

    public ResponseFeature(LifetimeFeature lifetime)
    {
        _lifetime = lifetime;
        _stream = new BodyStream(this);
        _writer = new BodyWriter(this);
        Headers = _ownHeaders;
        Trailers = _ownTrailers;
        Body = _stream;
    }

    public int StatusCode
    {
        get => _statusCode;
        set
        {
            ThrowIfStarted();
            _statusCode = value;
        }
    }

    /// <summary>Not sent: the writer regenerates the reason phrase (RFC 9112 §4 allows it).</summary>
    public string? ReasonPhrase { get; set; }
    public IHeaderDictionary Headers { get; set; }
    public Stream Body { get; set; }
    public bool HasStarted { get; private set; }

    /// <summary>
    /// The trailer fields to send, collected until <see cref="CompleteAsync"/> hands them to the writer, whose trailer
    /// policy decides which reach the client (only an HTTP/2 client, from an HTTP/2 downstream). Always writable, so
    /// YARP's HttpForwarder copies the downstream's trailers here as HttpClient's variant does.
    /// </summary>
    public IHeaderDictionary Trailers { get; set; }

    Stream IHttpResponseBodyFeature.Stream => _stream;
    PipeWriter IHttpResponseBodyFeature.Writer => _writer;

    public void Reset(Exchange exchange)
    {
        _exchange = exchange;
        _statusCode = 200;
        ReasonPhrase = null;
        _ownHeaders.IsReadOnly = false;
        _ownHeaders.Clear();
        Headers = _ownHeaders;
        _ownTrailers.Clear();
        Trailers = _ownTrailers;
        Body = _stream;
        HasStarted = _bodyFollows = _completed = false;
        _lease = Lease.None;
        _onStarting?.Clear();
        _onCompleted?.Clear();
    }

    /// <summary>
    /// The request asked to switch protocols and the front end can tunnel (<see cref="Exchange.Upgrading"/>): a 101
    /// may be relayed. As Kestrel's HTTP/1.1 layer offers it, here for YARP's HttpForwarder, which forwards such a
    /// request with its Upgrade and upgrades the client with <see cref="UpgradeAsync"/> when the downstream switches.
    /// </summary>
    public bool IsUpgradableRequest => _exchange.Upgrading;

    /// <summary>
    /// The downstream switched protocols and the caller copied its fields: the same rule as every variant's (a tunnel
    /// opens only for a request that asked to upgrade, to a protocol it offered; any other switch is the downstream's
    /// error, a 502), then a 101 head to the client (as Kestrel's UpgradeAsync, whatever status was set), flushed, and
    /// the client connection as the stream the caller relays the tunnel through.
    /// </summary>
    public async Task<Stream> UpgradeAsync()
    {
        ThrowIfAborted();
        var upgrade = Headers[HeaderNames.Upgrade].ToString();
        if (!_exchange.Upgrading || upgrade.Length == 0 || !_exchange.Head.AcceptsSwitchTo(System.Text.Encoding.Latin1.GetBytes(upgrade)))
        {
            ProxyThrow.Throw(ProxyError.DownstreamInvalidResponse, "The downstream switched protocols although the request did not ask for that protocol.");
        }
        ThrowIfStarted();
        HasStarted = true;
        _statusCode = StatusCodes.Status101SwitchingProtocols;
        var writer = _exchange.Response;
        writer.BeginSwitch();
        foreach (var (name, values) in Headers)
        {
            // Written by EndSwitch: the Upgrade switched to and "Connection: upgrade".
            if (name.Equals(HeaderNames.Upgrade, StringComparison.OrdinalIgnoreCase) || name.Equals(HeaderNames.Connection, StringComparison.OrdinalIgnoreCase))
            {
                continue;
            }
            foreach (var value in values)
            {
                writer.WriteField(name, value ?? "");
            }
        }
        writer.EndSwitch(upgrade);
        _completed = true;
        if ((await writer.FlushAsync()).IsCompleted)
        {
            ProxyThrow.ClientGone();
        }
        return _exchange.SwitchProtocolsInPlace();
    }

    public void OnStarting(Func<object, Task> callback, object state)
    {
        ThrowIfStarted();
        (_onStarting ??= []).Add(new(callback, state));
    }

    public void OnCompleted(Func<object, Task> callback, object state) => (_onCompleted ??= []).Add(new(callback, state));

    /// <summary>Runs the OnCompleted callbacks, last registered first (as Kestrel does), once the exchange is over.</summary>
    public async ValueTask RunOnCompletedAsync()
    {
        if (_onCompleted is not { Count: > 0 } callbacks)
        {
            return;
        }
        for (var i = callbacks.Count - 1; i >= 0; i--)
        {
            await callbacks[i].Key(callbacks[i].Value);
        }
        callbacks.Clear();
    }

    // Nothing is buffered here, so there is nothing to disable.
    public void DisableBuffering()
    {
    }

    public Task StartAsync(CancellationToken cancellationToken = default)
    {
        ThrowIfAborted();
        return StartAsync(completing: false).AsTask();
    }

    public Task SendFileAsync(string path, long offset, long? count, CancellationToken cancellationToken = default) =>
        SendFileFallback.SendFileAsync(_stream, path, offset, count, cancellationToken);

    public Task CompleteAsync() => CompleteCoreAsync().AsTask();

    private async ValueTask CompleteCoreAsync()
    {
        if (_completed)
        {
            return;
        }
        ThrowIfAborted();
        await StartAsync(completing: true);
        _completed = true;
        foreach (var (name, values) in Trailers)
        {
            foreach (var value in values)
            {
                if (value is not null)
                {
                    _exchange.Response.WriteTrailer(name, value);
                }
            }
        }
        if (_bodyFollows)
        {
            _exchange.Response.CompleteBody();
        }
    }

    private ValueTask StartAsync(bool completing)
    {
        if (HasStarted)
        {
            return default;
        }
        if (_onStarting is { Count: > 0 })
        {
            return RunOnStartingAsync(completing);
        }
        WriteHead(completing);
        return default;
    }

    private async ValueTask RunOnStartingAsync(bool completing)
    {
        var callbacks = _onStarting!;
        for (var i = callbacks.Count - 1; i >= 0; i--)
        {
            await callbacks[i].Key(callbacks[i].Value);
        }
        callbacks.Clear();
        WriteHead(completing);
    }

    private void WriteHead(bool completing)
    {
        var status = _statusCode;
        if (status is < 100 or > 599)
        {
            ProxyThrow.Throw(ProxyError.DownstreamInvalidResponse, "Invalid downstream status code.");
        }
        var headers = Headers;
        var body = DownstreamBody.UntilEnd;
        long length = 0;
        if (headers.TryGetValue(HeaderNames.ContentLength, out var contentLength) && contentLength.Count > 0)
        {
            if (contentLength.Count != 1 || !HeaderUtilities.TryParseNonNegativeInt64(contentLength.ToString(), out length))
            {
                ProxyThrow.Throw(ProxyError.DownstreamInvalidResponse, "Invalid downstream Content-Length.");
            }
            body = DownstreamBody.ContentLength;
        }
        else if (completing && status != 304 && !_exchange.Head.IsHead)
        {
            // Nothing was written and nothing will be: the length is known after all. (304 and HEAD responses
            // describe a representation they do not carry, so a Content-Length would be false there.)
            body = DownstreamBody.ContentLength;
        }

        HasStarted = true;
        _ownHeaders.IsReadOnly = true;
        var writer = _exchange.Response;
        writer.BeginHead(status);
        if (headers is HeaderDictionary own)
        {
            foreach (var field in own)
            {
                WriteField(writer, field);
            }
        }
        else
        {
            foreach (var field in headers)
            {
                WriteField(writer, field);
            }
        }
        _bodyFollows = writer.EndHead(body, length);

        static void WriteField(ResponseWriter writer, KeyValuePair<string, Microsoft.Extensions.Primitives.StringValues> field)
        {
            foreach (var value in field.Value)
            {
                if (value is not null)
                {
                    writer.WriteField(field.Key, value);
                }
            }
        }
    }

    // The synchronous PipeWriter path (GetMemory) must start the response before it hands out body memory.
    private void EnsureStarted()
    {
        if (!HasStarted)
        {
            var start = StartAsync(completing: false);
            if (!start.IsCompletedSuccessfully)
            {
                // Only an asynchronous OnStarting callback gets here; Kestrel's GetMemory cannot await either.
                start.AsTask().GetAwaiter().GetResult();
            }
        }
    }

    private Memory<byte> GetMemory(int sizeHint)
    {
        ThrowIfAborted();
        ThrowIfCompleted();
        EnsureStarted();
        if (_bodyFollows)
        {
            var memory = _exchange.Response.GetBodyMemory();
            if (memory.Length >= Math.Max(sizeHint, 1))
            {
                _lease = Lease.Direct;
                return memory;
            }
            _lease = Lease.Scratch;
            if (_scratch is null || _scratch.Length < sizeHint)
            {
                _scratch = new byte[sizeHint];
            }
            return _scratch;
        }
        _lease = Lease.Discard;
        return sizeHint <= s_discard.Length ? s_discard : new byte[sizeHint];
    }

    private void Advance(int count)
    {
        var lease = _lease;
        _lease = Lease.None;
        switch (lease)
        {
            case Lease.Direct:
                _exchange.Response.AdvanceBody(count);
                break;
            case Lease.Scratch:
                CopyToBody(_scratch.AsSpan(0, count));
                break;
            case Lease.Discard:
                break;
            default:
                if (count != 0)
                {
                    throw new InvalidOperationException("Advance was called without GetMemory.");
                }
                return;
        }
        if (count > 0)
        {
            _exchange.RestartDeadline();
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<FlushResult> WriteAsync(ReadOnlyMemory<byte> data)
    {
        ThrowIfAborted();
        ThrowIfCompleted();
        await StartAsync(completing: false);
        if (_bodyFollows && !data.IsEmpty)
        {
            CopyToBody(data.Span);
            _exchange.RestartDeadline();
        }
        return await FlushWriterAsync();
    }

    private void CopyToBody(ReadOnlySpan<byte> data)
    {
        var writer = _exchange.Response;
        while (!data.IsEmpty)
        {
            var memory = writer.GetBodyMemory().Span;
            var count = Math.Min(memory.Length, data.Length);
            data[..count].CopyTo(memory);
            writer.AdvanceBody(count);
            data = data[count..];
        }
    }

    // As in Kestrel, a flush sends the head if it was not sent yet. The writer's flush takes no token: a client that
    // does not read is handled by the connection (aborted on timeout or close), which completes the flush.
    private ValueTask<FlushResult> FlushAsync()
    {
        ThrowIfAborted();
        if (!HasStarted)
        {
            return StartThenFlushAsync();
        }
        return FlushWriterAsync();
    }

    private async ValueTask<FlushResult> StartThenFlushAsync()
    {
        await StartAsync(completing: false);
        return await FlushWriterAsync();
    }

    // Once the body is complete (or there is none), the connection flushes it right after the exchange, together with
    // anything else pending: one send instead of two, as in the httpclient variant.
    private ValueTask<FlushResult> FlushWriterAsync() =>
        _exchange.Response.ExpectsMoreBody ? _exchange.Response.FlushAsync() : default;

    private void ThrowIfStarted()
    {
        if (HasStarted)
        {
            throw new InvalidOperationException("The response has already started.");
        }
    }

    private void ThrowIfCompleted()
    {
        if (_completed)
        {
            throw new InvalidOperationException("The response has already completed.");
        }
    }

    private void ThrowIfAborted()
    {
        if (_lifetime.IsAborted)
        {
            throw new ConnectionAbortedException("The request was aborted.");
        }
    }

    /// <summary>HttpResponse.Body: a write sends the head first if needed, copies into the writer's memory and flushes.</summary>
    private sealed class BodyStream(ResponseFeature feature) : Stream
    {
        public override bool CanRead => false;
        public override bool CanSeek => false;
        public override bool CanWrite => true;
        public override long Length => throw new NotSupportedException();
        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

        [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
        public override async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
        {
            if ((await feature.WriteAsync(buffer)).IsCompleted)
            {
                throw new IOException("The client closed the connection.");
            }
        }

        public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        public override async Task FlushAsync(CancellationToken cancellationToken)
        {
            if ((await feature.FlushAsync()).IsCompleted)
            {
                throw new IOException("The client closed the connection.");
            }
        }

        // Like Kestrel without AllowSynchronousIO: a blocking write would hold a thread per slow client.
        public override void Write(byte[] buffer, int offset, int count) =>
            throw new InvalidOperationException("Synchronous writes of the response body are not supported; use WriteAsync.");

        // Written bytes are already in the connection's output, which is flushed after the exchange.
        public override void Flush()
        {
        }

        public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();
        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
        public override void SetLength(long value) => throw new NotSupportedException();
    }

    /// <summary>HttpResponse.BodyWriter: hands out the writer's own body memory, so a body is copied once (downstream read into it).</summary>
    private sealed class BodyWriter(ResponseFeature feature) : PipeWriter
    {
        public override Memory<byte> GetMemory(int sizeHint = 0) => feature.GetMemory(sizeHint);

        public override Span<byte> GetSpan(int sizeHint = 0) => feature.GetMemory(sizeHint).Span;

        public override void Advance(int bytes) => feature.Advance(bytes);

        public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default) => feature.FlushAsync();

        public override ValueTask<FlushResult> WriteAsync(ReadOnlyMemory<byte> source, CancellationToken cancellationToken = default) =>
            feature.WriteAsync(source);

        public override void CancelPendingFlush() =>
            throw new NotSupportedException("The connection's flush cannot be cancelled; abort the request instead.");

        public override void Complete(Exception? exception = null)
        {
            var complete = CompleteAsync(exception);
            if (!complete.IsCompletedSuccessfully)
            {
                complete.AsTask().GetAwaiter().GetResult();
            }
        }

        // Completing with an error means the body cannot be finished: the client must see an incomplete message.
        public override ValueTask CompleteAsync(Exception? exception = null)
        {
            if (exception is not null)
            {
                feature._lifetime.Abort();
                return default;
            }
            return feature.CompleteCoreAsync();
        }
    }
}
