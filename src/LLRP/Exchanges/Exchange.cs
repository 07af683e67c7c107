using System.IO.Pipelines;
using System.Runtime.CompilerServices;
using LLRP.Errors;
using LLRP.Http1;

namespace LLRP.Exchanges;

/// <summary>
/// One request and its response, as a variant's <see cref="IForwarder"/> receives it: the validated head, the de-framed
/// body, the response writer (client framing and header policy), the deadline (downstreamResponseTimeout, restarted by
/// progress) and the abort token, and the client's address for X-Forwarded-For. A front end creates it and runs it; the
/// variant fills the response and returns, or throws the exchange's <see cref="ProxyException"/>, and never reaches
/// the front end itself.
/// </summary>
/// <remarks>
/// What a variant uses is this class's public surface; the lifecycle (start, expire, abort, rebind, dispose) is
/// <see cref="IExchangeControl"/>'s, implemented explicitly so that only a front end, which names that interface, drives
/// it. The HTTP/1.1 connection loop (<c>ProxyConnection</c>) creates one per connection and reuses it request after
/// request (<see cref="IExchangeControl.Start"/>), so a request allocates nothing. A front end with several exchanges in
/// flight on one connection (HTTP/2 streams) creates one per stream slot and pools them the same way: everything an
/// exchange needs is here, and the deadline and the abort are its own. The one deadline sweep that keeps time for every
/// connection asks each exchange in flight <see cref="IExchangeControl.IsPastDeadline"/> and calls
/// <see cref="IExchangeControl.Expire"/>.
/// </remarks>
internal sealed class Exchange : IExchangeControl
{
    private readonly long _responseTimeoutMs;
    private readonly long _tunnelIdleMs;
    // downstreamResponseTimeout for an exchange; tunnelIdleTimeout once a variant relays a tunnel in its place.
    private long _timeoutMs;
    // Replaced only between exchanges (IExchangeControl.RenewAbortSource); read with Volatile.Read.
    private CancellationTokenSource _abort = new();
    private long _deadline = long.MaxValue;
    // Why the exchange was aborted, plus one (0: not aborted), decided when it was (the deadline or the client) and read
    // once its awaits fail. The first reason stays: the timer and the client's close may race.
    private int _abortReason;
    private ProxyException? _requestFailure;
    // The client end, when the front end can turn it into a tunnel after a 101 (ProxyConnection its connection, the
    // HTTP/2 front end a stream's DATA both ways; a front end whose responses Kestrel frames cannot).
    private readonly IDuplexPipe? _client;

    /// <param name="downstreamResponseTimeout">How long the exchange may wait without progress.</param>
    /// <param name="forwardedFor">The client's address for X-Forwarded-For (RFC 7239 §5.2 names the same information "for").</param>
    /// <param name="connectionIndex">The client connection's number in arrival order (HttpContext's ConnectionId).</param>
    /// <param name="tls">The client connection is TLS: the forwarded request says so in X-Forwarded-Proto.</param>
    /// <param name="client">
    /// The client connection (or, for an HTTP/2 stream, its request and response bodies), given by a front end that
    /// tunnels after a 101 (<see cref="SwitchProtocols"/>, <see cref="SwitchProtocolsInPlace"/>); null where it cannot.
    /// </param>
    /// <param name="tunnelIdleTimeout">How long a tunnel the variant relays may carry nothing (<see cref="SwitchProtocolsInPlace"/>).</param>
    public Exchange(RequestHead head, RequestBodyReader body, ResponseWriter response, TimeSpan downstreamResponseTimeout, byte[] forwardedFor, int connectionIndex,
        bool tls = false, IDuplexPipe? client = null, TimeSpan tunnelIdleTimeout = default)
    {
        _client = client;
        _tunnelIdleMs = (long)tunnelIdleTimeout.TotalMilliseconds;
        Tls = tls;
        Head = head;
        Body = body;
        Response = response;
        _responseTimeoutMs = _timeoutMs = (long)downstreamResponseTimeout.TotalMilliseconds;
        ForwardedFor = forwardedFor;
        ConnectionIndex = connectionIndex;
    }

    public RequestHead Head { get; }

    public RequestBodyReader Body { get; }

    public ResponseWriter Response { get; }

    /// <summary>The client's address as ASCII, for X-Forwarded-For.</summary>
    public byte[] ForwardedFor { get; private set; }

    public int ConnectionIndex { get; }

    /// <summary>
    /// The client spoke TLS to the proxy: every variant adds "X-Forwarded-Proto: https" (the de facto field nginx's
    /// $scheme and HAProxy's ssl_fc set), so the downstream can tell an https request from a cleartext one.
    /// </summary>
    public bool Tls { get; private set; }

    /// <summary>How many fields the proxy adds to every forwarded request (<see cref="ProxyFieldValue"/>).</summary>
    public int ProxyFieldCount => Tls ? 3 : 2;

    /// <summary>The name of the <paramref name="index"/>-th field the proxy adds (<see cref="ProxyFieldValue"/>).</summary>
    public static ReadOnlySpan<byte> ProxyFieldName(int index) => index switch
    {
        0 => "Via"u8,
        1 => "X-Forwarded-For"u8,
        _ => "X-Forwarded-Proto"u8,
    };

    /// <summary>
    /// The value of the <paramref name="index"/>-th field the proxy adds to every forwarded request, whichever variant
    /// forwards it (the one place they are chosen): Via with the version the client spoke (RFC 9110 §7.6.3), the
    /// client's address in X-Forwarded-For, and "X-Forwarded-Proto: https" when the client connection is TLS.
    /// </summary>
    public ReadOnlySpan<byte> ProxyFieldValue(int index) => index switch
    {
        0 => Head.ViaValue,
        1 => ForwardedFor,
        _ => "https"u8,
    };

    private static readonly string[] s_proxyFieldNames = ["Via", "X-Forwarded-For", "X-Forwarded-Proto"];

    /// <summary>The proxy's fields (<see cref="ProxyFieldValue"/>) for the clients that take fields as strings.</summary>
    public void AddProxyFieldsTo(System.Net.Http.Headers.HttpRequestHeaders headers)
    {
        for (var i = 0; i < ProxyFieldCount; i++)
        {
            headers.TryAddWithoutValidation(s_proxyFieldNames[i], System.Text.Encoding.Latin1.GetString(ProxyFieldValue(i)));
        }
    }

    void IExchangeControl.Rebind(byte[] forwardedFor, bool tls)
    {
        ForwardedFor = forwardedFor;
        Tls = tls;
    }

    /// <summary>Cancelled when the deadline expires or the client goes away; every downstream wait uses it.</summary>
    public CancellationToken Aborted => Volatile.Read(ref _abort).Token;

    /// <summary>Whether <see cref="Aborted"/> was cancelled, and so a cancelled wait means <see cref="AbortFailure"/>.</summary>
    public bool IsAborted => Volatile.Read(ref _abortReason) != 0;

    /// <summary>Why <see cref="Aborted"/> was cancelled (the deadline, the client gone...), if it was.</summary>
    public ProxyError? AbortReason => Volatile.Read(ref _abortReason) is > 0 and var reason ? (ProxyError)(reason - 1) : null;

    void IExchangeControl.Start()
    {
        _requestFailure = null;
        Tunnel = null;
        RelayedTunnel = null;
        _timeoutMs = _responseTimeoutMs;
        Body.Start(Head);
        Response.Start(Head);
        RestartDeadline();
    }

    /// <summary>
    /// A piece of the request body reached the downstream or a piece of the response body came back: the exchange is
    /// progressing, so downstreamResponseTimeout starts again (it bounds each wait, not the whole exchange). One
    /// volatile write: no timer is armed and nothing is allocated.
    /// </summary>
    public void RestartDeadline() => Volatile.Write(ref _deadline, Environment.TickCount64 + _timeoutMs);

    bool IExchangeControl.IsPastDeadline(long now) => now >= Volatile.Read(ref _deadline);

    void IExchangeControl.Expire() => Abort(Body.IsAwaitingClient ? ProxyError.RequestTimeout : ProxyError.DownstreamTimeout);

    void IExchangeControl.ClientGone() => Abort(ProxyError.ClientGone);

    void IExchangeControl.Abort(ProxyError reason) => Abort(reason);

    private void Abort(ProxyError reason)
    {
        if (Interlocked.CompareExchange(ref _abortReason, (int)reason + 1, 0) != 0)
        {
            return;
        }
        try
        {
            Volatile.Read(ref _abort).Cancel();
        }
        catch (ObjectDisposedException)
        {
            // Disposed by the front end after the exchange ended, or replaced by RenewAbortSource this moment (which
            // then cancels its new source itself).
        }
    }

    void IExchangeControl.RenewAbortSource()
    {
        var renewed = new CancellationTokenSource();
        var old = Interlocked.Exchange(ref _abort, renewed);
        // Published, then the abort checked (Abort sets its reason, then reads the source): one of the two sees the other.
        if (IsAborted)
        {
            renewed.Cancel();
        }
        old.Dispose();
    }

    /// <summary>The typed failure behind a wait that <see cref="Aborted"/> cancelled.</summary>
    public ProxyException AbortFailure()
    {
        var reason = (ProxyError)(Volatile.Read(ref _abortReason) - 1);
        return reason switch
        {
            ProxyError.RequestTimeout => new ProxyException(reason, "The client did not send the request body within downstreamResponseTimeout."),
            ProxyError.ClientGone => new ProxyException(reason, "The client closed the connection."),
            _ => new ProxyException(reason, FailureSide.Downstream, Response.HasStarted ? ExchangePhase.ResponseBody : ExchangePhase.ResponseHead,
                requestSent: true, connectionFailed: false,
                "The downstream made no progress within downstreamResponseTimeout."),
        };
    }

    /// <summary>
    /// The client's de-framed body failed while a client library read it to send it downstream (a bad chunk, a body
    /// over maxRequestBodySize, the client gone): recorded where it happened, since the library then reports a failed
    /// send of its own, and <see cref="RequestFailure"/> is what the exchange answers.
    /// </summary>
    public void RequestBodyFailed(ProxyException failure) => _requestFailure ??= failure;

    /// <summary>The failure of the client's body recorded by <see cref="RequestBodyFailed"/> during this exchange.</summary>
    public ProxyException? RequestFailure => _requestFailure;

    /// <summary>
    /// What ended the exchange, as the one failure type: a <see cref="ProxyException"/> as it was thrown where it was
    /// classified; a cancelled wait as the reason the exchange was aborted for; anything else, which no adapter
    /// classified, as the downstream exchange failing (RFC 9110 §15.6.3).
    /// </summary>
    public ProxyException FailureOf(Exception e) => e switch
    {
        ProxyException p => p,
        OperationCanceledException when IsAborted => AbortFailure(),
        _ => new ProxyException(ProxyError.DownstreamUnavailable, FailureSide.Downstream, ExchangePhase.ResponseHead, requestSent: true,
            connectionFailed: false, "The downstream exchange failed.", e),
    };

    /// <summary>
    /// <paramref name="count"/> bytes of response body arrived in <see cref="ResponseWriter.GetBodyMemory"/>: commits
    /// them, restarts the deadline, and sends them to the client unless the body is now complete (then the front end
    /// flushes it with the head, one send for a small response).
    /// </summary>
    public ValueTask ResponseBodyReceivedAsync(int count)
    {
        Response.AdvanceBody(count);
        RestartDeadline();
        if (!Response.ExpectsMoreBody)
        {
            return default;
        }
        var flush = Response.FlushAsync();
        return flush.IsCompletedSuccessfully && !flush.Result.IsCompleted ? default : AwaitClientFlushAsync(flush);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private static async ValueTask AwaitClientFlushAsync(ValueTask<FlushResult> flush)
    {
        if ((await flush).IsCompleted)
        {
            ProxyThrow.ClientGone();
        }
    }

    /// <summary>
    /// The request asks to switch protocols (<see cref="RequestHead.IsUpgrade"/>) and this front end can tunnel: the
    /// variant forwards it with Connection and Upgrade, and a 101 to it opens a tunnel. Otherwise the Upgrade is removed
    /// as hop-by-hop and a 101 is the downstream's error.
    /// </summary>
    public bool Upgrading => _client is not null && Head.IsUpgrade;

    /// <summary>What the variant handed over with <see cref="SwitchProtocols"/> in this exchange, if anything.</summary>
    public ITunnelDownstream? Tunnel { get; private set; }

    /// <summary>
    /// The downstream answered an <see cref="Upgrading"/> request with 101 and the variant wrote the 101 head
    /// (<see cref="ResponseWriter.BeginSwitch"/>): the front end flushes it and copies bytes between the client and
    /// <paramref name="downstream"/> until either ends. The variant returns as for a complete response.
    /// </summary>
    public void SwitchProtocols(ITunnelDownstream downstream)
    {
        if (!Upgrading)
        {
            throw new InvalidOperationException("Only a request that asked to upgrade, on a front end that tunnels, can switch protocols.");
        }
        Tunnel = downstream;
    }

    /// <summary>The client end of the tunnel the variant relays itself in this exchange (<see cref="SwitchProtocolsInPlace"/>), if any.</summary>
    public RelayedTunnel? RelayedTunnel { get; private set; }

    /// <summary>
    /// The downstream answered an <see cref="Upgrading"/> request with 101, the variant wrote the 101 head
    /// (<see cref="ResponseWriter.BeginSwitch"/>) and relays the tunnel itself: it gets the client connection as a
    /// stream and copies until either side ends, then returns; the connection then closes. The exchange's deadline
    /// becomes tunnelIdleTimeout, restarted by every transfer, and a stop expires it.
    /// </summary>
    public RelayedTunnel SwitchProtocolsInPlace()
    {
        if (!Upgrading)
        {
            throw new InvalidOperationException("Only a request that asked to upgrade, on a front end that tunnels, can switch protocols.");
        }
        _timeoutMs = _tunnelIdleMs;
        RestartDeadline();
        return RelayedTunnel = new RelayedTunnel(_client!, this);
    }

    void IExchangeControl.Dispose() => Volatile.Read(ref _abort).Dispose();
}
