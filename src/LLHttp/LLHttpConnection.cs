using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using LLHttp.Transports;

namespace LLHttp;

/// <summary>
/// One TCP connection speaking HTTP/1.1, one exchange at a time (no pipelining).
/// <para>
/// Exchange: <see cref="StartRequest"/>, <see cref="WriteHeader"/>*, then either <see cref="SendRequestAsync(CancellationToken)"/>
/// (no body), <see cref="SendRequestAsync(ReadOnlyMemory{byte}, CancellationToken)"/> (whole body), or
/// <see cref="StartRequestBody"/> + <see cref="WriteBodyAsync"/>* + <see cref="CompleteRequestAsync"/> (streamed body);
/// then <see cref="ReadResponseHeadAsync"/> (again while the head is informational) and <see cref="ReadBodyAsync"/> until it
/// returns 0. The exchange ends when both the request and the response body are complete.
/// </para>
/// <para>
/// Full duplex: once the request head has left (<see cref="StartRequestBody"/> then the first <see cref="WriteBodyAsync"/>,
/// <see cref="FlushAsync"/> or <see cref="CompleteRequestAsync"/>), one caller may send the body while another reads the
/// response, as an origin that answers while it reads needs (RFC 9112 §9.3: a client monitors for a response while it
/// sends). <see cref="LLHttpOptions.ResponseHeadTimeout"/> then runs from the start of the head read, upload included.
/// Otherwise not thread-safe: one caller per direction.
/// </para>
/// <para>
/// Any error, timeout or cancellation aborts the connection, except a failed request body send: the origin may have
/// answered and stopped reading, so the response stays readable while the request is marked failed (the connection is
/// never reused). A body left unread, Connection: close, HTTP/1.0 without keep-alive or a close-delimited body make it
/// not reusable.
/// </para>
/// </summary>
public sealed partial class LLHttpConnection : IDisposable, IAsyncDisposable
{
    private readonly LLHttpOptions _options;
    private readonly Func<CancellationToken, ValueTask<Transport>>? _reconnect;
    private readonly ResponseHeadParser _parser;
    private readonly SendBuffer _send;
    // Receives and sends each have their own gate, so a body send and a response read can wait at the same time.
    private readonly TimeoutGate _gate = new();
    private readonly TimeoutGate _sendGate = new();
    private Transport _transport;
    // Rented when a response head is read, given back by ReleaseIdleBuffers: an idle connection holds no buffer.
    private byte[] _recv = [];
    private int _recvStart;
    private int _recvEnd;
    private ChunkedDecoder _chunked;

    private bool _active;
    private bool _reusable = true;
    private bool _aborted;
    private bool _disposed;
    private long _exchangeCount;
    private long _lastUsedTimestamp;

    private RequestState _request;
    private RequestBodyFraming _requestFraming;
    private long _requestDeclared;
    private long _requestWritten;
    private bool _requestIsHead;
    private bool _requestIdempotent;
    private bool _headPending;
    private bool _retryable;

    private ResponseState _response;
    private ResponseBodyFraming _responseFraming;
    private long _responseRemaining;
    private bool _responseKeepAlive;
    private int _informationalCount;
    // RequestUpgrade was called for this exchange: a 101 is returned, not refused; once it came, _upgraded.
    private bool _upgradeRequested;
    private bool _upgraded;

    internal LLHttpConnection(Transport transport, LLHttpOptions options, Func<CancellationToken, ValueTask<Transport>>? reconnect)
    {
        options.Validate();
        _transport = transport;
        _options = options;
        _reconnect = reconnect;
        _parser = new ResponseHeadParser(options.MaxResponseHeadersLength, options.MaxResponseHeaderCount);
        // Room for the head, a coalesced body and its framing (a chunk header and the last chunk).
        _send = new SendBuffer(4 * 1024, options.MaxRequestHeadLength + options.MaxCoalescedBodyLength + 64, options.BufferPool);
        _lastUsedTimestamp = options.TimeProvider.GetTimestamp();
        _continueHead = () => ContinueHead(resumed: true);
        _continueBody = () => ContinueBody(resumed: true);
    }

    /// <summary>Opens a TCP connection. Connecting allocates (socket, task); exchanges on it do not.</summary>
    /// <exception cref="LLHttpException"><see cref="LLHttpError.ConnectFailed"/> or <see cref="LLHttpError.ConnectTimeout"/>.</exception>
    public static ValueTask<LLHttpConnection> ConnectAsync(EndPoint endPoint, LLHttpOptions? options = null, CancellationToken cancellationToken = default)
        => ConnectAsync(endPoint, tls: null, options, cancellationToken);

    /// <summary>
    /// Opens a TCP connection and, with <paramref name="tls"/>, runs a TLS client handshake over it before any request
    /// (<see cref="LLHttpError.TlsHandshakeFailed"/> when it fails). The connect timeout covers the handshake too, as
    /// SocketsHttpHandler's ConnectTimeout does.
    /// </summary>
    public static ValueTask<LLHttpConnection> ConnectAsync(
        EndPoint endPoint, SslClientAuthenticationOptions? tls, LLHttpOptions? options = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(endPoint);
        options ??= LLHttpOptions.Default;
        return ConnectAsync(Connector(endPoint, tls, options), options, cancellationToken);
    }

    /// <summary>How to open a transport to <paramref name="endPoint"/> on the options' engine, TLS over it when asked (HTTP/2 connections share it).</summary>
    internal static Func<CancellationToken, ValueTask<Transport>> Connector(EndPoint endPoint, SslClientAuthenticationOptions? tls, LLHttpOptions options)
    {
        var receiveBufferSize = options.ReceiveBufferSize;
        Func<CancellationToken, ValueTask<Transport>> tcp = options.SocketEngine == LLHttpSocketEngine.Epoll
            ? ct => EpollTransport.ConnectAsync(endPoint, receiveBufferSize, ct)
            : ct => SocketTransport.ConnectAsync(endPoint, receiveBufferSize, ct);
        return tls is null
            ? tcp
            : async ct => await TlsTransport.AuthenticateAsync(await tcp(ct).ConfigureAwait(false), tls, ct).ConfigureAwait(false);
    }

    internal static async ValueTask<LLHttpConnection> ConnectAsync(
        Func<CancellationToken, ValueTask<Transport>> connect, LLHttpOptions options, CancellationToken cancellationToken)
    {
        Transport transport = await ConnectTransportAsync(connect, options, cancellationToken).ConfigureAwait(false);
        return new LLHttpConnection(transport, options, connect);
    }

    internal static async ValueTask<Transport> ConnectTransportAsync(
        Func<CancellationToken, ValueTask<Transport>> connect, LLHttpOptions options, CancellationToken cancellationToken)
    {
        // A new connection already allocates a socket; one linked CTS per connect is noise next to that.
        using var cts = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        if (options.ConnectTimeout != Timeout.InfiniteTimeSpan)
        {
            cts.CancelAfter(options.ConnectTimeout);
        }

        try
        {
            return await connect(cts.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            throw new LLHttpException(LLHttpError.ConnectTimeout, "Connect timed out.");
        }
        catch (SocketException e)
        {
            throw new LLHttpException(LLHttpError.ConnectFailed, $"Connect failed: {e.Message}", e);
        }
        catch (AuthenticationException e)
        {
            throw new LLHttpException(LLHttpError.TlsHandshakeFailed, $"TLS handshake failed: {e.Message}", e);
        }
    }

    /// <summary>No exchange is in progress and nothing forbids another one.</summary>
    public bool IsReusable => _reusable && !_active && !_aborted && !_disposed;

    /// <summary><see cref="TimeProvider.GetTimestamp"/> of the end of the last exchange (or of the connect).</summary>
    public long LastUsedTimestamp => _lastUsedTimestamp;

    internal long ExchangeCount => _exchangeCount;

    internal bool IsReadableWhileIdle() => _transport.IsReadableWhileIdle();

    /// <summary>The socket's SO_RCVBUF as the kernel reports it (for tests and diagnostics).</summary>
    internal int SocketReceiveBufferSize => _transport.ReceiveBufferSize;

    /// <summary>Whether the connection holds a receive or send buffer (an idle one given back to its pool holds none).</summary>
    internal bool HoldsBuffers => _recv.Length != 0 || _send.HoldsArray;

    /// <summary>
    /// Gives the receive and send buffers back to <see cref="LLHttpOptions.BufferPool"/> while no exchange runs; the next
    /// exchange rents them again (from the pool's per-thread cache: no allocation in steady state). An idle connection
    /// then holds no buffer, which is what lets thousands of them stay open cheaply. The pool and the affinity slot call
    /// it when a connection is given back. Does nothing during an exchange or while unread bytes are buffered.
    /// </summary>
    public void ReleaseIdleBuffers()
    {
        if (_active || _disposed || _recvStart != _recvEnd)
        {
            return;
        }

        _recvStart = _recvEnd = 0;
        byte[] recv = _recv;
        _recv = [];
        if (recv.Length != 0)
        {
            _options.BufferPool.Return(recv);
        }

        _send.Release();
    }

    /// <summary>Starts an exchange: buffers <c>method SP requestTarget SP HTTP/1.1 CRLF Host: authority CRLF</c>.</summary>
    /// <param name="requestTarget">Origin-form path and query (RFC 9112 §3.2.1).</param>
    public void StartRequest(ReadOnlySpan<byte> method, ReadOnlySpan<byte> requestTarget, ReadOnlySpan<byte> authority)
    {
        ThrowIfUnusable();
        if (_active)
        {
            ThrowHelper.ThrowInvalidOperation("An exchange is in progress: finish reading the response body first.");
        }

        _send.Clear();
        RequestHeadWriter.WriteRequestLine(_send, method, requestTarget, authority);

        _active = true;
        _exchangeCount++;
        _request = RequestState.Head;
        _requestFraming = RequestBodyFraming.None;
        _requestDeclared = 0;
        _requestWritten = 0;
        _requestIsHead = method.SequenceEqual("HEAD"u8);
        _requestIdempotent = IsIdempotent(method);
        _headPending = true;
        _retryable = false;
        _response = ResponseState.Head;
        _informationalCount = 0;
        _upgradeRequested = false;
    }

    /// <summary>
    /// Buffers one header field. The caller has already removed hop-by-hop fields; Host, Content-Length and
    /// Transfer-Encoding are refused because the client writes them.
    /// </summary>
    public void WriteHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        EnsureRequestState(RequestState.Head);
        RequestHeadWriter.WriteHeader(_send, name, value);
    }

    /// <summary>
    /// Buffers one header field the caller has already validated with <see cref="HttpChars"/> (a token name other than
    /// Host, Content-Length and Transfer-Encoding; a value without controls), as a proxy does for fields it parsed
    /// strictly on receipt. Nothing is checked again in Release builds: an unchecked field could split the request.
    /// </summary>
    public void WriteValidatedHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        EnsureRequestState(RequestState.Head);
        RequestHeadWriter.WriteValidatedHeader(_send, name, value);
    }

    /// <summary>Ends a request without a body and sends it in one send.</summary>
    public ValueTask SendRequestAsync(CancellationToken cancellationToken = default)
    {
        EnsureRequestState(RequestState.Head);
        EndHead();
        _request = RequestState.Complete;
        _retryable = _requestIdempotent;
        return SendBufferedAsync(keepForRetry: true, cancellationToken);
    }

    /// <summary>
    /// Ends a request whose whole body is at hand: writes Content-Length and sends head and body in one send when the
    /// body is at most <see cref="LLHttpOptions.MaxCoalescedBodyLength"/>, in two otherwise.
    /// </summary>
    public ValueTask SendRequestAsync(ReadOnlyMemory<byte> body, CancellationToken cancellationToken = default)
    {
        EnsureRequestState(RequestState.Head);
        RequestHeadWriter.WriteContentLength(_send, body.Length);
        EndHead();
        _requestFraming = RequestBodyFraming.ContentLength;
        _requestDeclared = _requestWritten = body.Length;
        _request = RequestState.Complete;
        if (body.Length <= _options.MaxCoalescedBodyLength)
        {
            _send.Write(body.Span);
            _retryable = _requestIdempotent;
            return SendBufferedAsync(keepForRetry: true, cancellationToken);
        }

        return SendHeadThenBodyAsync(body, cancellationToken);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask SendHeadThenBodyAsync(ReadOnlyMemory<byte> body, CancellationToken cancellationToken)
    {
        await SendBufferedAsync(keepForRetry: false, cancellationToken).ConfigureAwait(false);
        await SendAsync(body, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Ends the head of a request with a streamed body. The head stays buffered and leaves with the first body bytes
    /// (or on <see cref="FlushAsync"/>, e.g. to wait for 100-continue).
    /// </summary>
    /// <param name="contentLength">Exact body length for <see cref="RequestBodyFraming.ContentLength"/>; ignored for chunked.</param>
    public void StartRequestBody(RequestBodyFraming framing, long contentLength = -1)
    {
        EnsureRequestState(RequestState.Head);
        switch (framing)
        {
            case RequestBodyFraming.ContentLength:
                ArgumentOutOfRangeException.ThrowIfNegative(contentLength);
                RequestHeadWriter.WriteContentLength(_send, contentLength);
                _requestDeclared = contentLength;
                break;
            case RequestBodyFraming.Chunked:
                RequestHeadWriter.WriteChunkedEncoding(_send);
                break;
            default:
                ThrowHelper.ThrowArgument(nameof(framing), "Use SendRequestAsync for a request without a body.");
                break;
        }

        EndHead();
        _requestFraming = framing;
        _request = RequestState.Body;
    }

    /// <summary>
    /// Sends body bytes, framed as declared. Writing past the declared Content-Length aborts the connection with
    /// <see cref="LLHttpError.RequestBodyLengthMismatch"/>.
    /// </summary>
    public ValueTask WriteBodyAsync(ReadOnlyMemory<byte> data, CancellationToken cancellationToken = default)
    {
        EnsureRequestState(RequestState.Body);

        // An empty chunk would be the last chunk.
        if (data.IsEmpty)
        {
            return default;
        }

        if (_requestFraming == RequestBodyFraming.ContentLength)
        {
            if (data.Length > _requestDeclared - _requestWritten)
            {
                Abort();
                ThrowHelper.Throw(LLHttpError.RequestBodyLengthMismatch, "More request body bytes than the declared Content-Length.");
            }

            _requestWritten += data.Length;
            if (data.Length <= _options.MaxCoalescedBodyLength)
            {
                _send.Write(data.Span);
                return SendBufferedAsync(keepForRetry: false, cancellationToken);
            }

            return SendBufferedThenAsync(data, trailingCrlf: false, cancellationToken);
        }

        _requestWritten += data.Length;
        RequestHeadWriter.WriteChunkHeader(_send, data.Length);
        if (data.Length <= _options.MaxCoalescedBodyLength)
        {
            _send.Write(data.Span);
            RequestHeadWriter.WriteCrlf(_send);
            return SendBufferedAsync(keepForRetry: false, cancellationToken);
        }

        return SendBufferedThenAsync(data, trailingCrlf: true, cancellationToken);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask SendBufferedThenAsync(ReadOnlyMemory<byte> data, bool trailingCrlf, CancellationToken cancellationToken)
    {
        if (_send.Length != 0)
        {
            await SendBufferedAsync(keepForRetry: false, cancellationToken).ConfigureAwait(false);
        }

        await SendAsync(data, cancellationToken).ConfigureAwait(false);

        // The chunk's CRLF waits in the buffer and leaves with the next chunk header or the last chunk.
        if (trailingCrlf)
        {
            RequestHeadWriter.WriteCrlf(_send);
        }
    }

    /// <summary>Sends whatever is buffered (the head of a streamed request, for instance).</summary>
    public ValueTask FlushAsync(CancellationToken cancellationToken = default)
    {
        EnsureRequestState(RequestState.Body);
        return _send.Length == 0 ? default : SendBufferedAsync(keepForRetry: false, cancellationToken);
    }

    /// <summary>
    /// Ends a streamed body: sends the last chunk, or checks that exactly Content-Length bytes were written (a shortfall
    /// aborts the connection with <see cref="LLHttpError.RequestBodyLengthMismatch"/>).
    /// </summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    public async ValueTask CompleteRequestAsync(CancellationToken cancellationToken = default)
    {
        EnsureRequestState(RequestState.Body);
        if (_requestFraming == RequestBodyFraming.ContentLength)
        {
            if (_requestWritten != _requestDeclared)
            {
                Abort();
                ThrowHelper.Throw(LLHttpError.RequestBodyLengthMismatch, "Fewer request body bytes than the declared Content-Length.");
            }
        }
        else
        {
            RequestHeadWriter.WriteLastChunk(_send);
        }

        if (_send.Length != 0)
        {
            await SendBufferedAsync(keepForRetry: false, cancellationToken).ConfigureAwait(false);
        }

        _request = RequestState.Complete;
        TryFinishExchange();
    }

    private void EndHead()
    {
        if (_send.Length + 2 > _options.MaxRequestHeadLength)
        {
            Abort();
            ThrowHelper.Throw(LLHttpError.RequestHeadTooLarge, "Request head exceeds MaxRequestHeadLength.");
        }

        RequestHeadWriter.WriteEndOfHead(_send);
    }

    private ValueTask SendBufferedAsync(bool keepForRetry, CancellationToken cancellationToken)
    {
        _headPending = false;
        ValueTask send = SendAsync(_send.WrittenMemory, cancellationToken);

        // A request sent whole stays in the buffer until the next StartRequest so a stale connection can resend it.
        if (!keepForRetry)
        {
            if (!send.IsCompleted)
            {
                return ClearAfterAsync(send);
            }

            _send.Clear();
        }

        return send;
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask ClearAfterAsync(ValueTask send)
    {
        await send.ConfigureAwait(false);
        _send.Clear();
    }

    private ValueTask SendAsync(ReadOnlyMemory<byte> bytes, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromException(FailSend(new OperationCanceledException(cancellationToken), cancellationToken));
        }

        ValueTask send;
        try
        {
            send = _transport.SendAsync(bytes, _sendGate.TokenFor(_options.BodyIdleTimeout, cancellationToken));
        }
        catch (Exception e)
        {
            return ValueTask.FromException(FailSend(e, cancellationToken));
        }

        if (send.IsCompletedSuccessfully)
        {
            send.GetAwaiter().GetResult();
            return default;
        }

        return AwaitSendAsync(send, cancellationToken);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask AwaitSendAsync(ValueTask send, CancellationToken cancellationToken)
    {
        _sendGate.Enter(_options.BodyIdleTimeout, cancellationToken);
        try
        {
            await send.ConfigureAwait(false);
        }
        catch (Exception e)
        {
            throw FailSend(e, cancellationToken);
        }
        finally
        {
            _sendGate.Exit();
        }
    }

    /// <summary>
    /// Reads the next response head. For an informational (1xx) head, relay it if wanted and call again; a 101 fails with
    /// <see cref="LLHttpError.UnsupportedUpgrade"/>. The body framing follows RFC 9112 §6.3.
    /// </summary>
    /// <exception cref="LLHttpException">Malformed response, limit exceeded, <see cref="LLHttpError.ResponseHeadTimeout"/>, closed.</exception>
    public ValueTask<ResponseHead> ReadResponseHeadAsync(CancellationToken cancellationToken = default)
    {
        ThrowIfUnusable();
        if (!_active || _response != ResponseState.Head)
        {
            ThrowHelper.ThrowInvalidOperation("No response head is expected now.");
        }

        if (_headPending)
        {
            ThrowHelper.ThrowInvalidOperation("The request head has not been sent yet.");
        }

        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromException<ResponseHead>(Fail(new OperationCanceledException(cancellationToken), LLHttpError.ReceiveFailed, LLHttpError.ResponseHeadTimeout, cancellationToken));
        }

        if (_recv.Length == 0)
        {
            _recv = _options.BufferPool.Rent(Math.Min(_options.InitialReceiveBufferSize, _options.MaxResponseHeadersLength));
        }

        // The head is parsed from offset 0, so move what is left of the previous message (an interim head's tail) there.
        int leftover = _recvEnd - _recvStart;
        if (_recvStart != 0)
        {
            _recv.AsSpan(_recvStart, leftover).CopyTo(_recv);
            _recvStart = 0;
            _recvEnd = leftover;
        }

        _parser.Reset();
        if (leftover != 0)
        {
            try
            {
                if (_parser.TryParse(_recv, _recvEnd))
                {
                    return new ValueTask<ResponseHead>(CompleteHead());
                }
            }
            catch (Exception e)
            {
                return ValueTask.FromException<ResponseHead>(Fail(e, LLHttpError.ReceiveFailed, LLHttpError.ResponseHeadTimeout, cancellationToken));
            }
        }

        return ReadResponseHeadSlow(cancellationToken);
    }

    // The only retry: a reused connection the origin closed (idle timeout race) before answering a request that was sent
    // whole from our buffer and is idempotent (RFC 9110 §9.2.2), so nothing of the caller's was consumed and sending
    // it again is safe. SocketsHttpHandler retries the same case.
    private bool CanRetryStale(bool retried)
        => !retried && _retryable && _reconnect is not null && _exchangeCount > 1 && _recvEnd == 0 && _informationalCount == 0;

    private async ValueTask ReconnectAndResendAsync(CancellationToken cancellationToken)
    {
        _transport.Dispose();
        _transport = await ConnectTransportAsync(_reconnect!, _options, cancellationToken).ConfigureAwait(false);
        _exchangeCount = 1;
        await _transport.SendAsync(_send.WrittenMemory, _gate.TokenFor(_options.ResponseHeadTimeout, cancellationToken)).ConfigureAwait(false);
    }

    private void GrowReceiveBuffer()
    {
        // The parser throws ResponseHeadTooLarge before a head outgrows MaxResponseHeadersLength.
        int newLength = Math.Min(_recv.Length * 2, _options.MaxResponseHeadersLength);
        Debug.Assert(newLength > _recv.Length);
        byte[] bigger = _options.BufferPool.Rent(newLength);
        _recv.AsSpan(0, _recvEnd).CopyTo(bigger);
        _options.BufferPool.Return(_recv);
        _recv = bigger;
    }

    private ResponseHead CompleteHead()
    {
        ResponseHeadParser p = _parser;
        _recvStart = p.HeadLength;
        int status = p.StatusCode;

        if (status < 200)
        {
            // RFC 9110 §15.2.2: 101 hands the connection to another protocol; this client only speaks HTTP/1.1, so it is
            // refused unless the request asked for it (RequestUpgrade), and then the connection is the caller's tunnel.
            if (status == 101)
            {
                if (!_upgradeRequested)
                {
                    ThrowHelper.Throw(LLHttpError.UnsupportedUpgrade, "101 Switching Protocols to a request that asked for no upgrade.");
                }
                _upgraded = true;
                _reusable = false;
                _response = ResponseState.Complete;
                // The request was sent whole; its copy kept for a stale-connection retry is of no use any more.
                _send.Release();
                return new ResponseHead(p, ResponseBodyFraming.None, -1, keepAlive: false);
            }

            if (++_informationalCount > _options.MaxInformationalResponses)
            {
                ThrowHelper.Throw(LLHttpError.TooManyInformationalResponses, "Too many informational responses.");
            }

            return new ResponseHead(p, ResponseBodyFraming.None, -1, keepAlive: true);
        }

        // RFC 9112 §9.3: HTTP/1.1 persists unless "close"; HTTP/1.0 only with "keep-alive".
        bool keepAlive = !p.ConnectionClose && (p.MinorVersion == 1 || p.ConnectionKeepAlive);
        ResponseBodyFraming framing;
        long contentLength = -1;

        // RFC 9112 §6.3, in its order.
        if (_requestIsHead || status is 204 or 304)
        {
            // Rule 1: no body whatever Content-Length or Transfer-Encoding say.
            framing = ResponseBodyFraming.None;
        }
        else if (p.HasTransferEncoding)
        {
            // §6.1: Transfer-Encoding in an HTTP/1.0 message means faulty framing.
            if (p.MinorVersion == 0)
            {
                ThrowHelper.Throw(LLHttpError.InvalidTransferEncoding, "Transfer-Encoding in an HTTP/1.0 response.");
            }

            // Rule 4 would read a non-chunked final coding until close; a proxy cannot re-frame that faithfully, so refuse.
            if (!p.IsChunked)
            {
                ThrowHelper.Throw(LLHttpError.InvalidTransferEncoding, "The final transfer coding is not chunked.");
            }

            framing = ResponseBodyFraming.Chunked;

            // Rule 3: Transfer-Encoding overrides Content-Length, and the connection must close after the response,
            // since the sender may have meant the other framing (request smuggling).
            if (p.HasContentLength)
            {
                keepAlive = false;
            }

            _chunked.Reset(_options.MaxChunkExtensionsLength, _options.MaxResponseHeadersLength);
        }
        else if (p.HasContentLength)
        {
            // Rule 6 (rule 5, an invalid value, already threw in the parser).
            framing = ResponseBodyFraming.ContentLength;
            contentLength = p.ContentLength;
        }
        else
        {
            // Rule 8: the body ends at close, so the connection cannot be reused.
            framing = ResponseBodyFraming.CloseDelimited;
            keepAlive = false;
        }

        _responseFraming = framing;
        _responseRemaining = contentLength;
        _responseKeepAlive = keepAlive;
        _response = ResponseState.Body;
        if (framing == ResponseBodyFraming.None || contentLength == 0)
        {
            ResponseBodyComplete();
        }

        return new ResponseHead(p, framing, contentLength, keepAlive);
    }

    /// <summary>
    /// Reads body bytes into <paramref name="destination"/>, de-chunked. Returns 0 at the end of the body. A body cut short
    /// by the peer fails with <see cref="LLHttpError.ResponseBodyTruncated"/>: the caller must not end its own response
    /// normally. Invalidates the head's spans.
    /// </summary>
    public ValueTask<int> ReadBodyAsync(Memory<byte> destination, CancellationToken cancellationToken = default)
    {
        if (_response == ResponseState.Complete)
        {
            return new ValueTask<int>(0);
        }

        ThrowIfUnusable();
        if (!_active || _response != ResponseState.Body)
        {
            ThrowHelper.ThrowInvalidOperation("Read the final response head before the body.");
        }

        if (destination.IsEmpty)
        {
            ThrowHelper.ThrowArgument(nameof(destination), "The destination is empty.");
        }

        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromException<int>(Fail(new OperationCanceledException(cancellationToken), LLHttpError.ReceiveFailed, LLHttpError.BodyIdleTimeout, cancellationToken));
        }

        int buffered = _recvEnd - _recvStart;
        if (buffered != 0)
        {
            switch (_responseFraming)
            {
                case ResponseBodyFraming.ContentLength:
                    {
                        int n = (int)Math.Min(Math.Min(buffered, destination.Length), _responseRemaining);
                        _recv.AsSpan(_recvStart, n).CopyTo(destination.Span);
                        ConsumeReceived(n);
                        _responseRemaining -= n;
                        if (_responseRemaining == 0)
                        {
                            ResponseBodyComplete();
                        }

                        return new ValueTask<int>(n);
                    }

                case ResponseBodyFraming.CloseDelimited:
                    {
                        int n = Math.Min(buffered, destination.Length);
                        _recv.AsSpan(_recvStart, n).CopyTo(destination.Span);
                        ConsumeReceived(n);
                        return new ValueTask<int>(n);
                    }

                default:
                    {
                        bool done;
                        int consumed;
                        int written;
                        try
                        {
                            done = DecodeChunked(_recv.AsSpan(_recvStart, buffered), destination.Span, out consumed, out written);
                        }
                        catch (Exception e)
                        {
                            return ValueTask.FromException<int>(Fail(e, LLHttpError.ReceiveFailed, LLHttpError.BodyIdleTimeout, cancellationToken));
                        }

                        ConsumeReceived(consumed);
                        if (done)
                        {
                            ResponseBodyComplete();
                        }

                        if (written != 0 || done)
                        {
                            return new ValueTask<int>(written);
                        }

                        break;
                    }
            }
        }

        return ReadBodySlow(destination, cancellationToken);
    }

    [DoesNotReturn]
    private static void ThrowTruncatedChunked()
        => ThrowHelper.Throw(LLHttpError.ResponseBodyTruncated, "The connection closed before the last chunk.");

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void ConsumeReceived(int count)
    {
        _recvStart += count;
        if (_recvStart == _recvEnd)
        {
            _recvStart = _recvEnd = 0;
        }
    }

    private ValueTask<int> ReceiveAsync(Memory<byte> destination, TimeSpan timeout, CancellationToken cancellationToken)
    {
        ValueTask<int> receive = _transport.ReceiveAsync(destination, _gate.TokenFor(timeout, cancellationToken));
        if (!receive.IsCompleted)
        {
            _gate.Enter(timeout, cancellationToken);
        }

        return receive;
    }

    private void ResponseBodyComplete()
    {
        _response = ResponseState.Complete;

        // Bytes after a complete response were not asked for; whatever they are, the connection is out of sync.
        if (_recvEnd != _recvStart)
        {
            _reusable = false;
        }

        if (!_responseKeepAlive)
        {
            _reusable = false;
        }

        TryFinishExchange();
    }

    private void TryFinishExchange()
    {
        // In a full-duplex exchange the request and the response complete on different threads; each side writes its
        // state before this fence and reads the other's after it, so at least one of them sees both complete.
        Interlocked.MemoryBarrier();
        if (_request == RequestState.Complete && _response == ResponseState.Complete)
        {
            _active = false;
            _lastUsedTimestamp = _options.TimeProvider.GetTimestamp();
        }
    }

    private Exception Fail(Exception e, LLHttpError ioError, LLHttpError timeoutError, CancellationToken cancellationToken)
    {
        Abort();
        return Classify(e, ioError, timeoutError, cancellationToken);
    }

    /// <summary>
    /// A send failed. While a request body streams, the response may be read at the same time and an origin that answered
    /// early (a 413, say) may have stopped reading or closed its reading side (RFC 9112 §9.3, §9.6): its response is still
    /// readable, so only the request is marked failed and the connection is never reused. Otherwise as <see cref="Fail"/>.
    /// </summary>
    private Exception FailSend(Exception e, CancellationToken cancellationToken)
    {
        if (_request != RequestState.Body)
        {
            return Fail(e, LLHttpError.SendFailed, LLHttpError.BodyIdleTimeout, cancellationToken);
        }

        _request = RequestState.Failed;
        _reusable = false;
        return Classify(e, LLHttpError.SendFailed, LLHttpError.BodyIdleTimeout, cancellationToken);
    }

    private static Exception Classify(Exception e, LLHttpError ioError, LLHttpError timeoutError, CancellationToken cancellationToken)
    {
        return e switch
        {
            LLHttpException => e,
            OperationCanceledException when cancellationToken.IsCancellationRequested => new OperationCanceledException(e.Message, e, cancellationToken),
            OperationCanceledException => new LLHttpException(timeoutError, $"{timeoutError}: the operation timed out.", e),
            SocketException or IOException or ObjectDisposedException => new LLHttpException(ioError, e.Message, e),
            _ => e,
        };
    }

    /// <summary>Closes the socket; every later operation fails with <see cref="LLHttpError.ConnectionAborted"/>.</summary>
    /// <summary>
    /// Asks the origin to switch protocols (RFC 9110 §7.8): buffers "Connection: upgrade" and "Upgrade:
    /// <paramref name="protocols"/>" with the request head, which must carry no body. A 101 answer is then returned by
    /// <see cref="ReadResponseHeadAsync"/> instead of refused, and from then on the connection is no longer HTTP: it is
    /// never reusable, its bytes go through <see cref="ReadUpgradedAsync"/> and <see cref="WriteUpgradedAsync"/>, and
    /// <see cref="CloseUpgraded"/> or <see cref="Abort"/> ends it. Any other answer is an ordinary response.
    /// </summary>
    public void RequestUpgrade(ReadOnlySpan<byte> protocols)
    {
        EnsureRequestState(RequestState.Head);
        RequestHeadWriter.WriteHeader(_send, "Connection"u8, "upgrade"u8);
        RequestHeadWriter.WriteHeader(_send, "Upgrade"u8, protocols);
        _upgradeRequested = true;
    }

    /// <summary>The origin answered <see cref="RequestUpgrade"/> with 101: the connection is a two-way byte stream now.</summary>
    public bool IsUpgraded => _upgraded;

    /// <summary>
    /// Receives bytes of the switched protocol: first those that came right after the 101 head (already in the receive
    /// buffer), then from the socket. 0 at the origin's end of stream. No timeout of the client's own applies: the
    /// caller bounds the wait through <paramref name="cancellationToken"/>.
    /// </summary>
    public ValueTask<int> ReadUpgradedAsync(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        EnsureUpgraded();
        int buffered = _recvEnd - _recvStart;
        if (buffered == 0)
        {
            return _transport.ReceiveAsync(buffer, cancellationToken);
        }
        int count = Math.Min(buffered, buffer.Length);
        _recv.AsSpan(_recvStart, count).CopyTo(buffer.Span);
        _recvStart += count;
        if (_recvStart == _recvEnd)
        {
            // Every later byte is received straight into the caller's buffer: the receive buffer goes back to the pool.
            _options.BufferPool.Return(_recv);
            _recv = [];
            _recvStart = _recvEnd = 0;
        }
        return new ValueTask<int>(count);
    }

    /// <summary>Sends bytes of the switched protocol, straight from the caller's buffer.</summary>
    public ValueTask WriteUpgradedAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken)
    {
        EnsureUpgraded();
        return _transport.SendAsync(buffer, cancellationToken);
    }

    /// <summary>
    /// Ends the sending side alone (a FIN; over TLS a close_notify first), so the origin sees the end of what the caller
    /// relays while its own bytes can still be read. False where the transport cannot.
    /// </summary>
    public ValueTask<bool> CloseUpgradedOutputAsync()
    {
        EnsureUpgraded();
        return _transport.ShutdownSendAsync();
    }

    /// <summary>The switched protocol is done both ways and nothing is pending: closes the connection, its buffers back to the pool.</summary>
    public void CloseUpgraded()
    {
        EnsureUpgraded();
        _active = false;
        Dispose();
    }

    private void EnsureUpgraded()
    {
        if (!_upgraded)
        {
            ThrowHelper.ThrowInvalidOperation("The connection did not switch protocols.");
        }
    }

    public void Abort()
    {
        _aborted = true;
        _reusable = false;
        _transport.Dispose();
    }

    private void ThrowIfUnusable()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (_aborted)
        {
            ThrowHelper.Throw(LLHttpError.ConnectionAborted, "The connection was aborted by an earlier error.");
        }
    }

    private void EnsureRequestState(RequestState expected)
    {
        ThrowIfUnusable();
        if (_request == RequestState.Failed)
        {
            ThrowHelper.Throw(LLHttpError.SendFailed, "An earlier request body send failed: the request cannot continue.");
        }

        if (!_active || _request != expected)
        {
            ThrowHelper.ThrowInvalidOperation($"The request is not in the {expected} state.");
        }
    }

    private static bool IsIdempotent(ReadOnlySpan<byte> method)
        => method.SequenceEqual("GET"u8) || method.SequenceEqual("HEAD"u8) || method.SequenceEqual("PUT"u8)
        || method.SequenceEqual("DELETE"u8) || method.SequenceEqual("OPTIONS"u8) || method.SequenceEqual("TRACE"u8);

    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }

        bool idle = !_active;
        if (idle && !_aborted)
        {
            // Between exchanges nothing is pending: a graceful close (TLS: close_notify before the FIN).
            _aborted = true;
            _reusable = false;
            _transport.Close();
        }
        else
        {
            Abort();
        }
        _disposed = true;
        _gate.Dispose();
        _sendGate.Dispose();

        // With an exchange in flight a pending receive may still write into the buffers: let the GC have them instead.
        if (idle)
        {
            if (_recv.Length != 0)
            {
                _options.BufferPool.Return(_recv);
            }

            _recv = [];
            _send.Dispose();
        }
    }

    public ValueTask DisposeAsync()
    {
        Dispose();
        return default;
    }

    private enum RequestState : byte
    {
        Head,
        Body,
        Complete,
        /// <summary>A body send failed: the request is out of frame, the response may still be read.</summary>
        Failed,
    }

    private enum ResponseState : byte
    {
        Head,
        Body,
        Complete,
    }
}
