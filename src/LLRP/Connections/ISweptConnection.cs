namespace LLRP.Connections;

/// <summary>
/// A client connection the deadline sweep looks at, whichever front end serves it (the raw HTTP/1.1 loop, the raw HTTP/2
/// connection): its own timeouts, whether it has an exchange in flight, and what it keeps while idle.
/// </summary>
internal interface ISweptConnection
{
    /// <summary>Called by the sweep every <see cref="ProxyServer.DeadlineSweepInterval"/>: the connection acts on its own timeouts.</summary>
    void CheckDeadline(long now);

    /// <summary>An exchange of the connection itself is in flight (streams are tracked one by one, <see cref="ProxyServer.Track"/>).</summary>
    bool InExchange { get; }

    /// <summary>The proxy is idle after a burst: the connection gives back what it keeps between exchanges.</summary>
    void ReleaseIdle();
}
