using System.Buffers.Binary;
using System.IO.Pipelines;
using System.Runtime.CompilerServices;
using System.Text;
using LLRP.Balancing;
using LLRP.Buffers;
using LLRP.Connections;
using LLRP.Errors;
using LLRP.Exchanges;
using LLRP.Http1;
using LLRP.Semantics;

namespace LLRP.Http2;

/// <summary>
/// One HTTP/2 stream of the proxy's own front end run as an <see cref="Exchange"/>: the head is filled from the fields
/// the codec decodes (the pseudo-header fields make the request line, :authority the Host, cookie crumbs one Cookie,
/// RFC 9113 §8.3.1, §8.2.3) and held to the proxy's rules by <see cref="RequestHead"/>, the body comes from the DATA
/// frames (<see cref="Http2RequestBody"/>), the response goes out as HEADERS and DATA frames (<see cref="Http2ResponseBody"/>,
/// this object as the <see cref="IFramedResponse"/>). An extended CONNECT for WebSocket (RFC 8441) is forwarded as the
/// HTTP/1.1 upgrade every variant knows and, after a 101, the stream is a tunnel (<see cref="Http2TunnelClient"/>).
/// </summary>
/// <remarks>
/// A slot serves one stream at a time and is pooled across connections (<see cref="Http2FrontEnd"/>) with its forwarder,
/// as the raw HTTP/1.1 front end keeps one exchange and one forwarder per connection. Its exchanges run in one
/// long-lived async method (<see cref="RunAsync"/>), woken for each stream, so a stream allocates no state machine.
/// </remarks>
internal sealed class Http2FrontEndStream : IFramedResponse, IPooledSlot
{
    private readonly Http2FrontEnd _frontEnd;
    private readonly ProxyServer _server;
    private readonly DownstreamChoice _downstreams;
    private readonly IForwarder _forwarder;
    private readonly AsyncSignal _start = new();
    private readonly AsyncSignal _wake = new();
    private readonly Task _run;
    private bool _disposed;

    // The request head being decoded: pseudo-header values, then cookie crumbs, in one rented array.
    private byte[]? _scratch;
    private int _scratchLength;
    private int _methodStart, _methodLength, _pathStart, _pathLength, _authorityStart, _authorityLength, _protocolStart, _protocolLength;
    private int _cookieStart = -1;
    private bool _headStarted;
    // An extended CONNECT with ":protocol: websocket" (RFC 8441 §4), forwarded as an HTTP/1.1 WebSocket upgrade.
    private bool _webSocket;
    // The tunnel the stream became after a 101, while it runs (the connection's sweep keeps its idle time).
    private volatile Tunnel? _tunnel;
    private ProxyError? _rejection;

    // The response head and trailers as the encoder will take them: name length, value length, name (lower case), value.
    private byte[]? _fields;
    private int _fieldsLength;
    private int _trailersStart = -1;

    public Http2FrontEndStream(Http2FrontEnd frontEnd, ProxyServer server)
    {
        _frontEnd = frontEnd;
        _server = server;
        var options = server.Options;
        Head = new RequestHead(options.Limits);
        RequestBody = new Http2RequestBody(this);
        ResponseBody = new Http2ResponseBody(this);
        Response = new ResponseWriter(ResponseBody);
        Response.Bind(this, ResponseBody);
        Body = new RequestBodyReader(RequestBody, options.Limits, continueTo: null);
        Body.Bind(RequestBody);
        _downstreams = new DownstreamChoice(server.Downstreams);
        _forwarder = server.CreateForwarder(_downstreams, out var index);
        TunnelClient = new Http2TunnelClient(this);
        Exchange = new Exchange(Head, Body, Response, options.DownstreamResponseTimeout, [], index, client: TunnelClient,
            tunnelIdleTimeout: options.TunnelIdleTimeout);
        _run = RunAsync();
    }

    public Exchange Exchange { get; }

    /// <summary>
    /// The exchange's lifecycle, which the stream and its connection's sweep drive and the variant never sees. Exchange is
    /// sealed, so the JIT can bind these calls to its implementation; at worst they are interface calls.
    /// </summary>
    public IExchangeControl Control => Exchange;

    /// <summary>The stream as a tunnel's client end, the same object for every stream the slot serves.</summary>
    private Http2TunnelClient TunnelClient { get; }

    /// <summary>The tunnel the stream is, after a 101, while it runs; null otherwise.</summary>
    public Tunnel? Tunnel => _tunnel;

    /// <summary>The variant's forwarder, kept with the slot between streams.</summary>
    public IForwarder Forwarder => _forwarder;

    /// <summary>Held while a stream uses the slot (a new slot is held by its first stream), free while it is idle.</summary>
    public SlotGate Gate { get; } = new();

    public Http2RequestBody RequestBody { get; }

    public Http2ResponseBody ResponseBody { get; }

    private RequestHead Head { get; }
    private RequestBodyReader Body { get; }
    private ResponseWriter Response { get; }

    /// <summary>The connection and stream this slot serves now.</summary>
    public Http2FrontEndConnection? Connection { get; private set; }

    public int Id { get; private set; }

    /// <summary>The response HEADERS went out.</summary>
    public bool HeadSent { get; set; }

    /// <summary>END_STREAM is in the connection's output: the response is complete, once the writer has sent it.</summary>
    public bool EndSent { get; set; }

    /// <summary>The connection's write batch that carries this stream's END_STREAM (its writer numbers them from 1).</summary>
    public long EndBatch { get; set; }

    /// <summary>The client's END_STREAM arrived: the request body is complete.</summary>
    public bool RequestEnded { get; set; }

    /// <summary>The stream was reset (by the client, or after a stream error) or its connection ended: nothing more is sent.</summary>
    public bool IsReset => _reset;

    private volatile bool _reset;
    // Set while the slot's loop runs the stream's exchange: a reset before it leaves the exchange untouched (its abort
    // could not be undone, and the slot would be lost), so a rapidly reset stream costs no slot and no forwarder.
    private volatile bool _running;

    /// <summary>The exchange is being forwarded: its deadline is the connection's sweep's to check.</summary>
    public bool InFlight
    {
        get => _inFlight;
        private set => _inFlight = value;
    }

    private volatile bool _inFlight;

    /// <summary>The request's field block is whole: an exchange runs (or is about to) for it.</summary>
    public bool Started { get; private set; }

    /// <summary>The exchange ended so that the slot may serve another stream.</summary>
    public bool Reusable { get; private set; } = true;

    /// <summary>The response's status (:status).</summary>
    public int Status { get; private set; }

    /// <summary>The response's Content-Length, -1 when it has none.</summary>
    public long ContentLength { get; private set; } = -1;

    public bool HasTrailers => _trailersStart >= 0 && _fieldsLength > _trailersStart;

    /// <summary>Lent to stream <paramref name="id"/> of <paramref name="connection"/>.</summary>
    public void Lend(Http2FrontEndConnection connection, int id)
    {
        Connection = connection;
        Id = id;
        HeadSent = EndSent = RequestEnded = Started = false;
        EndBatch = 0;
        _reset = false;
        _rejection = null;
        _headStarted = _webSocket = false;
        _scratchLength = _methodLength = _pathLength = _authorityLength = _protocolLength = 0;
        _cookieStart = -1;
        _fieldsLength = 0;
        _trailersStart = -1;
        Status = 0;
        ContentLength = -1;
        Control.Rebind(connection.Peer.ForwardedFor, connection.Peer.Tls);
    }

    // ---- The request head, from the read loop (under the connection's lock) ----

    /// <summary>One decoded field of the request's field block; a rejection is kept and answered when the block is whole.</summary>
    public void OnField(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        if (_rejection is not null)
        {
            return;
        }
        try
        {
            if (!name.IsEmpty && name[0] == (byte)':')
            {
                StorePseudo(name, value);
                return;
            }
            StartHead();
            if (_webSocket && name.SequenceEqual("sec-websocket-key"u8))
            {
                // RFC 8441 §5: not used over HTTP/2; the key forwarded is the proxy's (RequestHead.UpgradeToWebSocket).
                return;
            }
            if (name.SequenceEqual("host"u8) && _authorityLength > 0)
            {
                // RFC 9113 §8.3.1: a Host that names another origin than :authority makes the request malformed.
                if (!value.SequenceEqual(Scratch(_authorityStart, _authorityLength)))
                {
                    ProxyThrow.BadRequest("Host differs from :authority.");
                }
                return;
            }
            if (name.SequenceEqual("cookie"u8))
            {
                AppendCookie(value);
                return;
            }
            Http2FieldRules.Check(name, value);
            Head.AddField(name, value);
        }
        catch (Exception e) when (ProxyErrors.IsRejection(e))
        {
            _rejection = ProxyErrors.RejectionOf(e);
        }
    }

    /// <summary>The request's field block is whole (the codec checked it, RFC 9113 §8.1.1); <paramref name="endStream"/>: no body.</summary>
    public void OnHeadersComplete(bool endStream)
    {
        RequestEnded = endStream;
        Started = true;
        try
        {
            if (_rejection is null)
            {
                StartHead();
                if (_cookieStart >= 0)
                {
                    Head.AddField("cookie"u8, Scratch(_cookieStart, _scratchLength - _cookieStart));
                }
                if (_webSocket)
                {
                    Head.UpgradeToWebSocket();
                    if (endStream)
                    {
                        // The client ended its side with the request: the tunnel's input is over before it begins.
                        RequestBody.End(null);
                    }
                }
                Head.CompleteFields(hasBody: !endStream);
            }
        }
        catch (Exception e) when (ProxyErrors.IsRejection(e))
        {
            _rejection = ProxyErrors.RejectionOf(e);
        }
        finally
        {
            ReturnScratch();
        }
    }

    private void StorePseudo(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        var start = Store(value);
        switch (name)
        {
            case var n when n.SequenceEqual(":method"u8):
                (_methodStart, _methodLength) = (start, value.Length);
                break;
            case var n when n.SequenceEqual(":path"u8):
                (_pathStart, _pathLength) = (start, value.Length);
                break;
            case var n when n.SequenceEqual(":authority"u8):
                (_authorityStart, _authorityLength) = (start, value.Length);
                break;
            case var n when n.SequenceEqual(":protocol"u8):
                // The codec let it through only on a CONNECT with :scheme, :path and :authority (RFC 8441 §4).
                (_protocolStart, _protocolLength) = (start, value.Length);
                break;
            default:
                // :scheme says how the client reached the proxy (X-Forwarded-Proto says it downstream).
                break;
        }
    }

    // The request line from the pseudo-header fields, once they are all there (the codec allows them only first).
    private void StartHead()
    {
        if (_headStarted)
        {
            return;
        }
        _headStarted = true;
        var method = Scratch(_methodStart, _methodLength);
        if (_protocolLength > 0)
        {
            // An extended CONNECT (RFC 8441 §4). The downstreams speak HTTP/1.1, where only WebSocket has a defined
            // mapping (RFC 8441 §5 to RFC 6455 §4.1): any other protocol is one the proxy does not implement, 501
            // (RFC 9110 §15.6.2), rather than a malformed request (400) or a method refused for the resource (405).
            if (!Ascii.EqualsIgnoreCase(Scratch(_protocolStart, _protocolLength), "websocket"u8))
            {
                ProxyThrow.Throw(ProxyError.NotImplemented, "Extended CONNECT for a protocol other than websocket.");
            }
            _webSocket = true;
            method = "GET"u8;
        }
        // CONNECT has no :path (RFC 9113 §8.5): its authority is its target, and the request is refused with 405 as over HTTP/1.1.
        var target = _pathLength > 0 ? Scratch(_pathStart, _pathLength) : Scratch(_authorityStart, _authorityLength);
        Head.StartParsed(method, target, ClientProtocol.Http2);
        if (_authorityLength > 0)
        {
            Head.AddField("host"u8, Scratch(_authorityStart, _authorityLength));
        }
    }

    // RFC 9113 §8.2.3: cookie crumbs are joined with "; " for an HTTP/1.1 hop.
    private void AppendCookie(ReadOnlySpan<byte> value)
    {
        if (_cookieStart < 0)
        {
            _cookieStart = _scratchLength;
        }
        else
        {
            Store("; "u8);
        }
        Store(value);
    }

    private int Store(ReadOnlySpan<byte> bytes)
    {
        var limits = _server.Options.Limits;
        _scratch ??= ProxyBuffers.Bytes.Rent(limits.MaxRequestLineSize + limits.MaxRequestHeadersTotalSize);
        if (bytes.Length > _scratch.Length - _scratchLength)
        {
            ProxyThrow.Throw(ProxyError.HeaderFieldsTooLarge, "Request header fields too large.");
        }
        var start = _scratchLength;
        bytes.CopyTo(_scratch.AsSpan(start));
        _scratchLength += bytes.Length;
        return start;
    }

    private ReadOnlySpan<byte> Scratch(int start, int length) => _scratch is null ? default : _scratch.AsSpan(start, length);

    private void ReturnScratch()
    {
        if (_scratch is not null)
        {
            ProxyBuffers.Bytes.Return(_scratch);
            _scratch = null;
        }
    }

    // ---- Events from the connection ----

    /// <summary>The client reset the stream, the codec reset it after a stream error, or the connection ended.</summary>
    public void OnReset()
    {
        _reset = true;
        Interlocked.MemoryBarrier();
        if (_running)
        {
            Control.ClientGone();
        }
    }

    /// <summary>The stream ended before its head was whole (reset, or the connection ended): back to the pool, nothing ran.</summary>
    public void Abandon()
    {
        Connection = null;
        Head.Reset();
        ReturnScratch();
        _frontEnd.Return(this);
    }

    /// <summary>Outside the connection's lock: starts the exchange (on the calling thread, until its first wait).</summary>
    public void Begin() => _start.Set();

    /// <summary>A window opened, the connection's output drained, or the exchange was aborted: a waiting send tries again.</summary>
    public void Wake() => _wake.Set();

    /// <summary>The variant consumed request body bytes: the connection gives the windows back.</summary>
    public void BodyConsumed(int length) => Connection?.ConsumeData(this, length);

    // ---- The exchange ----

    private async Task RunAsync()
    {
        while (true)
        {
            await _start.WaitAsync();
            if (_disposed)
            {
                return;
            }
            var connection = Connection!;
            // Published before the reset is read (OnReset does the converse): one of the two sees the other.
            _running = true;
            Interlocked.MemoryBarrier();
            var reset = Exchange.Aborted.UnsafeRegister(static state => ((Http2FrontEndStream)state!).Wake(), this);
            try
            {
                if (_rejection is { } rejection)
                {
                    // Answered on the stream, never forwarded; the connection carries on (RFC 9113 §8.1.1).
                    _server.Counters.CountRejected();
                    Response.Start(Head);
                    await Response.WriteErrorAsync(ProxyErrors.StatusCode(rejection));
                    await CompleteAsync();
                }
                else if (IsReset)
                {
                    // Reset before it was forwarded (rapid reset sends HEADERS and RST_STREAM together): nothing goes downstream.
                    _server.Counters.Failed.ClientGone();
                }
                else
                {
                    // Inline, not a method of its own: with more streams in flight than the pooling builder caches
                    // boxes, an async method per stream would allocate its state machine; this loop's is the slot's.
                    try
                    {
                        Control.Start();
                        // From here the connection's sweep holds the exchange to its deadline (no registration per stream).
                        InFlight = true;
                        await _forwarder.ForwardAsync(Exchange);
                        if (!Response.IsComplete)
                        {
                            ProxyThrow.Throw(ProxyError.DownstreamBodyCutShort, "The variant ended without completing the response.");
                        }
                        if (Exchange.Tunnel is { } downstream)
                        {
                            // The downstream switched protocols (101): the stream is a tunnel until either side ends.
                            InFlight = false;
                            await RunTunnelAsync(downstream);
                        }
                        else
                        {
                            if (Exchange.RelayedTunnel is { } relayed)
                            {
                                _server.Counters.Tunnels.Relayed(relayed, Exchange.AbortReason, _server.Stopping);
                                await EndTunnelStreamAsync();
                            }
                            else if ((await SendAsync(complete: true)).IsCompleted)
                            {
                                ProxyThrow.ClientGone();
                            }
                        }
                        _server.Counters.CountRequest();
                    }
                    catch (Exception e)
                    {
                        Reusable = false;
                        await FailAsync(e);
                    }
                    finally
                    {
                        InFlight = false;
                    }
                }
            }
            catch (Exception e) when (e is ProxyException or OperationCanceledException)
            {
                // The stream went away while an answer of the proxy's own was being sent.
                Reusable = false;
            }
            finally
            {
                _running = false;
                reset.Dispose();
                // First out of the connection (no DATA reaches the body any more), then ready for the next stream.
                connection.StreamDone(this);
                Connection = null;
                Head.Reset();
                ReturnScratch();
                ResponseBody.Reset();
                ReturnFields();
                Reusable &= !Exchange.IsAborted;
                _frontEnd.Return(this);
            }
        }
    }

    /// <summary>
    /// The stream after a 101: the 200 goes out without END_STREAM (RFC 8441 §5), then the tunnel copies between the
    /// stream's DATA and the downstream connection until both have ended (<see cref="Tunnel"/>; a failure resets the
    /// stream, <see cref="Http2TunnelClient.Abort"/>), then <see cref="EndTunnelStreamAsync"/>.
    /// </summary>
    private async ValueTask RunTunnelAsync(ITunnelDownstream downstream)
    {
        bool gone;
        try
        {
            gone = (await SendAsync(complete: false)).IsCompleted;
        }
        catch
        {
            gone = true;
        }
        if (gone)
        {
            // The 200 could not reach the client: the tunnel never starts.
            downstream.Abort();
            downstream.Dispose();
            ProxyThrow.ClientGone();
        }
        var tunnel = new Tunnel(TunnelClient, downstream, _server.Options.TunnelIdleTimeout, _server.Counters.Tunnels);
        _tunnel = tunnel;
        try
        {
            if (await tunnel.RunAsync() != TunnelEnd.Error)
            {
                await EndTunnelStreamAsync();
            }
        }
        finally
        {
            _tunnel = null;
        }
    }

    /// <summary>
    /// A tunnel ended without failing: END_STREAM (nothing if its end sent it already), unless bytes the client's window
    /// held back are left (the tunnel ended idle or stopping while the client did not read): they cannot be delivered
    /// now, and waiting for the window would hold the stream, so RST_STREAM CANCEL.
    /// </summary>
    private async ValueTask EndTunnelStreamAsync()
    {
        if (ResponseBody.UnsentLength > 0)
        {
            Connection?.Reset(this, LLHttp2.Http2ErrorCode.Cancel);
            return;
        }
        await SendAsync(complete: true);
    }

    /// <summary><see cref="ProxyServer.Fail"/> decides, as for every front end; an abort resets the stream.</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask FailAsync(Exception e)
    {
        switch (_server.Fail(Exchange, e, IsReset, _downstreams.Current?.Address, out _, out var status))
        {
            case FailedExchange.ClientGone:
                break;
            case FailedExchange.Abort:
                Connection!.Reset(this);
                break;
            case FailedExchange.Answer:
                _fieldsLength = 0;
                _trailersStart = -1;
                await Response.WriteErrorAsync(status);
                await CompleteAsync();
                break;
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask CompleteAsync()
    {
        if ((await SendAsync(complete: true)).IsCompleted)
        {
            ProxyThrow.ClientGone();
        }
    }

    /// <summary>
    /// Hands what the response has to the connection: the head first, then the body as far as the windows allow, and with
    /// <paramref name="complete"/> END_STREAM (on the last DATA frame, or on the trailers). Waits while the stream or
    /// connection window is closed or the connection's output is full; completed (IsCompleted) when the stream is gone.
    /// </summary>
    public ValueTask<FlushResult> SendAsync(bool complete, CancellationToken cancellationToken = default)
    {
        var outcome = Connection?.Send(this, complete) ?? SendOutcome.Gone;
        return outcome switch
        {
            SendOutcome.Done => new ValueTask<FlushResult>(new FlushResult(isCanceled: false, isCompleted: false)),
            SendOutcome.Gone => new ValueTask<FlushResult>(new FlushResult(isCanceled: false, isCompleted: true)),
            _ => WaitAndSendAsync(complete, cancellationToken),
        };
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<FlushResult> WaitAndSendAsync(bool complete, CancellationToken cancellationToken)
    {
        // Only a tunnel passes a token (its idle timeout or stop); an exchange's waits end by its abort.
        using var cancelled = cancellationToken.CanBeCanceled
            ? cancellationToken.UnsafeRegister(static state => ((Http2FrontEndStream)state!).Wake(), this)
            : default;
        while (true)
        {
            await _wake.WaitAsync();
            // After END_STREAM the wait is only the connection's backpressure: the response is whole, and whether the
            // client got it is the connection's to say (Send), not an abort's.
            if (Exchange.IsAborted && !EndSent)
            {
                throw new OperationCanceledException(Exchange.Aborted);
            }
            cancellationToken.ThrowIfCancellationRequested();
            var outcome = Connection?.Send(this, complete) ?? SendOutcome.Gone;
            if (outcome != SendOutcome.Blocked)
            {
                return new FlushResult(isCanceled: false, isCompleted: outcome == SendOutcome.Gone);
            }
        }
    }

    // ---- IFramedResponse: what ResponseWriter hands over after its policy ----

    public void SetStatus(int status)
    {
        Status = status;
        _fieldsLength = 0;
        ContentLength = -1;
    }

    // RFC 8441 §5: a 2xx opens the tunnel; the stream stays open (RunTunnelAsync sends the head without END_STREAM).
    public void BeginTunnel() => SetStatus(200);

    public void AddField(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) => StoreField(name, value);

    public void AddField(string name, string value)
    {
        Span<byte> nameBytes = name.Length <= 256 ? stackalloc byte[name.Length] : new byte[name.Length];
        Encoding.Latin1.GetBytes(name, nameBytes);
        var valueBytes = ReserveField(nameBytes, Encoding.Latin1.GetByteCount(value));
        Encoding.Latin1.GetBytes(value, valueBytes);
    }

    public void SetContentLength(long length) => ContentLength = length;

    public bool TakesTrailers => true;

    public void AddTrailer(string name, string value)
    {
        if (_trailersStart < 0)
        {
            _trailersStart = _fieldsLength;
        }
        AddField(name, value);
    }

    /// <summary>The head's fields (before any trailer), then the trailers: each as (name, value).</summary>
    public FieldEnumerator HeadFields => new(_fields, 0, _trailersStart < 0 ? _fieldsLength : _trailersStart);

    public FieldEnumerator TrailerFields => new(_fields, _trailersStart < 0 ? _fieldsLength : _trailersStart, _fieldsLength);

    private void StoreField(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) => value.CopyTo(ReserveField(name, value.Length));

    // RFC 9113 §8.2.1: field names are lower case in HTTP/2; an HTTP/1.1 downstream's are not.
    private Span<byte> ReserveField(ReadOnlySpan<byte> name, int valueLength)
    {
        var needed = 8 + name.Length + valueLength;
        if (_fields is null || _fields.Length - _fieldsLength < needed)
        {
            var grown = ProxyBuffers.Bytes.Rent(Math.Max(4096, 2 * (_fieldsLength + needed)));
            if (_fields is not null)
            {
                _fields.AsSpan(0, _fieldsLength).CopyTo(grown);
                ProxyBuffers.Bytes.Return(_fields);
            }
            _fields = grown;
        }
        var span = _fields.AsSpan(_fieldsLength, needed);
        BinaryPrimitives.WriteInt32LittleEndian(span, name.Length);
        BinaryPrimitives.WriteInt32LittleEndian(span[4..], valueLength);
        Ascii.ToLower(name, span.Slice(8, name.Length), out _);
        _fieldsLength += needed;
        return span.Slice(8 + name.Length, valueLength);
    }

    private void ReturnFields()
    {
        if (_fields is not null)
        {
            ProxyBuffers.Bytes.Return(_fields);
            _fields = null;
        }
        _fieldsLength = 0;
        _trailersStart = -1;
    }

    /// <summary>Stops the slot's exchange loop and gives its forwarder back.</summary>
    public void Dispose()
    {
        _disposed = true;
        _start.Set();
        _forwarder.Dispose();
        Control.Dispose();
    }

    /// <summary>The stored fields of a response, without allocating.</summary>
    public ref struct FieldEnumerator(byte[]? fields, int start, int end)
    {
        private int _next = start;

        public ReadOnlySpan<byte> Name { get; private set; }

        public ReadOnlySpan<byte> Value { get; private set; }

        public bool MoveNext()
        {
            if (fields is null || _next >= end)
            {
                return false;
            }
            var span = fields.AsSpan(_next);
            var nameLength = BinaryPrimitives.ReadInt32LittleEndian(span);
            var valueLength = BinaryPrimitives.ReadInt32LittleEndian(span[4..]);
            Name = span.Slice(8, nameLength);
            Value = span.Slice(8 + nameLength, valueLength);
            _next += 8 + nameLength + valueLength;
            return true;
        }
    }
}

/// <summary>What a stream's send came to.</summary>
internal enum SendOutcome : byte
{
    /// <summary>Everything asked for is in the connection's output.</summary>
    Done,

    /// <summary>A window is closed or the output is full: wait for <see cref="Http2FrontEndStream.Wake"/> and send again.</summary>
    Blocked,

    /// <summary>The stream or its connection is gone.</summary>
    Gone,
}
