namespace LLRP.Connections;

/// <summary>
/// What the proxy counts about itself, for every front end alike: connections numbered, requests served, heads
/// rejected, exchanges failed by what the client saw, tunnels. The self-report prints them; the idle trim watches them
/// move (<see cref="Activity"/>).
/// </summary>
internal sealed class ProxyCounters
{
    private int _connections;
    private long _requests;
    private long _rejected;

    public long Requests => Interlocked.Read(ref _requests);
    public long Rejected => Interlocked.Read(ref _rejected);

    /// <summary>The tunnels opened after a 101, the bytes they carried and how they ended.</summary>
    public TunnelCounters Tunnels { get; } = new();

    /// <summary>Exchanges that ended in an error answer, an aborted client connection or a client gone, by kind.</summary>
    public FailedExchanges Failed { get; } = new();

    /// <summary>
    /// Moves whenever a connection opens or a request is served or rejected: what the idle trim watches to know nothing
    /// happened.
    /// </summary>
    public long Activity => Volatile.Read(ref _connections) + Requests + Rejected;

    /// <summary>
    /// A connection number, in arrival order (HttpContext's ConnectionId): one per client connection of the raw front end,
    /// one per exchange slot of the others.
    /// </summary>
    public int NextConnectionIndex() => Interlocked.Increment(ref _connections) - 1;

    public void CountRequest() => Interlocked.Increment(ref _requests);
    public void CountRejected() => Interlocked.Increment(ref _rejected);
}
