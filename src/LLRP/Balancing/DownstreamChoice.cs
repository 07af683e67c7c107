using LLRP.Errors;

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

    /// <summary>The exchange with <paramref name="destination"/> ended well.</summary>
    public void Release(Destination destination) => destination.RequestEnded();

    /// <summary>
    /// The one rule for "retry on another downstream", used by every variant: the attempt on
    /// <paramref name="destination"/> failed with <paramref name="failure"/>, which goes to passive health. Returns the
    /// downstream for the next attempt to exclude when the request goes once more, elsewhere; null when the failure is
    /// final. A request goes once more only when no connection could be opened (the first, or the client's reconnect of a
    /// reused connection that closed unanswered, which LLHttp and SocketsHttpHandler make only for a request they can
    /// send again: <see cref="ProxyException.MayRetryElsewhere"/>), since nothing else may be assumed idempotent; only
    /// when nothing was written to the client, this was the first attempt (<paramref name="excluded"/> is null), and
    /// another downstream is available.
    /// </summary>
    public Destination? Failed(Destination destination, ProxyException failure, Destination? excluded, bool responseStarted)
    {
        destination.RequestEnded();
        set.ReportFailure(destination, failure);
        return excluded is null && !responseStarted && failure.MayRetryElsewhere && set.AnyAvailable(destination) ? destination : null;
    }
}
