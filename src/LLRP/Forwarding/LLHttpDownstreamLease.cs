using LLHttp;
using LLHttp.Pooling;
using LLRP.Balancing;
using LLRP.Errors;

namespace LLRP.Forwarding;

/// <summary>
/// Where one inbound connection's llhttp exchanges get their downstream connection: from the downstream's shared pool
/// (per-request policies, or shareClients), or from the inbound connection's own affinity slot (ConnectionRoundRobin
/// without shareClients: one downstream connection per inbound connection while it is busy, handed to the shared pool
/// once it has been idle <c>shareAfter</c>, re-created on another downstream only when health takes the assigned one
/// out). Taking a pooled connection and giving it back allocates nothing.
/// </summary>
/// <param name="shareAfter">null: every exchange rents from the shared pools; otherwise the affinity slot's idle time
/// before its connection goes to the pool (downstreamShareAfter).</param>
internal sealed class LLHttpDownstreamLease(DownstreamChoice choice, IReadOnlyDictionary<Destination, LLHttpConnectionPool> pools, TimeSpan? shareAfter, LLHttpOptions options)
    : IDisposable
{
    private LLHttpAffinitySlot? _slot;
    private Destination? _slotDestination;
    // The downstream of the exchange in progress, between a rent and its Return or Abort.
    private Destination? _current;

    /// <summary>The current downstream's host:port, for a request whose client sent no Host (valid after a rent).</summary>
    public byte[] Authority => _current?.Authority ?? [];

    /// <summary>
    /// A connection to the downstream the policy chose other than <paramref name="exclude"/>; the exchange ends with
    /// <see cref="Return"/> or <see cref="Abort"/>, which also end a rent that failed.
    /// </summary>
    public ValueTask<LLHttpConnection> RentAsync(Destination? exclude, CancellationToken cancellationToken)
    {
        var destination = _current = choice.Acquire(exclude);
        return Rent(destination, cancellationToken);
    }

    private ValueTask<LLHttpConnection> Rent(Destination destination, CancellationToken cancellationToken)
    {
        if (shareAfter is not { } idleBeforeSharing)
        {
            return pools[destination].RentAsync(cancellationToken);
        }
        if (!ReferenceEquals(_slotDestination, destination))
        {
            // Assigned a new downstream (health took the old one out): its connection is of no further use.
            _slot?.Dispose();
            _slot = new LLHttpAffinitySlot(pools[destination], idleBeforeSharing, options);
            _slotDestination = destination;
        }
        return _slot!.GetAsync(cancellationToken);
    }

    /// <summary>The exchange finished: the connection goes back for reuse.</summary>
    public void Return(LLHttpConnection connection)
    {
        if (_slot is not null)
        {
            _slot.Return(connection);
        }
        else
        {
            pools[_current!].Return(connection);
        }
        var destination = _current;
        _current = null;
        choice.Release(destination!);
    }

    /// <summary>
    /// The downstream switched protocols on <paramref name="connection"/> (101): it leaves the lease for good, neither
    /// back to the pool nor to the affinity slot (the tunnel closes it), and the exchange with the downstream ends.
    /// </summary>
    public void Detach(LLHttpConnection connection)
    {
        _slot?.Detach(connection);
        var destination = _current;
        _current = null;
        choice.Release(destination!);
    }

    /// <summary>
    /// The exchange failed: the connection (if one was rented) is closed, and the downstream's choice decides with the
    /// failure (<see cref="DownstreamChoice.Failed"/>): passive health, and whether the request goes once more
    /// elsewhere. Returns the downstream to exclude then; otherwise null.
    /// </summary>
    public Destination? Abort(LLHttpConnection? connection, ProxyException failure, Destination? excluded, bool responseStarted)
    {
        connection?.Abort();
        var destination = _current;
        _current = null;
        // No downstream was chosen (every one is out): nothing to release, nowhere else to go.
        return destination is null ? null : choice.Failed(destination, failure, excluded, responseStarted);
    }

    /// <summary>Between requests: an idle affinity connection is closed after downstreamIdleTimeout.</summary>
    public void OnIdle() => _slot?.EvictExpired();

    /// <summary>Right before the proxy's idle trim: the affinity slot's idle connection goes to the shared pool now.</summary>
    public void ReleaseIdle() => _slot?.ShareIdle();

    public void Dispose() => _slot?.Dispose();
}
