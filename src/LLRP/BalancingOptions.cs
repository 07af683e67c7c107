using LLRP.Tls;

namespace LLRP;

/// <summary>
/// The downstreams, the loadBalancing policy and health (passive and active): what <c>DownstreamSet</c> and
/// <c>ActiveHealthChecks</c> use. Each default is its option's (<see cref="Option"/>, with the reason for it).
/// </summary>
public sealed record BalancingOptions
{
    /// <summary>One or more http://HOST:PORT or https://HOST:PORT (--downstream).</summary>
    public required Uri[] Downstreams { get; init; }

    /// <summary>What https downstreams are checked against, by the exchanges and the health probes alike: the system
    /// store, plus --downstreamTrust.</summary>
    public DownstreamTrust DownstreamTrust { get; init; } = DownstreamTrust.System;

    public DownstreamProtocol DownstreamProtocol { get; init; } = Option.DownstreamProtocol.DefaultValue;

    /// <summary>
    /// The HTTP version every request to a downstream is sent with, exactly (RequestVersionExact): the forwarded
    /// requests of the HttpClient-based variants and the active health probes. The one mapping of --downstreamProtocol.
    /// </summary>
    public Version DownstreamVersion => DownstreamProtocol == DownstreamProtocol.Http1 ? System.Net.HttpVersion.Version11 : System.Net.HttpVersion.Version20;

    public LoadBalancing LoadBalancing { get; init; } = Option.LoadBalancing.DefaultValue;

    public TimeSpan PassiveHealthReactivationPeriod { get; init; } = Option.PassiveHealthReactivationPeriod.DefaultValue;

    /// <summary>Empty: no active health checks.</summary>
    public string HealthCheckPath { get; init; } = Option.HealthCheckPath.DefaultValue;

    public TimeSpan HealthCheckInterval { get; init; } = Option.HealthCheckInterval.DefaultValue;
    public TimeSpan HealthCheckTimeout { get; init; } = Option.HealthCheckTimeout.DefaultValue;

    public int HealthCheckFall { get; init; } = Option.HealthCheckFall.DefaultValue;
    public int HealthCheckRise { get; init; } = Option.HealthCheckRise.DefaultValue;
}
