using LLRP.Errors;

namespace LLRP.Exchanges;

/// <summary>
/// The lifecycle of an <see cref="Exchange"/>, which only the front end that runs it and the deadline sweep drive:
/// naming the client, starting it, expiring and aborting it, renewing its abort source between exchanges, disposing it.
/// <see cref="Exchange"/> implements it explicitly, so a variant, which receives an <see cref="Exchange"/>, cannot reach
/// it without naming this interface, and ArchitectureTests fails when a type of LLRP.Forwarding or LLRP.Context does.
/// It is not an <see cref="IDisposable"/> for the same reason: a variant could dispose the exchange it is lent through
/// that interface without naming this one.
/// </summary>
/// <remarks>
/// A front end calls these through its <see cref="Exchange"/> reference converted to this interface: the class is
/// sealed, so the JIT binds the call to the implementation as if it were direct, and nothing is allocated.
/// </remarks>
internal interface IExchangeControl
{
    /// <summary>
    /// A front end that lends one exchange to requests of several connections (a stream slot) names the client of the
    /// next one: its address for X-Forwarded-For and whether it spoke TLS.
    /// </summary>
    void Rebind(byte[] forwardedFor, bool tls);

    /// <summary>The head was accepted: starts body de-framing, the response and the deadline.</summary>
    void Start();

    /// <summary>Whether the deadline has passed at <paramref name="now"/> (Environment.TickCount64).</summary>
    bool IsPastDeadline(long now);

    /// <summary>
    /// The deadline passed: the failure is classified now, where it is known. If the exchange waited for body bytes the
    /// client had not sent, the client is late (408, RFC 9110 §15.5.9); any other wait (the downstream not answering,
    /// or not taking the body it is sent) is the downstream's (504, RFC 9110 §15.6.5).
    /// </summary>
    void Expire();

    /// <summary>The client closed or reset its connection: every wait ends, and there is nobody to answer.</summary>
    void ClientGone();

    /// <summary>Ends every wait of the exchange for <paramref name="reason"/>; the first reason stays.</summary>
    void Abort(ProxyError reason);

    /// <summary>
    /// A new abort source in place of the old, between exchanges. Each wait of an exchange that did wait registered on
    /// the source, and a source keeps the table and the node its registrations used for as long as it lives: the
    /// proxy's idle trim renews it, so an idle connection does not keep them. Only a front end that knows no exchange
    /// is running or starting calls this (ProxyConnection's exchange gate).
    /// </summary>
    void RenewAbortSource();

    /// <summary>The front end is done with the exchange for good: its abort source is disposed.</summary>
    void Dispose();
}
