namespace LLRP.Balancing;

/// <summary>
/// The available downstream with the fewest requests in flight, the first in configured order on a tie (YARP's
/// LeastRequests). Examines every downstream on every request.
/// </summary>
internal sealed class LeastRequestsPolicy : ILoadBalancingPolicy
{
    public Destination? Pick(Destination[] destinations, long now, Destination? exclude)
    {
        Destination? least = null;
        var leastCount = int.MaxValue;
        foreach (var destination in destinations)
        {
            if (!Candidates.Is(destination, now, exclude))
            {
                continue;
            }
            var count = destination.ConcurrentRequests;
            if (count < leastCount)
            {
                least = destination;
                leastCount = count;
            }
        }
        return least;
    }
}
