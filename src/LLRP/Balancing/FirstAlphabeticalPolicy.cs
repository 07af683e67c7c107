namespace LLRP.Balancing;

/// <summary>
/// The first available downstream ordered by address ("http://host:port", ordinal, ignoring case), whatever its load
/// (YARP's FirstAlphabetical, which orders by destination id): every request goes to one downstream while it is
/// available, the next takes over when health takes it out. Fail-over, not balancing.
/// </summary>
internal sealed class FirstAlphabeticalPolicy(Destination[] destinations) : ILoadBalancingPolicy
{
    // Sorted once: the set of downstreams never changes while the proxy runs.
    private readonly Destination[] _ordered = [.. destinations.OrderBy(d => d.Id, StringComparer.OrdinalIgnoreCase)];

    public Destination? Pick(Destination[] destinations, long now, Destination? exclude)
    {
        foreach (var destination in _ordered)
        {
            if (Candidates.Is(destination, now, exclude))
            {
                return destination;
            }
        }
        return null;
    }
}
