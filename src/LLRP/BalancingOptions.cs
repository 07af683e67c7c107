using LLRP.Tls;

namespace LLRP;

/// <summary>
/// The downstreams, the loadBalancing policy and health (passive and active): what <c>DownstreamSet</c> and
/// <c>ActiveHealthChecks</c> use.
/// </summary>
public sealed record BalancingOptions
{
    /// <summary>One or more http://HOST:PORT or https://HOST:PORT (--downstream).</summary>
    public required Uri[] Downstreams { get; init; }

    /// <summary>What https downstreams are checked against, by the exchanges and the health probes alike: the system
    /// store, plus --downstreamTrust.</summary>
    public DownstreamTrust DownstreamTrust { get; init; } = DownstreamTrust.System;

    // HTTP/1.1 by default: what every variant speaks and what the benchmarks' origins are measured with.
    public DownstreamProtocol DownstreamProtocol { get; init; } = DownstreamProtocol.Http1;

    /// <summary>
    /// The HTTP version every request to a downstream is sent with, exactly (RequestVersionExact): the forwarded
    /// requests of the HttpClient-based variants and the active health probes. The one mapping of --downstreamProtocol.
    /// </summary>
    public Version DownstreamVersion => DownstreamProtocol == DownstreamProtocol.Http1 ? System.Net.HttpVersion.Version11 : System.Net.HttpVersion.Version20;

    // ConnectionRoundRobin is the original LLRP's assignment: the default, so benchmarks stay comparable with earlier runs.
    public LoadBalancing LoadBalancing { get; init; } = LoadBalancing.ConnectionRoundRobin;

    // Matches YARP's TransportFailureRateHealthPolicy reactivation period (60 s). YARP takes a destination out when
    // failures exceed a rate; LLRP on the first transport failure, as nginx's max_fails=1 default does.
    public TimeSpan PassiveHealthReactivationPeriod { get; init; } = TimeSpan.FromSeconds(60);

    // Empty: no active health checks (as in YARP, where they are off until configured).
    public string HealthCheckPath { get; init; } = "";

    // Match YARP's ActiveHealthCheckOptions defaults: a probe every 15 s, each allowed 10 s.
    public TimeSpan HealthCheckInterval { get; init; } = TimeSpan.FromSeconds(15);
    public TimeSpan HealthCheckTimeout { get; init; } = TimeSpan.FromSeconds(10);

    // YARP's ConsecutiveFailuresHealthPolicy: 2 failed probes in a row take a destination out, 1 passed brings it back.
    // The names are HAProxy's (fall/rise; its defaults are 3 and 2).
    public int HealthCheckFall { get; init; } = 2;
    public int HealthCheckRise { get; init; } = 1;
}
