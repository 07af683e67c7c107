namespace LLRP.Balancing;

/// <summary>
/// Two different random available downstreams, and of those the one with fewer requests in flight, the first on a tie
/// (YARP's PowerOfTwoChoices, its default). It avoids Random's worst case (a busy downstream) without LeastRequests'
/// scan of every downstream; with two downstreams it is LeastRequests.
/// </summary>
internal sealed class PowerOfTwoChoicesPolicy : ILoadBalancingPolicy
{
    public Destination? Pick(Destination[] destinations, long now, Destination? exclude)
    {
        var count = Candidates.Count(destinations, now, exclude);
        if (count <= 1)
        {
            return count == 0 ? null : Candidates.At(destinations, 0, now, exclude);
        }
        var random = System.Random.Shared;
        var firstIndex = random.Next(count);
        // A second index among the other count - 1, so the two are always different.
        var secondIndex = random.Next(count - 1);
        if (secondIndex >= firstIndex)
        {
            secondIndex++;
        }
        var first = Candidates.At(destinations, firstIndex, now, exclude);
        var second = Candidates.At(destinations, secondIndex, now, exclude);
        // Health may change between counting and indexing: take whichever is still there.
        if (first is null || second is null)
        {
            return first ?? second;
        }
        return first.ConcurrentRequests <= second.ConcurrentRequests ? first : second;
    }
}
