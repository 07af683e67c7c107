using System.Buffers;
using LLHttp;
using LLHttp.Syntax;
using LLRP.Balancing;
using LLRP.Buffers;
using LLRP.Connections;
using LLRP.Errors;
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
    // exchange only so an idle connection holds none.
    private const int SmallBodyLength = 4 * 1024;
    private const int BodyBufferLength = 16 * 1024;

    // Created on the first exchange, so a connection that never sends a request costs one field.
    private ExchangeSignals? _signals;

    /// <summary>
    /// Hands the request to this connection's exchange loop and returns a ValueTask over a reusable source, so an
    /// exchange allocates nothing. A per-call async method would need a state machine box per request whenever more
    /// exchanges are in flight than PoolingAsyncValueTaskMethodBuilder caches (one per thread and one per core).
    /// </summary>
    public ValueTask ForwardAsync(ProxyConnection connection)
    {
        if (_signals is null)
        {
            _signals = new ExchangeSignals();
            _ = RunExchangesAsync(connection, _signals);
        }
        return _signals.Start();
    }

    /// <summary>
    /// The connection's exchanges, one after another, in one async method started by the first request: its state
    /// machine is allocated once and every await of every exchange reuses it. A failure reaches the connection through
    /// <see cref="ForwardAsync"/>'s ValueTask as it was thrown. Ends when the forwarder is disposed.
    /// </summary>
    private async Task RunExchangesAsync(ProxyConnection connection, ExchangeSignals signals)
    {
        while (await signals.WaitForStartAsync())
        {
            Exception? failure = null;
            var writer = connection.Response;
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
                try
                {
                    downstream = await lease.RentAsync(failed, connection.Aborted);

                    // The request: head (and a small body) in one send; larger bodies stream with framing LLHttp generates.
                    var head = connection.Head;
                    StartRequest(connection, downstream);
                    if (head.Framing == BodyFraming.None)
                    {
                        await downstream.SendRequestAsync(connection.Aborted);
                    }
                    else if (head.Framing == BodyFraming.ContentLength && head.ContentLength <= SmallBodyLength)
                    {
                        var buffer = bodyBuffer ??= ProxyBuffers.Bytes.Rent(BodyBufferLength);
                        if (smallBodyLength < 0)
                        {
                            var length = 0;
                            int read;
                            while ((read = await connection.Body.ReadAsync(buffer.AsMemory(length), connection.Aborted)) > 0)
                            {
                                length += read;
                            }
                            smallBodyLength = length;
                        }
                        await downstream.SendRequestAsync(buffer.AsMemory(0, smallBodyLength), connection.Aborted);
                    }
                    else
                    {
                        // Full duplex: the body streams on its own task while this one reads the response, since an origin
                        // may answer while it reads (a streaming transform) or before it reads (an early 413); sending it
                        // all first would deadlock once both directions' socket buffers are full.
                        var buffer = bodyBuffer ??= ProxyBuffers.Bytes.Rent(BodyBufferLength);
                        downstream.StartRequestBody(
                            head.Framing == BodyFraming.Chunked ? RequestBodyFraming.Chunked : RequestBodyFraming.ContentLength,
                            head.Framing == BodyFraming.Chunked ? -1 : head.ContentLength);
                        // The first piece is read here: a 100 (Continue) the body reader owes the client is written before
                        // any relayed byte, so only this task ever writes to the client.
                        var first = await connection.Body.ReadAsync(buffer, connection.Aborted);
                        stopSending = CancellationTokenSource.CreateLinkedTokenSource(connection.Aborted);
                        // Sends the request head synchronously before it returns, so the response head may be read now.
                        sending = SendBodyAsync(connection, downstream, buffer, first, stopSending.Token);
                    }

                    // The response: interim heads to HTTP/1.1 clients (RFC 9110 §15.2), then the final head and body.
                    var response = await downstream.ReadResponseHeadAsync(connection.Aborted);
                    while (response.IsInformational)
                    {
                        if (writer.CanSendInterim)
                        {
                            writer.BeginInterim(response.StatusCode);
                            WriteFields(writer, response.Headers);
                            await writer.EndInterimAsync();
                        }
                        response = await downstream.ReadResponseHeadAsync(connection.Aborted);
                    }
                    if (WriteFinalHead(writer, response))
                    {
                        while (writer.ExpectsMoreBody)
                        {
                            var read = await downstream.ReadBodyAsync(writer.GetBodyMemory(), connection.Aborted);
                            if (read == 0)
                            {
                                break;
                            }
                            await connection.ResponseBodyReceivedAsync(read);
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
                    // Whatever failed, this downstream exchange is unfinished: never reuse its connection.
                    var elsewhere = lease.Abort(downstream, e, connection.Aborted.IsCancellationRequested);
                    // A connect failure leaves a streaming body unread and nothing written to the client.
                    if (elsewhere is not null && failed is null && !writer.HasStarted)
                    {
                        failed = elsewhere;
                        continue;
                    }
                    failure = e is LLHttpException http ? Translate(http) : e;
                    if (sending is not null)
                    {
                        // The body task must be done with the buffer and the client's input before either is reused; a
                        // failure of the client's side (a bad chunk, a body too large, a client gone) is the cause to answer.
                        stopSending!.Cancel();
                        failure = await SendingFailureAsync(sending) ?? failure;
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
            signals.Complete(failure);
        }
    }

    /// <summary>
    /// Sends the request body, <paramref name="read"/> bytes of it already in <paramref name="buffer"/>, reading the rest
    /// from the client; awaiting each send is the backpressure both ways (an origin that stops reading stops the
    /// client reads, and only one buffer of body is ever held). A failure of the client's side aborts the downstream
    /// connection so the response read ends as well; a failed downstream send leaves the response readable (an origin
    /// that answered early may have stopped reading) and ends this task quietly.
    /// </summary>
    private static async Task SendBodyAsync(ProxyConnection connection, LLHttpConnection downstream, byte[] buffer, int read, CancellationToken stop)
    {
        try
        {
            while (read > 0)
            {
                await downstream.WriteBodyAsync(buffer.AsMemory(0, read), stop);
                connection.RestartDownstreamTimeout();
                read = await connection.Body.ReadAsync(buffer, stop);
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
    /// still in the client's input (see <see cref="ProxyConnection"/>).
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

    private void StartRequest(ProxyConnection connection, LLHttpConnection downstream)
    {
        var head = connection.Head;
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
        downstream.WriteValidatedHeader("Via"u8, head.ViaValue);
        downstream.WriteValidatedHeader("X-Forwarded-For"u8, connection.ForwardedFor);
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

    /// <summary>The one mapping from LLHttp's errors to the proxy's.</summary>
    private static ProxyException Translate(LLHttpException e) => new(e.Error switch
    {
        LLHttpError.ResponseHeadTimeout => ProxyError.DownstreamTimeout,
        LLHttpError.BodyIdleTimeout or LLHttpError.ResponseBodyTruncated or LLHttpError.InvalidChunkedEncoding or LLHttpError.ReceiveFailed =>
            ProxyError.DownstreamBodyCutShort,
        LLHttpError.ConnectFailed or LLHttpError.ConnectTimeout or LLHttpError.ConnectionClosedBeforeResponse or LLHttpError.SendFailed or LLHttpError.ConnectionAborted
            or LLHttpError.TlsHandshakeFailed =>
            ProxyError.DownstreamUnavailable,
        _ => ProxyError.DownstreamInvalidResponse,
    }, e.Message, e);

    public void OnIdle() => lease.OnIdle();

    public void Dispose()
    {
        // The connection calls this once its last exchange completed, so the loop waits for a start: let it end.
        var signals = _signals;
        _signals = null;
        signals?.Stop();
        lease.Dispose();
    }
}
