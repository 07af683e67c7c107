namespace LLRP.Exchanges;

/// <summary>
/// The layer a variant adds: send an <see cref="Exchange"/>'s request downstream and relay the response into its
/// <see cref="Exchange.Response"/>. Reading and validating heads, body de-framing, header policy, client framing,
/// deadlines and error answers are the front end's. One instance serves one exchange at a time: the HTTP/1.1 front end
/// creates one per connection; a front end with concurrent exchanges on a connection creates one per exchange slot.
/// </summary>
internal interface IForwarder : IDisposable
{
    /// <summary>
    /// The outcome of the exchange: completes once the response was written into <see cref="Exchange.Response"/> (the
    /// front end checks it is whole and flushes it), or fails with the exchange's <see cref="Errors.ProxyException"/>,
    /// or with a cancellation of <see cref="Exchange.Aborted"/> (<see cref="Exchange.FailureOf"/> says why).
    /// </summary>
    ValueTask ForwardAsync(Exchange exchange);

    /// <summary>
    /// Called by the front end's timer while no exchange is in flight (the connection waits for its next request), on
    /// the timer's thread and so concurrently with the front end: let go of what an idle forwarder should not keep.
    /// </summary>
    void OnIdle()
    {
    }

    /// <summary>
    /// Called right before the proxy's idle trim for a forwarder whose connection waits for its next request, on the
    /// timer's thread (concurrently with the front end): give back now what is kept between exchanges, so the trim's
    /// collection reclaims it. The next exchange may allocate it again.
    /// </summary>
    void ReleaseIdle()
    {
    }
}
