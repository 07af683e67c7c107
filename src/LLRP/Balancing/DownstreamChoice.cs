namespace LLRP.Balancing;

/// <summary>
/// One inbound connection's view of the <see cref="DownstreamSet"/>: which downstream the next request goes to (its
/// assigned one in ConnectionRoundRobin mode, the policy's pick otherwise), the requests-in-flight count around each
/// exchange, and the exchange's failure reported to passive health. Used by one exchange at a time.
/// </summary>
internal sealed class DownstreamChoice(DownstreamSet set)
{
    // ConnectionRoundRobin: the connection's downstream, replaced only when health takes it out.
    private Destination? _assigned;

    public DownstreamSet Set => set;

    /// <summary>The downstream last chosen for this connection: what a failure log names.</summary>
    public Destination? Current { get; private set; }

    /// <summary>The downstream for this request, counted as in flight until <see cref="Release"/>; 503 when every one is out.</summary>
    public Destination Acquire(Destination? exclude = null)
    {
        Destination? destination;
        if (set.PerRequest)
        {
            destination = set.Pick(exclude);
        }
        else
        {
            destination = _assigned;
            if (destination is null || ReferenceEquals(destination, exclude) || !destination.IsAvailable(Environment.TickCount64))
            {
                destination = _assigned = set.Pick(exclude);
            }
        }
        if (destination is null)
        {
            DownstreamSet.ThrowNoneAvailable();
        }
        destination.RequestStarted();
        Current = destination;
        return destination;
    }

    /// <summary>
    /// The exchange with <paramref name="destination"/> ended; a <paramref name="failure"/> that is not the client's
    /// (<paramref name="cancelled"/>: the client left or a timeout fired) goes to passive health.
    /// </summary>
    public void Release(Destination destination, Exception? failure, bool cancelled)
    {
        destination.RequestEnded();
        if (failure is not null && !cancelled)
        {
            set.ReportFailure(destination, failure);
        }
    }

    /// <summary>
    /// Whether a request that failed with <paramref name="failure"/> on <paramref name="failed"/> is sent once more,
    /// elsewhere: only when no connection could be opened (the first, or the client's reconnect of a reused connection
    /// that closed unanswered, which LLHttp and SocketsHttpHandler make only for a request they can send again), since
    /// nothing else may be assumed idempotent, and only when another downstream is available.
    /// </summary>
    public bool MayRetryElsewhere(Destination failed, Exception failure, bool cancelled) =>
        !cancelled && TransportFailures.IsConnectFailure(failure) && set.AnyAvailable(failed);
}
