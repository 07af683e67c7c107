using System.Buffers;
using System.IO.Pipelines;
using LLRP.Balancing;
using LLRP.Buffers;
using LLRP.Errors;
using LLRP.Exchanges;
using LLRP.Http1;
using LLRP.Transport;
using Microsoft.AspNetCore.Connections;
using KestrelBadRequest = Microsoft.AspNetCore.Http.BadHttpRequestException;

namespace LLRP.Connections;

/// <summary>
/// One client connection and its one request loop, the HTTP/1.1 front end: read and validate a head, start the
/// connection's <see cref="Exchange"/> for it, let the variant's <see cref="IForwarder"/> send it downstream and relay
/// the response into the exchange's response, flush, and go on until either side wants the connection closed.
/// Pipelined requests wait in the connection's input. Every failure ends here as a <see cref="ProxyException"/> and is
/// answered in <see cref="FailExchangeAsync"/>.
/// </summary>
internal sealed class ProxyConnection : ISweptConnection
{
    /// <summary>What the connection waits for, which decides the timeout that applies and what its expiry means.</summary>
    private enum Waiting : byte
    {
        Nothing,
        /// <summary>Between requests: keepAliveTimeout; expiry closes without an answer.</summary>
        NextRequest,
        /// <summary>The first byte of a head arrived: requestHeadersTimeout; expiry answers 408.</summary>
        RequestHead,
        /// <summary>Forwarding: the exchange's deadline (downstreamResponseTimeout, restarted by progress); expiry aborts the exchange.</summary>
        Downstream,
        /// <summary>Discarding the rest of a body after an early response: <see cref="RequestBodyDrainTimeout"/>; expiry closes.</summary>
        Drain,
        /// <summary>A tunnel after a 101: tunnelIdleTimeout, kept by the tunnel itself (<see cref="Tunnel.Check"/>); expiry ends it.</summary>
        Tunnel,
    }

    /// <summary>
    /// How long the rest of a request body is read and discarded after an early final response before the connection
    /// is closed instead: 5 s, Kestrel's request-draining timeout. Its size is bounded by maxRequestBodySize, which the
    /// body reader enforces (a larger body ends the drain and closes too).
    /// </summary>
    internal static readonly TimeSpan RequestBodyDrainTimeout = TimeSpan.FromSeconds(5);

    private const int DrainBufferLength = 16 * 1024;

    private enum HeadStatus : byte
    {
        Incomplete,
        Complete,
        /// <summary>The client closed, or went idle past keepAliveTimeout: end without an answer.</summary>
        Closed,
        /// <summary>The head is invalid or too slow: answer <see cref="_rejection"/> and end.</summary>
        Rejected,
    }

    private static readonly Action<object?> s_clientGone = static state => ((IExchangeControl)state!).ClientGone();

    private readonly ConnectionContext _context;
    private readonly PipeReader _input;
    private readonly ProxyServer _server;
    private readonly ProxyOptions _options;
    private readonly IForwarder _forwarder;
    // One exchange per connection, reused request after request: HTTP/1.1 has one in flight at a time.
    private readonly Exchange _exchange;
    private long _deadline = long.MaxValue;
    private volatile Waiting _waiting;
    private volatile bool _headTimedOut;
    private volatile bool _inExchange;
    // Orders the idle trim's renewal of the exchange's abort source against the start of an exchange:
    // 0 between exchanges, 1 while the trim renews it, 2 from the start of an exchange until the next head is awaited.
    private int _exchangeGate;
    // The host is stopping and this connection's wait for a next request was cancelled to close it.
    private volatile bool _closingIdle;
    private ProxyError _rejection;
    private readonly DownstreamChoice _downstreams;
    // The tunnel the connection became after a 101, while it runs (the sweep keeps its idle time).
    private volatile Tunnel? _tunnel;

    public ProxyConnection(ProxyServer server, ConnectionContext context, IForwarder forwarder, int index, DownstreamChoice downstreams)
    {
        _downstreams = downstreams;
        _server = server;
        _context = context;
        _input = context.Transport.Input;
        _options = server.Options;
        _forwarder = forwarder;
        Head = new RequestHead(_options.Limits);
        Response = new ResponseWriter(context.Transport.Output);
        Body = new RequestBodyReader(_input, _options.Limits, Response);
        var peer = ClientPeer.Of(context);
        _exchange = new Exchange(Head, Body, Response, _options.DownstreamResponseTimeout, peer.ForwardedFor, index, peer.Tls, context.Transport,
            _options.TunnelIdleTimeout);
    }

    /// <summary>The downstream of the latest exchange (none before the first one), named when a failed exchange is logged.</summary>
    public Uri? Downstream => _downstreams.Current?.Address;

    /// <summary>A request head was accepted and its exchange has not ended: what a graceful stop waits for.</summary>
    public bool InExchange => _inExchange;

    /// <summary>One while <see cref="InExchange"/>: HTTP/1.1 has one exchange in flight at a time.</summary>
    public int ExchangesInFlight => _inExchange ? 1 : 0;

    private RequestHead Head { get; }
    private RequestBodyReader Body { get; }
    private ResponseWriter Response { get; }

    // The exchange's lifecycle, which the connection drives and the variant never sees. Exchange is sealed, so the JIT
    // can bind these calls to its implementation; at worst they are interface calls.
    private IExchangeControl Control => _exchange;

    /// <summary>The connection's life, started by <see cref="ProxyServer.OnConnectionAsync"/>; it leaves the set of what is in flight when it ends.</summary>
    public async Task RunAsync()
    {
        using var closed = WatchClientClosed();
        // What the connection's end sends (ConnectionClose): a graceful close unless the loop aborted the connection.
        var ending = ConnectionEnding.Close;
        try
        {
            // One async method for the connection's life: its awaits reuse one state machine, request after request.
            while (true)
            {
                StartHead();
                HeadStatus status;
                do
                {
                    status = ParseHead(await _input.ReadAsync());
                }
                while (status == HeadStatus.Incomplete);
                if (status == HeadStatus.Rejected)
                {
                    if (_rejection == ProxyError.RequestTimeout)
                    {
                        // A head too slow is not a refused one: the exchange began and failed on the client's side.
                        _server.Counters.Failed.Answered(ProxyErrors.StatusCode(_rejection));
                    }
                    await Response.WriteErrorAsync(ProxyErrors.StatusCode(_rejection));
                    // The rest of the head, or a body, may still be on its way.
                    ending = ConnectionEnding.Linger;
                }
                if (status != HeadStatus.Complete)
                {
                    return;
                }

                StartExchange();
                try
                {
                    await _forwarder.ForwardAsync(_exchange);
                    if (!Response.IsComplete)
                    {
                        ProxyThrow.Throw(ProxyError.DownstreamBodyCutShort, "The variant ended without completing the response.");
                    }
                    _waiting = Waiting.Nothing;
                    await Response.FlushAsync();
                }
                catch (Exception e)
                {
                    // A 101 head that could not reach the client: its tunnel never starts.
                    if (_exchange.Tunnel is { } unstarted)
                    {
                        unstarted.Abort();
                        unstarted.Dispose();
                    }
                    ending = await FailExchangeAsync(e);
                    return;
                }
                _inExchange = false;
                _server.Counters.CountRequest();
                // The downstream switched protocols (101): the connection is a tunnel until either side ends, never HTTP again.
                if (_exchange.Tunnel is { } downstream)
                {
                    ending = await RunTunnelAsync(downstream);
                    return;
                }
                if (_exchange.RelayedTunnel is { } relayed)
                {
                    ending = EndRelayedTunnel(relayed);
                    return;
                }
                // A body the downstream did not wait for is still in the input: drained (bounded) or the connection closes
                // (RFC 9110 §15.5). A stopping host closes each connection once its exchange is done (RFC 9112 §9.6).
                if (Response.MustClose || _server.Stopping || (!Body.IsComplete && !await DrainBodyAsync()))
                {
                    ending = Body.IsComplete ? ConnectionEnding.Close : ConnectionEnding.Linger;
                    return;
                }
            }
        }
        catch (Exception e) when (e is IOException or ConnectionResetException or OperationCanceledException or ObjectDisposedException)
        {
            // The client went away: nothing left to answer, and no one to send a close to.
            ending = ConnectionEnding.Abort;
        }
        catch (Exception e) when (_server.LogUnhandled(e, _context.ConnectionId))
        {
            // A bug, logged; the connection closes as it would have.
        }
        finally
        {
            // First, so that the sweep and a graceful stop stop looking at it even if a disposal below throws.
            _server.InFlight.ConnectionEnded(this);
            _waiting = Waiting.Nothing;
            _inExchange = false;
            Head.Reset();
            _forwarder.Dispose();
            Control.Dispose();
            // Last, with everything the exchange held given back: a close that waits for the client holds nothing else.
            await ConnectionClose.EndAsync(_context, ending, _server);
        }
    }

    /// <summary>
    /// The rest of the connection's life after a 101: bytes the client sent after its upgrade request are still in the
    /// input and are the tunnel's first, never parsed as a request. Ends gracefully unless the tunnel failed.
    /// </summary>
    private async Task<ConnectionEnding> RunTunnelAsync(ITunnelDownstream downstream)
    {
        var tunnel = new Tunnel(new ConnectionTunnelClient(_context), downstream, _options.TunnelIdleTimeout, _server.Counters.Tunnels);
        _tunnel = tunnel;
        _waiting = Waiting.Tunnel;
        try
        {
            return await tunnel.RunAsync() == TunnelEnd.Error ? ConnectionEnding.Abort : ConnectionEnding.Close;
        }
        finally
        {
            _waiting = Waiting.Nothing;
            _tunnel = null;
        }
    }

    /// <summary>A tunnel the variant relayed itself has ended (<see cref="TunnelCounters.Relayed"/>): the connection closes, aborted after a failure.</summary>
    private ConnectionEnding EndRelayedTunnel(RelayedTunnel relayed) =>
        _server.Counters.Tunnels.Relayed(relayed, _exchange.AbortReason, _server.Stopping) == TunnelEnd.Error ? ConnectionEnding.Abort : ConnectionEnding.Close;

    // The client closing aborts the exchange in flight. The epoll transport calls back without a token registration,
    // which would leave a registration table and a node on its source for the connection's life (IClientClosedFeature).
    private CancellationTokenRegistration WatchClientClosed()
    {
        if (_context.Features.Get<IClientClosedFeature>() is { } feature)
        {
            feature.OnClientClosed(s_clientGone, _exchange);
            return default;
        }
        return _context.ConnectionClosed.Register(s_clientGone, _exchange);
    }

    /// <summary>
    /// An early final response (RFC 9110 §15: any status, sent before the request body ended) left the rest of the body
    /// in the input. RFC 9112 §9.3 and §9.6 allow either reading and discarding it or closing; this reads it, bounded by
    /// <see cref="RequestBodyDrainTimeout"/> and maxRequestBodySize, so the connection can carry the next request and so
    /// the close that ends a failed drain does not find unread input (closing with unread input resets the connection
    /// and may destroy the response before the client reads it). Returns whether the body ended and the connection
    /// may go on. A client still waiting for 100 (Continue) is not asked for the body after a final response: closed.
    /// </summary>
    private async ValueTask<bool> DrainBodyAsync()
    {
        if (Body.AwaitsContinue)
        {
            return false;
        }
        Wait(Waiting.Drain, RequestBodyDrainTimeout);
        var scratch = ProxyBuffers.Bytes.Rent(DrainBufferLength);
        try
        {
            while (await Body.ReadAsync(scratch, _exchange.Aborted) > 0)
            {
            }
            return true;
        }
        catch (Exception e) when (e is OperationCanceledException or ProxyException or KestrelBadRequest)
        {
            return false;
        }
        finally
        {
            _waiting = Waiting.Nothing;
            ProxyBuffers.Bytes.Return(scratch);
        }
    }

    private void StartHead()
    {
        Volatile.Write(ref _exchangeGate, 0);
        Head.Reset();
        Wait(Waiting.NextRequest, _options.KeepAliveTimeout);
    }

    /// <summary>Parses what <paramref name="result"/> holds and advances the input past it.</summary>
    private HeadStatus ParseHead(in ReadResult result)
    {
        var buffer = result.Buffer;
        if (result.IsCanceled && _closingIdle && !_headTimedOut)
        {
            if (buffer.IsEmpty)
            {
                // The host is stopping and no request has started: close.
                return HeadStatus.Closed;
            }
            // A request arrived as the stop began: it is served, then the connection closes.
        }
        else if (result.IsCanceled || _headTimedOut)
        {
            // RFC 9110 §15.5.9: 408 when the client was slow to send a request it started (bytes of it are here, even
            // if they arrived too late to be parsed before the deadline); an idle connection just closes.
            _rejection = ProxyError.RequestTimeout;
            return _waiting == Waiting.RequestHead || !buffer.IsEmpty ? HeadStatus.Rejected : HeadStatus.Closed;
        }

        var reader = new SequenceReader<byte>(buffer);
        try
        {
            if (Head.Parse(ref reader))
            {
                _input.AdvanceTo(reader.Position);
                return HeadStatus.Complete;
            }
            if (Head.Started && _waiting == Waiting.NextRequest)
            {
                Wait(Waiting.RequestHead, _options.RequestHeadersTimeout);
            }
        }
        catch (Exception e) when (ProxyErrors.IsRejection(e))
        {
            _input.AdvanceTo(buffer.End);
            _server.Counters.CountRejected();
            _rejection = ProxyErrors.RejectionOf(e);
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

    /// <summary>The head is valid: starts the exchange (body de-framing, the response and its deadline).</summary>
    private void StartExchange()
    {
        // The trim may be renewing the exchange's abort source this moment, which takes an allocation: wait for it.
        SpinWait spin = default;
        while (Interlocked.CompareExchange(ref _exchangeGate, 2, 0) == 1)
        {
            spin.SpinOnce();
        }
        Control.Start();
        _inExchange = true;
        _waiting = Waiting.Downstream;
    }

    /// <summary>
    /// The exchange failed: answer with the reason's status while nothing was sent, else abort the client connection.
    /// The connection ends either way, as the returned ending says.
    /// </summary>
    private async Task<ConnectionEnding> FailExchangeAsync(Exception e)
    {
        _waiting = Waiting.Nothing;
        switch (_server.Fail(_exchange, e, _context.ConnectionClosed.IsCancellationRequested, Downstream, out var failure, out var status))
        {
            case FailedExchange.Abort:
                _context.Abort(new ConnectionAbortedException("The downstream response could not be completed.", failure));
                return ConnectionEnding.Abort;
            case FailedExchange.Answer:
                await Response.WriteErrorAsync(status);
                // Answered before the body ended (a bad chunk, a body over maxRequestBodySize, a downstream that failed
                // first): the client may still be sending it.
                return Body.IsComplete ? ConnectionEnding.Close : ConnectionEnding.Linger;
            default:
                return ConnectionEnding.Abort;
        }
    }

    private void Wait(Waiting what, TimeSpan timeout)
    {
        Volatile.Write(ref _deadline, Environment.TickCount64 + (long)timeout.TotalMilliseconds);
        _waiting = what;
    }

    /// <summary>
    /// Called by <see cref="DeadlineSweep"/> right before its idle trim: a connection waiting for its next request lets its
    /// forwarder give back what it keeps between exchanges (<see cref="IForwarder.ReleaseIdle"/>) and renews its
    /// exchange's abort source (<see cref="IExchangeControl.RenewAbortSource"/>), unless an exchange starts meanwhile.
    /// </summary>
    public void ReleaseIdle()
    {
        if (_waiting == Waiting.NextRequest)
        {
            _forwarder.ReleaseIdle();
            if (Interlocked.CompareExchange(ref _exchangeGate, 1, 0) == 0)
            {
                Control.RenewAbortSource();
                Volatile.Write(ref _exchangeGate, 0);
            }
        }
    }

    /// <summary>Called by the <see cref="DeadlineSweep"/>: enforces whichever timeout applies now.</summary>
    public void CheckDeadline(long now)
    {
        var waiting = _waiting;
        if (waiting == Waiting.Tunnel)
        {
            _tunnel?.Check(now, _server.Stopping);
            return;
        }
        if (waiting == Waiting.NextRequest)
        {
            _forwarder.OnIdle();
            if (_server.Stopping && !_closingIdle)
            {
                _closingIdle = true;
                _input.CancelPendingRead();
            }
        }
        if (waiting == Waiting.Downstream)
        {
            // A tunnel the variant relays has no end a graceful stop could wait for, as the front end's own tunnels.
            if (Control.IsPastDeadline(now) || (_server.Stopping && _exchange.RelayedTunnel is not null))
            {
                Control.Expire();
            }
            return;
        }
        if (waiting == Waiting.Nothing || now < Volatile.Read(ref _deadline))
        {
            return;
        }
        if (waiting == Waiting.Drain)
        {
            // The response was sent; the body's rest did not come in time: the drain ends and the connection closes.
            Control.Abort(ProxyError.RequestTimeout);
        }
        else
        {
            _headTimedOut = true;
            _input.CancelPendingRead();
        }
    }
}
