using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using LLRP.Balancing;
using LLRP.Buffers;
using LLRP.Connections;
using LLRP.Errors;
using LLRP.Exchanges;
using LLRP.Http1;
using LLRP.Http2;
using LLRP.Semantics;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;

namespace LLRP.KestrelHttp;

/// <summary>
/// One request that Kestrel's HTTP layer parsed (an HTTP/2 stream, or an HTTP/1.1 request with --frontEnd kestrel),
/// run as an <see cref="Exchange"/> through the variant's <see cref="IForwarder"/>: the head is filled from the
/// request's fields and held to the proxy's rules by <see cref="RequestHead"/> (one place for each rule), the body is
/// read from the stream, the response goes to Kestrel's response (status, fields through the hop-by-hop policy, body).
/// </summary>
/// <remarks>
/// A slot is lent to one request at a time and pooled across connections by <see cref="StreamApplication"/>, as the raw
/// front end keeps one exchange and one forwarder per connection: its forwarder (an llhttp downstream connection or
/// affinity slot, a client of the HttpClient variants) serves request after request. An exchange that failed or was
/// aborted is not lent again (its abort cannot be undone): the slot is disposed.
/// </remarks>
internal sealed class ExchangeSlot : IPooledSlot
{
    private readonly ProxyServer _server;
    private readonly DownstreamChoice _downstreams;
    private readonly IForwarder _forwarder;
    private readonly KestrelResponse _kestrelResponse = new();
    // The request's lifetime while its exchange runs, for the abort that resets its stream.
    private IHttpRequestLifetimeFeature? _lifetime;

    public ExchangeSlot(ProxyServer server)
    {
        _server = server;
        var options = server.Options;
        Head = new RequestHead(options.Limits);
        // Placeholders until Bind gives each request its stream's body and response.
        Response = new ResponseWriter(PipeWriter.Create(Stream.Null));
        Body = new RequestBodyReader(PipeReader.Create(ReadOnlySequence<byte>.Empty), options.Limits, continueTo: null);
        _downstreams = new DownstreamChoice(server.Downstreams);
        _forwarder = server.CreateForwarder(_downstreams, out var index);
        Exchange = new Exchange(Head, Body, Response, options.DownstreamResponseTimeout, [], index);
    }

    public Exchange Exchange { get; }

    // The exchange's lifecycle, which the slot drives and the variant never sees. Exchange is sealed, so the JIT can bind
    // these calls to its implementation; at worst they are interface calls.
    private IExchangeControl Control => Exchange;

    /// <summary>The variant's forwarder, kept with the slot between requests.</summary>
    public IForwarder Forwarder => _forwarder;

    /// <summary>Held while a stream uses the slot (a new slot is held by its first stream), free while it is idle.</summary>
    public SlotGate Gate { get; } = new();

    private RequestHead Head { get; }
    private RequestBodyReader Body { get; }
    private ResponseWriter Response { get; }

    /// <summary>The request's features, from Kestrel's CreateContext to its DisposeContext.</summary>
    public IFeatureCollection Features { get; set; } = null!;

    /// <summary>The exchange ended so that the slot may serve another request.</summary>
    public bool Reusable { get; private set; } = true;

    /// <summary>Runs the request: validates its head, forwards it, and answers or aborts the stream on failure.</summary>
    public async Task RunAsync()
    {
        var features = Features;
        var connection = features.Get<StreamConnection>();
        var lifetime = features.Get<IHttpRequestLifetimeFeature>()!;
        var request = features.Get<IHttpRequestFeature>()!;
        if (connection is null)
        {
            // Every listener served by Kestrel's HTTP layer sets it (KestrelFrontEnd): a connection without it is a bug.
            throw new InvalidOperationException("A request reached the proxy's application without its connection.");
        }
        Control.Rebind(connection.Peer.ForwardedFor, connection.Peer.Tls);
        Body.Bind(features.Get<IRequestBodyPipeFeature>()!.Reader);
        _kestrelResponse.Bind(features.Get<IHttpResponseFeature>()!, features.Get<IHttpResponseTrailersFeature>());
        Response.Bind(_kestrelResponse, features.Get<IHttpResponseBodyFeature>()!.Writer);
        try
        {
            try
            {
                FillHead(request, features.Get<IHttpRequestBodyDetectionFeature>()?.CanHaveBody ?? true);
            }
            catch (Exception e) when (ProxyErrors.IsRejection(e))
            {
                // Answered on the stream, never forwarded; the connection carries on (RFC 9113 §8.1.1).
                _server.Counters.CountRejected();
                await Response.WriteErrorAsync(ProxyErrors.StatusCode(ProxyErrors.RejectionOf(e)));
                return;
            }
            if (lifetime.RequestAborted.IsCancellationRequested)
            {
                // Reset before it was forwarded (rapid reset sends HEADERS and RST_STREAM together): nothing goes downstream.
                _server.Counters.Failed.ClientGone();
                connection.StreamReset();
                return;
            }
            await ForwardAsync(lifetime, connection);
        }
        finally
        {
            Head.Reset();
        }
    }

    private async Task ForwardAsync(IHttpRequestLifetimeFeature lifetime, StreamConnection connection)
    {
        var reset = lifetime.RequestAborted.Register(static state => ((IExchangeControl)state!).ClientGone(), Exchange);
        // The other way: an exchange aborted after its response started (its deadline passed while a flush waited for
        // the client's window) resets the stream, which ends that flush; before, the failure is answered (FailAsync).
        _lifetime = lifetime;
        var expired = Exchange.Aborted.UnsafeRegister(static state =>
        {
            var slot = (ExchangeSlot)state!;
            if (slot.Response.HasStarted)
            {
                slot._lifetime?.Abort();
            }
        }, this);
        _server.InFlight.Track(Exchange);
        try
        {
            Control.Start();
            await _forwarder.ForwardAsync(Exchange);
            if (!Response.IsComplete)
            {
                ProxyThrow.Throw(ProxyError.DownstreamBodyCutShort, "The variant ended without completing the response.");
            }
            await Response.FlushAsync();
            _server.Counters.CountRequest();
        }
        catch (Exception e)
        {
            Reusable = false;
            await FailAsync(e, lifetime, connection);
        }
        finally
        {
            _server.InFlight.Untrack(Exchange);
            reset.Dispose();
            expired.Dispose();
            _lifetime = null;
            // An abort that came as the exchange ended (the client reset the stream just then) cannot be undone.
            Reusable &= !Exchange.IsAborted;
        }
    }

    /// <summary>
    /// The exchange failed: <see cref="ProxyServer.Fail"/> decides, as for the raw front end; here an abort resets the
    /// stream (an HTTP/1.1 connection of Kestrel's front end is aborted) and an answer goes on the stream.
    /// </summary>
    private async Task FailAsync(Exception e, IHttpRequestLifetimeFeature lifetime, StreamConnection connection)
    {
        switch (_server.Fail(Exchange, e, lifetime.RequestAborted.IsCancellationRequested, _downstreams.Current?.Address, out _, out var status))
        {
            case FailedExchange.ClientGone:
                connection.StreamReset();
                break;
            case FailedExchange.Abort:
                lifetime.Abort();
                break;
            case FailedExchange.Answer:
                await Response.WriteErrorAsync(status);
                break;
        }
    }

    /// <summary>
    /// The head from what Kestrel parsed: for HTTP/2 the pseudo-header fields (RFC 9113 §8.3.1: :method and :path make
    /// the request line, :authority the Host, which Kestrel puts in the Host field), then every field. Kestrel decodes
    /// field values as Latin-1 (KestrelFrontEnd sets it), so encoding them back gives the client's bytes.
    /// </summary>
    private void FillHead(IHttpRequestFeature request, bool hasBody)
    {
        var http2 = HttpProtocol.IsHttp2(request.Protocol);
        var protocol = http2 ? ClientProtocol.Http2 : HttpProtocol.IsHttp10(request.Protocol) ? ClientProtocol.Http10 : ClientProtocol.Http11;
        var limits = _server.Options.Limits;
        var scratch = ProxyBuffers.Bytes.Rent(limits.MaxRequestLineSize + limits.MaxRequestHeadersTotalSize);
        try
        {
            var method = Latin1(request.Method, scratch);
            var target = Latin1(request.RawTarget, scratch.AsSpan(method.Length));
            Head.StartParsed(method, target, protocol);
            foreach (var (name, values) in request.Headers)
            {
                if (http2 && values.Count > 1 && name.Equals("Cookie", StringComparison.OrdinalIgnoreCase))
                {
                    // RFC 9113 §8.2.3: cookie crumbs are joined with "; " for an HTTP/1.1 hop.
                    AddField(name, string.Join("; ", (IEnumerable<string?>)values), scratch, http2);
                    continue;
                }
                foreach (var value in values)
                {
                    AddField(name, value ?? "", scratch, http2);
                }
            }
            Head.CompleteFields(hasBody);
        }
        finally
        {
            ProxyBuffers.Bytes.Return(scratch);
        }
    }

    private void AddField(string name, string value, byte[] scratch, bool http2)
    {
        var nameBytes = Latin1(name, scratch);
        var valueBytes = Latin1(value, scratch.AsSpan(nameBytes.Length));
        if (http2)
        {
            Http2FieldRules.Check(nameBytes, valueBytes);
        }
        Head.AddField(nameBytes, valueBytes);
    }

    // Latin-1 maps each char below 256 to its byte; a char above (a value Kestrel decoded otherwise) cannot be a field.
    private static Span<byte> Latin1(string text, Span<byte> destination)
    {
        if (text.Length > destination.Length)
        {
            ProxyThrow.Throw(ProxyError.HeaderFieldsTooLarge, "Request header fields too large.");
        }
        foreach (var c in text)
        {
            if (c > 0xFF)
            {
                ProxyThrow.BadRequest("Invalid character in a request field.");
            }
        }
        return destination[..Encoding.Latin1.GetBytes(text, destination)];
    }

    public void Dispose()
    {
        _forwarder.Dispose();
        Control.Dispose();
    }
}
