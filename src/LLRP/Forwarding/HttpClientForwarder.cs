using System.Buffers;
using System.Net;
using System.Net.Http.Headers;
using System.Text;
using LLRP.Balancing;
using LLRP.Buffers;
using LLRP.Errors;
using LLRP.Exchanges;
using LLRP.Http1;
using LLRP.Semantics;

namespace LLRP.Forwarding;

/// <summary>
/// The httpclient variant: the request head becomes an HttpRequestMessage (strings), the response's fields and body
/// are written straight into the exchange's <see cref="ResponseWriter"/>. Against llhttp it measures what
/// HttpClient costs.
/// </summary>
internal sealed class HttpClientForwarder(DownstreamClients clients, DownstreamChoice downstream, HttpMessageInvoker invoker, bool ownsInvoker)
    : InvokerForwarder(clients, downstream, invoker, ownsInvoker)
{
    // One async method for the whole exchange, as in the httpclient-httpcontext variant, so both pay for one state machine.
    protected override async ValueTask ForwardThroughInvokerAsync(Exchange exchange)
    {
        using var request = CreateRequest(exchange);
        var switching = await SendAsync(request, exchange, exchange.Aborted);
        if (await SwitchProtocolsAsync(switching, exchange))
        {
            return;
        }
        using var response = switching;

        var writer = exchange.Response;
        var length = DownstreamContentLength(response);
        writer.BeginHead((int)response.StatusCode);
        ForEachEndToEndField(response, writer, static (writer, name, value) => writer.WriteField(name, value));
        if (!writer.EndHead(length is null ? DownstreamBody.UntilEnd : DownstreamBody.ContentLength, length ?? 0))
        {
            return;
        }
        if (writer.SendsHeadAtOnce && (await writer.FlushAsync()).IsCompleted)
        {
            ProxyThrow.ClientGone();
        }

        var body = await response.Content.ReadAsStreamAsync(exchange.Aborted);
        // With trailers to relay the body is read to its end even after its Content-Length: HttpClient fills
        // TrailingHeaders only then (a byte beyond the length is the downstream's error, as ever).
        while (writer.ExpectsMoreBody || writer.CanSendTrailers)
        {
            var read = await ReadBodyAsync(body, writer.GetBodyMemory(), exchange, exchange.Aborted);
            if (read == 0)
            {
                break;
            }
            await exchange.ResponseBodyReceivedAsync(read);
        }
        ForEachTrailer(response, writer, static (writer, name, value) => writer.WriteTrailer(name, value));
        writer.CompleteBody();
    }

    private HttpRequestMessage CreateRequest(Exchange exchange)
    {
        var head = exchange.Head;
        var request = NewRequest(Method(head), DownstreamPrefix + Encoding.ASCII.GetString(head.Target));
        if (head.Framing != BodyFraming.None)
        {
            request.Content = new BodyContent(exchange, head.Framing == BodyFraming.ContentLength ? head.ContentLength : null, Http2Downstream);
            request.Headers.TransferEncodingChunked = head.LengthUnknown;
            ExpectContinueForLargeOrChunkedBody(request.Headers, head);
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
        exchange.AddProxyFieldsTo(headers);
        AskToUpgrade(headers, exchange);
        AcceptTrailersFromDownstream(headers, exchange);
        return request;
    }

    private static HttpMethod Method(RequestHead head) => head.Method switch
    {
        RequestMethod.Get => HttpMethod.Get,
        RequestMethod.Post => HttpMethod.Post,
        RequestMethod.Put => HttpMethod.Put,
        RequestMethod.Delete => HttpMethod.Delete,
        RequestMethod.Head => HttpMethod.Head,
        RequestMethod.Options => HttpMethod.Options,
        RequestMethod.Trace => HttpMethod.Trace,
        RequestMethod.Patch => HttpMethod.Patch,
        _ => new HttpMethod(Encoding.ASCII.GetString(head.MethodBytes)),
    };

    /// <summary>Streams the client's de-framed body from the exchange's <see cref="RequestBodyReader"/>.</summary>
    private sealed class BodyContent(Exchange exchange, long? length, bool flushEachWrite) : RequestContent(length, flushEachWrite)
    {
        protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context, CancellationToken cancellationToken)
        {
            var buffer = ProxyBuffers.Bytes.Rent(16 * 1024);
            try
            {
                while (true)
                {
                    int read;
                    try
                    {
                        read = await exchange.Body.ReadAsync(buffer, exchange.Aborted);
                    }
                    catch (ProxyException e)
                    {
                        // The client's failure, known here: HttpClient will report its send failed, and the exchange
                        // answers this instead.
                        exchange.RequestBodyFailed(e);
                        throw;
                    }
                    if (read == 0)
                    {
                        return;
                    }
                    await WritePieceAsync(stream, buffer.AsMemory(0, read), cancellationToken);
                    exchange.RestartDeadline();
                }
            }
            finally
            {
                ProxyBuffers.Bytes.Return(buffer);
            }
        }
    }
}
