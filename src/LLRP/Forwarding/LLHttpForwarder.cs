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
            LLHttpConnection? downstream = null;
            byte[]? bodyBuffer = null;
            try
            {
                downstream = await lease.RentAsync(connection.Aborted);

                // The request: head (and a small body) in one send; larger bodies stream with framing LLHttp generates.
                var head = connection.Head;
                StartRequest(connection, downstream);
                if (head.Framing == BodyFraming.None)
                {
                    await downstream.SendRequestAsync(connection.Aborted);
                }
                else if (head.Framing == BodyFraming.ContentLength && head.ContentLength <= SmallBodyLength)
                {
                    var buffer = bodyBuffer = ProxyBuffers.Bytes.Rent(BodyBufferLength);
                    var length = 0;
                    int read;
                    while ((read = await connection.Body.ReadAsync(buffer.AsMemory(length), connection.Aborted)) > 0)
                    {
                        length += read;
                    }
                    await downstream.SendRequestAsync(buffer.AsMemory(0, length), connection.Aborted);
                }
                else
                {
                    var buffer = bodyBuffer = ProxyBuffers.Bytes.Rent(BodyBufferLength);
                    downstream.StartRequestBody(
                        head.Framing == BodyFraming.Chunked ? RequestBodyFraming.Chunked : RequestBodyFraming.ContentLength,
                        head.Framing == BodyFraming.Chunked ? -1 : head.ContentLength);
                    int read;
                    while ((read = await connection.Body.ReadAsync(buffer, connection.Aborted)) > 0)
                    {
                        await downstream.WriteBodyAsync(buffer.AsMemory(0, read), connection.Aborted);
                        connection.RestartDownstreamTimeout();
                    }
                    await downstream.CompleteRequestAsync(connection.Aborted);
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
                // Back without its buffers; the slot or pool closes it once idle for downstreamIdleTimeout.
                lease.Return(downstream);
                downstream = null;
            }
            catch (Exception e)
            {
                // Whatever failed, this downstream exchange is unfinished: never reuse its connection.
                lease.Abort(downstream, e, connection.Aborted.IsCancellationRequested);
                failure = e is LLHttpException http ? Translate(http) : e;
            }
            finally
            {
                if (bodyBuffer is not null)
                {
                    ProxyBuffers.Bytes.Return(bodyBuffer);
                }
            }
            signals.Complete(failure);
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
        LLHttpError.ConnectFailed or LLHttpError.ConnectTimeout or LLHttpError.ConnectionClosedBeforeResponse or LLHttpError.SendFailed or LLHttpError.ConnectionAborted =>
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
