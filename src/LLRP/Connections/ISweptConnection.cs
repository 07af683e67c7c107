namespace LLRP.Connections;

/// <summary>
/// A client connection the deadline sweep looks at, whichever front end serves it (the raw HTTP/1.1 loop, the raw HTTP/2
/// connection): its own timeouts, whether it has an exchange in flight, and what it keeps while idle.
/// </summary>
internal interface ISweptConnection
{
    /// <summary>
    /// Called by the sweep every <see cref="DeadlineSweep.Interval"/>: the connection acts on its own timeouts
    /// and on its exchanges' deadlines (<see cref="Exchanges.IExchangeControl.IsPastDeadline"/>), so that an exchange needs no
    /// registration of its own.
    /// </summary>
    void CheckDeadline(long now);

    /// <summary>The exchanges of the connection in flight: what a graceful stop waits for, and what keeps the proxy busy.</summary>
    int ExchangesInFlight { get; }

    /// <summary>The proxy is idle after a burst: the connection gives back what it keeps between exchanges.</summary>
    void ReleaseIdle();
}
