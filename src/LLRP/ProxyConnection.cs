using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Text;
using LLRP.Forwarding;
using LLRP.Http1;
using Microsoft.AspNetCore.Connections;
using KestrelBadRequest = Microsoft.AspNetCore.Http.BadHttpRequestException;

namespace LLRP;

/// <summary>
/// One client connection: reads requests in order (pipelined ones wait in the pipe), validates them, hands
/// each to the variant and writes the answer, until either side wants the connection closed.
/// </summary>
internal sealed class ProxyConnection
{
    private enum Phase
    {
        None,
        /// <summary>Between requests: keepAliveTimeout applies.</summary>
        Idle,
        /// <summary>The first byte of a request arrived: requestHeadersTimeout applies.</summary>
        Headers,
        /// <summary>Forwarding: downstreamResponseTimeout applies to every wait for the downstream.</summary>
        Forwarding,
    }

    private readonly ConnectionContext _context;
    private readonly PipeReader _input;
    private readonly ProxyServer _server;
    private readonly CancellationTokenSource _forwardingCts = new();
    private long _deadline = long.MaxValue;
    private volatile Phase _phase;
    private volatile bool _timedOut;
    private bool _inRequestLine;
    private long _headerBytes;
    private int _rejectStatus;

    public ProxyConnection(ProxyServer server, ConnectionContext context, Uri downstream, IForwarder forwarder, int index)
    {
        _server = server;
        _context = context;
        _input = context.Transport.Input;
        Options = server.Options;
        Downstream = downstream;
        Forwarder = forwarder;
        Index = index;
        Head = new RequestHead(Options);
        Response = new ResponseWriter(context.Transport.Output);
        Body = new RequestBodyReader(_input, Options, SendContinueAsync);
        ForwardedFor = Encoding.ASCII.GetBytes((context.RemoteEndPoint as IPEndPoint)?.Address.ToString() ?? "unknown");
    }

    public ProxyOptions Options { get; }
    public Uri Downstream { get; }
    public IForwarder Forwarder { get; }
    /// <summary>The connection's number in arrival order, for client assignment.</summary>
    public int Index { get; }
    public RequestHead Head { get; }
    public RequestBodyReader Body { get; }
    public ResponseWriter Response { get; }
    /// <summary>The client's address for X-Forwarded-For (RFC 7239 §5.2 names the same information "for").</summary>
    public byte[] ForwardedFor { get; }

    /// <summary>Cancelled when the downstream exchange times out or the client goes away.</summary>
    public CancellationToken Aborted => _forwardingCts.Token;

    /// <summary>Progress on the downstream exchange: restarts the downstreamResponseTimeout window.</summary>
    public void Touch() => Volatile.Write(ref _deadline, Environment.TickCount64 + (long)Options.DownstreamResponseTimeout.TotalMilliseconds);

    public async Task RunAsync()
    {
        using var closed = _context.ConnectionClosed.Register(static state => ((ProxyConnection)state!).OnClientClosed(), this);
        try
        {
            await Forwarder.RunAsync(this);
        }
        catch (Exception e) when (e is IOException or ConnectionResetException or OperationCanceledException or ObjectDisposedException)
        {
            // The client went away: nothing left to answer.
        }
        finally
        {
            _phase = Phase.None;
            Head.Reset();
            Forwarder.Dispose();
            _forwardingCts.Dispose();
        }
    }

    /// <summary>The client connection's input, read by the connection loop between <see cref="StartHead"/> and <see cref="ParseHead"/>.</summary>
    public PipeReader Input => _input;

    /// <summary>
    /// Prepares for the next request head. The loop that reads heads lives in the variant's <see cref="IForwarder.RunAsync"/>
    /// (one async state machine per connection, so waiting for a request allocates nothing); these synchronous steps are
    /// the shared request side it calls.
    /// </summary>
    public void StartHead()
    {
        Head.Reset();
        _inRequestLine = true;
        _headerBytes = 0;
        _rejectStatus = 0;
        SetDeadline(Phase.Idle, Options.KeepAliveTimeout);
    }

    /// <summary>Parses what <paramref name="result"/> holds and advances the input past it.</summary>
    public HeadStatus ParseHead(in ReadResult result)
    {
        var buffer = result.Buffer;
        if (result.IsCanceled || _timedOut)
        {
            // RFC 9110 §15.5.9: 408 when the client was slow to send a request it started; an idle connection just closes.
            _rejectStatus = _phase == Phase.Headers ? 408 : 0;
            return _rejectStatus != 0 ? HeadStatus.Rejected : HeadStatus.Closed;
        }

        var reader = new SequenceReader<byte>(buffer);
        try
        {
            if (_inRequestLine)
            {
                // RFC 9112 §2.2: at least one empty line before a request-line SHOULD be ignored.
                while (reader.IsNext("\r\n"u8, advancePast: true))
                {
                }
                if (reader.Remaining > 0 && _phase == Phase.Idle)
                {
                    SetDeadline(Phase.Headers, Options.RequestHeadersTimeout);
                }
                var lineStart = reader.Consumed;
                if (KestrelParser.ParseRequestLine(Head, ref reader))
                {
                    if (reader.Consumed - lineStart > Options.MaxRequestLineSize)
                    {
                        throw new RequestRejectedException(414, "Request line too long.");
                    }
                    // RFC 9112 §3: a request line with extra whitespace SHOULD be answered with 400.
                    if (reader.Consumed - lineStart != Head.RequestLineLength)
                    {
                        throw RequestRejectedException.BadRequest("Extra whitespace in the request line.");
                    }
                    _inRequestLine = false;
                }
                else if (reader.Remaining > Options.MaxRequestLineSize)
                {
                    throw new RequestRejectedException(414, "Request line too long.");
                }
            }
            if (!_inRequestLine)
            {
                var before = reader.Consumed;
                var complete = KestrelParser.ParseHeaders(Head, ref reader);
                _headerBytes += reader.Consumed - before;
                if (_headerBytes > Options.MaxRequestHeadersTotalSize ||
                    (!complete && _headerBytes + reader.Remaining > Options.MaxRequestHeadersTotalSize))
                {
                    throw new RequestRejectedException(431, "Request header fields too large.");
                }
                if (complete)
                {
                    _input.AdvanceTo(reader.Position);
                    return HeadStatus.Complete;
                }
            }
        }
        catch (Exception e) when (e is KestrelBadRequest or RequestRejectedException)
        {
            _input.AdvanceTo(buffer.End);
            _server.CountRejected();
            _rejectStatus = e is KestrelBadRequest bad ? bad.StatusCode : ((RequestRejectedException)e).StatusCode;
            return HeadStatus.Rejected;
        }

        if (result.IsCompleted)
        {
            // The client closed; a half-sent head is not answered (there is no one to read it).
            _input.AdvanceTo(buffer.End);
            return HeadStatus.Closed;
        }
        _input.AdvanceTo(reader.Position, buffer.End);
        return HeadStatus.Incomplete;
    }

    /// <summary>Answers a rejected head (400, 408, 414, 431, 505...); the connection ends after it.</summary>
    public ValueTask RejectAsync(HeadStatus status) =>
        status == HeadStatus.Rejected ? AwaitFlush(Response.WriteErrorAsync(_rejectStatus)) : default;

    /// <summary>The head is valid: starts body de-framing, the response and the downstream timeout.</summary>
    public void StartExchange()
    {
        Body.Start(Head);
        Response.Start(Head);
        Touch();
        _phase = Phase.Forwarding;
    }

    /// <summary>The variant finished: flush the response (one send for head and small body).</summary>
    public ValueTask<FlushResult> EndExchangeAsync()
    {
        if (!Response.IsComplete)
        {
            throw new DownstreamException(DownstreamError.BodyCutShort, "The variant ended without completing the response.");
        }
        _phase = Phase.None;
        return Response.FlushAsync();
    }

    /// <summary>After the flush: whether the connection may carry another request.</summary>
    public bool CanContinue()
    {
        _server.CountRequest();
        // A body the downstream did not wait for is still in the pipe; skipping it safely means closing (RFC 9110 §15.5).
        return !Response.MustClose && Body.IsComplete;
    }

    /// <summary>
    /// The exchange failed: answer with a status while nothing was sent, else abort the client connection. The
    /// connection ends either way.
    /// </summary>
    public async Task FailExchangeAsync(Exception e)
    {
        _phase = Phase.None;
        if (_context.ConnectionClosed.IsCancellationRequested || e is RequestBodyException { ClientClosed: true })
        {
            return;
        }
        if (Response.HasStarted)
        {
            // RFC 9112 §6.3 / RFC 9110 §15.6: the response has begun and cannot be finished correctly, so the client
            // must see an incomplete message, never a truncated one that looks whole.
            _context.Abort(new ConnectionAbortedException("The downstream response could not be completed.", e));
            return;
        }
        await Response.WriteErrorAsync(e switch
        {
            DownstreamException d => d.StatusCode,
            RequestBodyException b => b.StatusCode,
            RequestRejectedException r => r.StatusCode,
            // The timer fired: a client that stopped sending its body is late (408); otherwise the downstream is (504).
            OperationCanceledException => Body.IsComplete ? 504 : 408,
            // A failure the variant did not classify: the downstream exchange failed (RFC 9110 §15.6.3).
            _ => 502,
        });
    }

    private static async ValueTask AwaitFlush(ValueTask<FlushResult> flush) => await flush;

    private ValueTask SendContinueAsync()
    {
        var flush = Response.WriteContinueAsync();
        return flush.IsCompletedSuccessfully ? default : AwaitFlush(flush);
    }

    private void SetDeadline(Phase phase, TimeSpan timeout)
    {
        Volatile.Write(ref _deadline, Environment.TickCount64 + (long)timeout.TotalMilliseconds);
        _phase = phase;
    }

    /// <summary>Called by the server's heartbeat (once a second, like Kestrel's) to enforce the timeouts.</summary>
    internal void OnHeartbeat(long now)
    {
        var phase = _phase;
        if (phase == Phase.None || now < Volatile.Read(ref _deadline))
        {
            return;
        }
        if (phase == Phase.Forwarding)
        {
            CancelForwarding();
        }
        else
        {
            _timedOut = true;
            _input.CancelPendingRead();
        }
    }

    private void OnClientClosed() => CancelForwarding();

    private void CancelForwarding()
    {
        try
        {
            _forwardingCts.Cancel();
        }
        catch (ObjectDisposedException)
        {
        }
    }
}
