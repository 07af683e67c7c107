using System.Buffers;
using LLHttp;
using LLHttp.Syntax;
using LLRP.Balancing;
using LLRP.Buffers;
using LLRP.Errors;
using LLRP.Exchanges;
using LLRP.Http1;

namespace LLRP.Forwarding;

/// <summary>
/// Forwards through LLHttp: the request head goes from RequestHead's buffer into the client's send buffer, response
/// fields go from the client's receive buffer through the header policy into the client PipeWriter, and body bytes are
/// read straight into the PipeWriter's memory. No strings and no copies beyond those.
/// </summary>
internal sealed class LLHttpForwarder(LLHttpDownstreamLease lease) : IForwarder
{
    // LLHttp sends a head and a body this small in one send; larger bodies stream through this buffer, rented for the
    // exchange only so an idle connection holds none. 64 KiB is YARP's stream copy buffer and loopback's segment; the
    // client side receives up to as much at once while a body streams in (EpollConnection's StreamingBufferLength), so
    // a 100 KiB upload is two receives and two sends; smaller buffers cost several times its CPU per request
    // (docs/methodology.md, "Decisions and their evidence").
    private const int SmallBodyLength = 4 * 1024;
    private const int BodyBufferLength = 64 * 1024;

    // The exchange loop's signals while the loop waits for an exchange; null while there is no loop (before the first
    // exchange, or after ReleaseIdle ended it) or while an exchange is in flight. The one place a waiting loop is taken,
    // by the next exchange or by ReleaseIdle/Dispose, which end it: so a connection that never sent a request, or one
    // idle through a trim, keeps no loop.
    private ExchangeSignals? _waitingLoop;
    // The exchange the loop runs next, handed over by ForwardAsync (one at a time).
    private Exchange? _exchange;

    /// <summary>
    /// Hands the exchange to this forwarder's exchange loop and returns a ValueTask over a reusable source, so an
    /// exchange allocates nothing. Two coroutines, the front end's loop and this one, rather than one: the front end
    /// awaits an interface call per request, and an async method behind that call would need a state machine box per
    /// request whenever more exchanges are in flight than PoolingAsyncValueTaskMethodBuilder caches (one per thread and
    /// one per core: with 64 connections on two engine threads, most of them). A loop that lives as long as the
    /// forwarder is one box for all its exchanges; the hand-off costs two completions of reusable sources.
    /// </summary>
    public ValueTask ForwardAsync(Exchange exchange)
    {
        _exchange = exchange;
        var signals = Interlocked.Exchange(ref _waitingLoop, null);
        if (signals is null)
        {
            // The first exchange, or the first since ReleaseIdle ended the loop: a new loop, one box for all its exchanges.
            signals = new ExchangeSignals();
            _ = RunExchangesAsync(signals);
        }
        return signals.Start();
    }

    /// <summary>
    /// The forwarder's exchanges, one after another, in one async method started by the first request: its state
    /// machine is allocated once and every await of every exchange reuses it. A failure reaches the front end through
    /// <see cref="ForwardAsync"/>'s ValueTask, as the exchange's <see cref="ProxyException"/>. Ends when the forwarder
    /// is disposed.
    /// </summary>
    private async Task RunExchangesAsync(ExchangeSignals signals)
    {
        while (await signals.WaitForStartAsync())
        {
            var exchange = _exchange!;
            ProxyException? failure = null;
            var writer = exchange.Response;
            byte[]? bodyBuffer = null;
            // A small body, read whole from the client by the first attempt, so a second one sends it again.
            var smallBodyLength = -1;
            // A request that could not be sent on a new connection (LLHttp's reconnect of a stale pooled one included,
            // which only an idempotent request sent whole from its buffer gets) goes once more, to another downstream.
            Destination? failed = null;
            while (true)
            {
                LLHttpConnection? downstream = null;
                Task? sending = null;
                CancellationTokenSource? stopSending = null;
                // Where the exchange is, so that a failure of LLHttp is classified by the call that failed.
                var phase = ExchangePhase.Connect;
                try
                {
                    downstream = await lease.RentAsync(failed, exchange.Aborted);

                    // The request: head (and a small body) in one send; larger bodies stream with framing LLHttp generates.
                    var head = exchange.Head;
                    StartRequest(exchange, downstream);
                    if (head.Framing == BodyFraming.None)
                    {
                        phase = ExchangePhase.Send;
                        await downstream.SendRequestAsync(exchange.Aborted);
                    }
                    else if (head.Framing == BodyFraming.ContentLength && head.ContentLength <= SmallBodyLength)
                    {
                        var buffer = bodyBuffer ??= ProxyBuffers.Bytes.Rent(BodyBufferLength);
                        if (smallBodyLength < 0)
                        {
                            var length = 0;
                            int read;
                            while ((read = await exchange.Body.ReadAsync(buffer.AsMemory(length), exchange.Aborted)) > 0)
                            {
                                length += read;
                            }
                            smallBodyLength = length;
                        }
                        phase = ExchangePhase.Send;
                        await downstream.SendRequestAsync(buffer.AsMemory(0, smallBodyLength), exchange.Aborted);
                    }
                    else
                    {
                        // Full duplex: the body streams on its own task while this one reads the response, since an origin
                        // may answer while it reads (a streaming transform) or before it reads (an early 413); sending it
                        // all first would deadlock once both directions' socket buffers are full.
                        downstream.StartRequestBody(
                            head.LengthUnknown ? RequestBodyFraming.Chunked : RequestBodyFraming.ContentLength,
                            head.LengthUnknown ? -1 : head.ContentLength);
                        // A body the client's input holds as it is goes on from there (no copy); a chunked one is
                        // decoded into the body buffer.
                        byte[]? buffer = null;
                        ReadOnlyMemory<byte> first;
                        // The first piece is read here: a 100 (Continue) the body reader owes the client is written before
                        // any relayed byte, so only this task ever writes to the client.
                        if (exchange.Body.CanReadInPlace)
                        {
                            first = await exchange.Body.ReadInPlaceAsync(BodyBufferLength, exchange.Aborted);
                        }
                        else
                        {
                            buffer = bodyBuffer ??= ProxyBuffers.Bytes.Rent(BodyBufferLength);
                            first = buffer.AsMemory(0, await exchange.Body.ReadAsync(buffer, exchange.Aborted));
                        }
                        stopSending = CancellationTokenSource.CreateLinkedTokenSource(exchange.Aborted);
                        // Sends the request head synchronously before it returns, so the response head may be read now.
                        phase = ExchangePhase.Send;
                        sending = SendBodyAsync(exchange, downstream, buffer, first, stopSending.Token);
                    }

                    // The response: interim heads to HTTP/1.1 clients (RFC 9110 §15.2), then the final head and body.
                    phase = ExchangePhase.ResponseHead;
                    var response = await downstream.ReadResponseHeadAsync(exchange.Aborted);
                    // A 101 comes back only to a request that asked to upgrade (LLHttp refuses any other one: a 502).
                    while (response.IsInformational && response.StatusCode != 101)
                    {
                        if (writer.CanSendInterim)
                        {
                            writer.BeginInterim(response.StatusCode);
                            WriteFields(writer, response.Headers);
                            await writer.EndInterimAsync();
                        }
                        response = await downstream.ReadResponseHeadAsync(exchange.Aborted);
                    }
                    if (response.StatusCode == 101)
                    {
                        WriteSwitchHead(exchange, response);
                        // The tunnel owns the connection from here: out of the slot and the pool, closed when it ends.
                        lease.Detach(downstream);
                        exchange.SwitchProtocols(new LLHttpTunnelDownstream(downstream));
                        break;
                    }
                    if (WriteFinalHead(writer, response))
                    {
                        phase = ExchangePhase.ResponseBody;
                        while (writer.ExpectsMoreBody)
                        {
                            var read = await downstream.ReadBodyAsync(writer.GetBodyMemory(), exchange.Aborted);
                            if (read == 0)
                            {
                                break;
                            }
                            await exchange.ResponseBodyReceivedAsync(read);
                        }
                    }
                    writer.CompleteBody();
                    if (sending is not null && !await FinishSendingAsync(sending, stopSending!))
                    {
                        // The response is whole but the request body was not all sent: the connection is out of frame,
                        // and giving it back closes it.
                        downstream.Abort();
                    }
                    // Back without its buffers; the slot or pool closes it once idle for downstreamIdleTimeout.
                    lease.Return(downstream);
                    break;
                }
                catch (Exception e)
                {
                    failure = e is LLHttpException http ? Classify(http, phase, exchange.IsAborted) : exchange.FailureOf(e);
                    // Whatever failed, this downstream exchange is unfinished: never reuse its connection.
                    var elsewhere = lease.Abort(downstream, failure, failed, writer.HasStarted);
                    // A connect failure leaves a streaming body unread and nothing written to the client.
                    if (elsewhere is not null)
                    {
                        failed = elsewhere;
                        failure = null;
                        continue;
                    }
                    if (sending is not null)
                    {
                        // The body task must be done with the buffer and the client's input before either is reused; a
                        // failure of the client's side (a bad chunk, a body too large, a client gone) is the cause to answer.
                        stopSending!.Cancel();
                        if (await SendingFailureAsync(sending) is { } sendingFailure)
                        {
                            failure = exchange.FailureOf(sendingFailure);
                        }
                    }
                    break;
                }
                finally
                {
                    stopSending?.Dispose();
                }
            }
            if (bodyBuffer is not null)
            {
                ProxyBuffers.Bytes.Return(bodyBuffer);
            }
            // Waiting again, so the next exchange or ReleaseIdle may take the loop: published before Complete, whose
            // continuation may start the next exchange at once. A Stop that comes first ends the loop's next wait.
            Volatile.Write(ref _waitingLoop, signals);
            signals.Complete(failure);
        }
    }

    /// <summary>
    /// Sends the request body, <paramref name="bytes"/> its first piece, reading the rest from the client: into
    /// <paramref name="buffer"/>, or without one where the client's input holds the body as it is
    /// (<see cref="RequestBodyReader.ReadInPlaceAsync"/>, each piece consumed once sent). Awaiting each send is the
    /// backpressure both ways (an origin that stops reading stops the client reads, and only one buffer of body is
    /// ever held). A failure of the client's side aborts the downstream connection so the response read ends as well; a
    /// failed downstream send leaves the response readable (an origin that answered early may have stopped reading)
    /// and ends this task quietly.
    /// </summary>
    private static async Task SendBodyAsync(Exchange exchange, LLHttpConnection downstream, byte[]? buffer, ReadOnlyMemory<byte> bytes, CancellationToken stop)
    {
        var body = exchange.Body;
        try
        {
            while (!bytes.IsEmpty)
            {
                if (buffer is not null)
                {
                    await downstream.WriteBodyAsync(bytes, stop);
                    exchange.RestartDeadline();
                    bytes = buffer.AsMemory(0, await body.ReadAsync(buffer, stop));
                    continue;
                }
                var sent = 0;
                try
                {
                    await downstream.WriteBodyAsync(bytes, stop);
                    sent = bytes.Length;
                }
                finally
                {
                    // Also after a failed send: the client's input must be readable again (a drain, the next request).
                    body.Consume(sent);
                }
                exchange.RestartDeadline();
                bytes = await body.ReadInPlaceAsync(BodyBufferLength, stop);
            }
            await downstream.CompleteRequestAsync(stop);
        }
        catch (LLHttpException) when (!stop.IsCancellationRequested)
        {
            // The request is marked failed: the response decides the exchange, and the connection is not reused.
        }
        catch (Exception) when (!stop.IsCancellationRequested)
        {
            downstream.Abort();
            throw;
        }
    }

    /// <summary>
    /// The response is complete: returns whether the request body was sent whole, so the connection may be reused.
    /// An early final response (RFC 9110 §15: any status, before the body is done) leaves the rest unsent: the body
    /// task is stopped, the downstream connection is closed (RFC 9112 §9.3: a client that sees the server is not
    /// reading stops sending), and the client connection closes after the relayed response because its unread body is
    /// still in the client's input (the front end drains or closes, see ProxyConnection).
    /// </summary>
    private static async ValueTask<bool> FinishSendingAsync(Task sending, CancellationTokenSource stopSending)
    {
        if (!sending.IsCompleted)
        {
            stopSending.Cancel();
        }
        var failure = await SendingFailureAsync(sending);
        if (failure is not null)
        {
            // The client's side failed after the whole response arrived: answer as for any failure of the exchange.
            System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(failure);
        }
        return sending.IsCompletedSuccessfully && !stopSending.IsCancellationRequested;
    }

    /// <summary>Waits for the body task; returns its failure unless it was stopped by <see cref="CancellationTokenSource.Cancel()"/>.</summary>
    private static async ValueTask<Exception?> SendingFailureAsync(Task sending)
    {
        try
        {
            await sending;
            return null;
        }
        catch (OperationCanceledException)
        {
            return null;
        }
        catch (Exception e)
        {
            return e;
        }
    }

    private void StartRequest(Exchange exchange, LLHttpConnection downstream)
    {
        var head = exchange.Head;
        // RFC 9112 §3.2: every HTTP/1.1 request carries Host; an HTTP/1.0 client may have sent none, so name the downstream.
        downstream.StartRequest(head.MethodBytes, head.Target, head.Authority.IsEmpty ? lease.Authority : head.Authority);
        for (var i = 0; i < head.HeaderCount; i++)
        {
            // RequestHead validated every field on receipt, and Host and framing are never of kind Other.
            if (head.Header(i).Kind == HeaderKind.Other)
            {
                downstream.WriteValidatedHeader(head.Name(i), head.Value(i));
            }
        }
        for (var i = 0; i < exchange.ProxyFieldCount; i++)
        {
            downstream.WriteValidatedHeader(Exchange.ProxyFieldName(i), exchange.ProxyFieldValue(i));
        }
        if (exchange.Upgrading)
        {
            downstream.RequestUpgrade(head.UpgradeProtocols);
        }
    }

    /// <summary>
    /// The 101 head for the client, if the downstream switched to a protocol the client offered (RFC 9110 §7.8); any
    /// other 101 is the downstream's error (502), and its connection is closed.
    /// </summary>
    private static void WriteSwitchHead(Exchange exchange, in ResponseHead response)
    {
        if (!response.Headers.TryGetValue("Upgrade"u8, out var upgrade) || !exchange.Head.AcceptsSwitchTo(upgrade))
        {
            ProxyThrow.Throw(ProxyError.DownstreamInvalidResponse, "The downstream switched to a protocol the client did not offer.");
        }
        var writer = exchange.Response;
        writer.BeginSwitch();
        WriteFields(writer, response.Headers);
        writer.EndSwitch(upgrade);
    }

    /// <summary>Writes the final response head; returns whether body bytes follow.</summary>
    private static bool WriteFinalHead(ResponseWriter writer, in ResponseHead response)
    {
        // RFC 9112 §6.3 rule 3: Transfer-Encoding beside Content-Length "ought to be handled as an error"; a 502 keeps a
        // possible response-splitting attempt away from the client (and LLHttp will not reuse the connection).
        if (response.BodyFraming == ResponseBodyFraming.Chunked && response.Headers.TryGetValue("Content-Length"u8, out _))
        {
            ProxyThrow.Throw(ProxyError.DownstreamInvalidResponse, "The downstream sent both Transfer-Encoding and Content-Length.");
        }
        writer.BeginHead(response.StatusCode);
        WriteFields(writer, response.Headers);
        var (body, length) = response.BodyFraming switch
        {
            ResponseBodyFraming.ContentLength => (DownstreamBody.ContentLength, response.ContentLength),
            ResponseBodyFraming.Chunked or ResponseBodyFraming.CloseDelimited => (DownstreamBody.UntilEnd, 0L),
            // HEAD and 304 answers keep their Content-Length as metadata (RFC 9110 §8.6); LLHttp validated it.
            _ when response.Headers.TryGetValue("Content-Length"u8, out var value) && ContentLengthSyntax.Parse(value) is >= 0 and var declared =>
                (DownstreamBody.ContentLength, declared),
            _ => (DownstreamBody.None, 0L),
        };
        return writer.EndHead(body, length);
    }

    private static void WriteFields(ResponseWriter writer, ResponseHeaders fields)
    {
        for (var i = 0; i < fields.Count; i++)
        {
            var name = fields.Name(i);
            // RFC 9110 §7.6.1: fields the downstream's Connection names are for this hop only.
            if (!fields.IsNominatedByConnection(name))
            {
                writer.WriteField(name, fields.Value(i));
            }
        }
    }

    /// <summary>
    /// The one conversion of LLHttp's failures, made in the catch of the call that failed (<paramref name="phase"/>).
    /// A connect failure (LLHttp's reconnect of a reused connection that closed unanswered included) sent nothing that
    /// a downstream acted on. The connection failed on its own (refused, reset, closed before a complete response)
    /// unless the exchange's own abort (<paramref name="aborted"/>: its deadline, or its client gone) ended it.
    /// </summary>
    private static ProxyException Classify(LLHttpException e, ExchangePhase phase, bool aborted)
    {
        var error = e.Error switch
        {
            LLHttpError.ResponseHeadTimeout => ProxyError.DownstreamTimeout,
            LLHttpError.BodyIdleTimeout or LLHttpError.ResponseBodyTruncated or LLHttpError.InvalidChunkedEncoding or LLHttpError.ReceiveFailed =>
                ProxyError.DownstreamBodyCutShort,
            LLHttpError.ConnectFailed or LLHttpError.ConnectTimeout or LLHttpError.ConnectionClosedBeforeResponse or LLHttpError.SendFailed or LLHttpError.ConnectionAborted
                or LLHttpError.TlsHandshakeFailed =>
                ProxyError.DownstreamUnavailable,
            _ => ProxyError.DownstreamInvalidResponse,
        };
        // A failed TLS handshake is part of connecting: nothing was sent, and the downstream is unusable as set up.
        var connect = e.Error is LLHttpError.ConnectFailed or LLHttpError.ConnectTimeout or LLHttpError.TlsHandshakeFailed;
        var connectionFailed = !aborted && (connect || e.Error is LLHttpError.SendFailed or LLHttpError.ReceiveFailed
            or LLHttpError.ConnectionClosedBeforeResponse or LLHttpError.ResponseBodyTruncated);
        return new ProxyException(error, FailureSide.Downstream, connect ? ExchangePhase.Connect : phase, requestSent: !connect,
            connectionFailed, e.Message, e);
    }

    public void OnIdle() => lease.OnIdle();

    /// <summary>
    /// Right before the proxy's idle trim (<see cref="IdleTrim"/>): the exchange loop ends (its state machine, its task
    /// and its signals become garbage the trim's collection reclaims; the next exchange starts a new loop, ~0.5 KiB
    /// once per idle period) and the affinity slot's idle downstream connection goes to the shared pool now. Safe beside
    /// an exchange that starts meanwhile: whichever takes the waiting loop first has it.
    /// </summary>
    public void ReleaseIdle()
    {
        Interlocked.Exchange(ref _waitingLoop, null)?.Stop();
        lease.ReleaseIdle();
    }

    public void Dispose()
    {
        // The connection calls this once its last exchange completed, so a loop (unless ReleaseIdle ended it) waits for a
        // start: let it end.
        Interlocked.Exchange(ref _waitingLoop, null)?.Stop();
        lease.Dispose();
    }
}
