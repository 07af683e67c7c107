namespace LLRP.Balancing;

/// <summary>
/// The available downstreams in turn: one shared counter, taken modulo the number available (as YARP's RoundRobin), so
/// three healthy downstreams get exactly one request in three each, and a downstream taken out shifts its share
/// evenly to the others. Also assigns inbound connections in ConnectionRoundRobin mode.
/// </summary>
internal sealed class RoundRobinPolicy : ILoadBalancingPolicy
{
    private int _counter = -1;

    public Destination? Pick(Destination[] destinations, long now, Destination? exclude)
    {
        var count = Candidates.Count(destinations, now, exclude);
        if (count == 0)
        {
            return null;
        }
        var ticket = (uint)Interlocked.Increment(ref _counter);
        return Candidates.At(destinations, (int)(ticket % (uint)count), now, exclude);
    }
}
