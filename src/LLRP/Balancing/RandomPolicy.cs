namespace LLRP.Balancing;

/// <summary>A random available downstream (YARP's Random): no shared state to contend on, even spread only on average.</summary>
internal sealed class RandomPolicy : ILoadBalancingPolicy
{
    public Destination? Pick(Destination[] destinations, long now, Destination? exclude)
    {
        var count = Candidates.Count(destinations, now, exclude);
        return count == 0 ? null : Candidates.At(destinations, System.Random.Shared.Next(count), now, exclude);
    }
}
