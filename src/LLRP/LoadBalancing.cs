namespace LLRP;

/// <summary>
/// How a downstream is chosen (option loadBalancing). The five per-request policies carry YARP's names and semantics
/// (Yarp.ReverseProxy's LoadBalancingPolicies); <see cref="ConnectionRoundRobin"/> is the original LLRP's assignment
/// and the default, so measurements stay comparable with earlier runs.
/// </summary>
public enum LoadBalancing
{
    /// <summary>Each inbound connection is assigned the next downstream in turn and keeps it (llhttp: one downstream connection per inbound one).</summary>
    ConnectionRoundRobin,
    /// <summary>Per request: two random downstreams, the one with fewer requests in flight (YARP's default).</summary>
    PowerOfTwoChoices,
    /// <summary>Per request: the first available downstream by address, ignoring load (fail-over between a primary and a spare).</summary>
    FirstAlphabetical,
    /// <summary>Per request: a random available downstream.</summary>
    Random,
    /// <summary>Per request: the available downstreams in turn.</summary>
    RoundRobin,
    /// <summary>Per request: the downstream with the fewest requests in flight (every downstream examined).</summary>
    LeastRequests,
}
