namespace LLRP.Balancing;

/// <summary>
/// Chooses one downstream among those available. Implementations allocate nothing and take no lock: a pick runs once
/// per request.
/// </summary>
internal interface ILoadBalancingPolicy
{
    /// <summary>
    /// A downstream that <see cref="Candidates.Is"/> accepts (available at <paramref name="now"/>, not
    /// <paramref name="exclude"/>), or null when there is none.
    /// </summary>
    Destination? Pick(Destination[] destinations, long now, Destination? exclude);
}
