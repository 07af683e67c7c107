namespace LLRP.Errors;

/// <summary>
/// The one failure type of the proxy, created where the failure is known: the request side when it refuses a head or a
/// body, each client adapter when its client's call fails (converted once, at that call), the exchange when its deadline
/// fires or its client leaves. Besides <see cref="Error"/> (what the client is answered, mapped in one place by
/// <see cref="ProxyErrors.StatusCode"/>) it says whose failure it is, at which phase of the exchange it happened, and
/// what had already left the proxy, which is what retrying elsewhere and passive health decide by. Failures are rare,
/// so they are thrown; the front end answers them. The connection ends after any of them.
/// </summary>
internal sealed class ProxyException : Exception
{
    /// <summary>A failure of the request side (a head or body refused, the client too slow or gone).</summary>
    public ProxyException(ProxyError error, string message, Exception? innerException = null)
        : this(error, ProxyErrors.SideOf(error), ExchangePhase.Request, requestSent: false, connectionFailed: false, message, innerException)
    {
    }

    /// <summary>A failure of the exchange with the downstream, classified by the adapter whose call failed.</summary>
    public ProxyException(ProxyError error, FailureSide side, ExchangePhase phase, bool requestSent, bool connectionFailed, string message, Exception? innerException = null)
        : base(message, innerException)
    {
        Error = error;
        Side = side;
        Phase = phase;
        RequestSent = requestSent;
        ConnectionFailed = connectionFailed;
    }

    public ProxyError Error { get; }

    /// <summary>Whose failure it is: the client's (its request, its pace, its connection) or the downstream's.</summary>
    public FailureSide Side { get; }

    /// <summary>Where in the exchange it happened.</summary>
    public ExchangePhase Phase { get; }

    /// <summary>
    /// Whether any byte of the request may have reached a downstream that acted on it. False for a failed connect, and
    /// for the reconnect LLHttp and SocketsHttpHandler make when a reused connection closed unanswered (they make it only
    /// for a request they may send again, so the closed one did not act on it).
    /// </summary>
    public bool RequestSent { get; }

    /// <summary>
    /// The connection to the downstream failed (refused, reset, or closed before a complete response): what passive
    /// health counts. A timeout, an invalid response or the client's own failure says nothing about whether the
    /// downstream can be reached.
    /// </summary>
    public bool ConnectionFailed { get; }

    /// <summary>
    /// Whether the request may go once more, to another downstream: the downstream's connection failed before any
    /// byte of the request reached it. Whether nothing was written to the client yet, and whether this was the first
    /// attempt, the caller knows (DownstreamChoice.Failed decides with all three).
    /// </summary>
    public bool MayRetryElsewhere => Side == FailureSide.Downstream && Phase == ExchangePhase.Connect && ConnectionFailed && !RequestSent;
}

/// <summary>Whose failure ended an exchange.</summary>
internal enum FailureSide : byte
{
    /// <summary>The client: its request refused, its pace too slow, or its connection gone.</summary>
    Client,
    /// <summary>The downstream, or getting to one (none available, refused, reset, timed out, invalid answer).</summary>
    Downstream,
}

/// <summary>Where in an exchange a failure happened.</summary>
internal enum ExchangePhase : byte
{
    /// <summary>Reading the client's request head or body, or waiting for it.</summary>
    Request,
    /// <summary>Choosing a downstream and opening a connection to it.</summary>
    Connect,
    /// <summary>Sending the request head or body downstream.</summary>
    Send,
    /// <summary>Waiting for or reading the downstream's response head.</summary>
    ResponseHead,
    /// <summary>Reading the downstream's response body (relaying it to the client).</summary>
    ResponseBody,
}
