using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using LLRP.Errors;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace LLRP.Balancing;

/// <summary>
/// Every downstream of the proxy, the load-balancing policy that chooses among them, and their health: passive (a
/// transport failure takes a downstream out for passiveHealthReactivationPeriod) and active (<see cref="ActiveHealthChecks"/>,
/// when healthCheckPath is set). Shared by every inbound connection; each uses it through its own <see cref="DownstreamChoice"/>.
/// </summary>
internal sealed class DownstreamSet : IDisposable
{
    private readonly ILoadBalancingPolicy _policy;
    private readonly long _reactivationMs;
    private readonly ProxyOptions _options;
    private ActiveHealthChecks? _activeChecks;
    private ILogger _logger = NullLogger.Instance;

    public DownstreamSet(ProxyOptions options)
    {
        _options = options;
        Destinations = [.. options.Downstreams.Select(uri => new Destination(uri))];
        Mode = options.LoadBalancing;
        _policy = Mode switch
        {
            LoadBalancing.PowerOfTwoChoices => new PowerOfTwoChoicesPolicy(),
            LoadBalancing.FirstAlphabetical => new FirstAlphabeticalPolicy(Destinations),
            LoadBalancing.Random => new RandomPolicy(),
            LoadBalancing.LeastRequests => new LeastRequestsPolicy(),
            // RoundRobin per request; ConnectionRoundRobin calls the same policy once per inbound connection.
            _ => new RoundRobinPolicy(),
        };
        _reactivationMs = (long)options.PassiveHealthReactivationPeriod.TotalMilliseconds;
    }

    public Destination[] Destinations { get; }

    public LoadBalancing Mode { get; }

    /// <summary>Whether every request chooses its downstream; otherwise each inbound connection keeps the one it was assigned.</summary>
    public bool PerRequest => Mode != LoadBalancing.ConnectionRoundRobin;

    /// <summary>Starts active health checks (when configured) and logs health changes from now on.</summary>
    public void Start(ILoggerFactory loggers)
    {
        _logger = loggers.CreateLogger("LLRP.Balancing");
        if (!string.IsNullOrEmpty(_options.HealthCheckPath))
        {
            _activeChecks = new ActiveHealthChecks(Destinations, _options, _logger);
        }
    }

    /// <summary>A downstream for the next request or connection, or null when every one (but <paramref name="exclude"/>) is out.</summary>
    public Destination? Pick(Destination? exclude = null) => _policy.Pick(Destinations, Environment.TickCount64, exclude);

    /// <summary>Whether any downstream but <paramref name="exclude"/> is available (without taking a policy's turn).</summary>
    public bool AnyAvailable(Destination? exclude) => Candidates.Count(Destinations, Environment.TickCount64, exclude) > 0;

    /// <summary>
    /// Passive health: <paramref name="failure"/> ended an exchange with <paramref name="destination"/>; a failure of
    /// the connection to it (<see cref="ProxyException.ConnectionFailed"/>, classified where it happened) takes it out
    /// for passiveHealthReactivationPeriod; a timeout, an invalid response or the client's own failure does not. A lone downstream is never taken out (as nginx ignores
    /// max_fails for a single server): there is nowhere else to send, so 502 for the failing request is the honest
    /// answer and the next request tries again.
    /// </summary>
    public void ReportFailure(Destination destination, ProxyException failure)
    {
        if (_reactivationMs == 0 || Destinations.Length < 2 || failure.Side != FailureSide.Downstream || !failure.ConnectionFailed)
        {
            return;
        }
        var now = Environment.TickCount64;
        if (destination.TakeOutUntil(now + _reactivationMs, now))
        {
            _logger.LogWarning("Downstream {Downstream} taken out for {Seconds} s (passive health): {Reason}",
                destination.Id, (_reactivationMs / 1000.0).ToString(CultureInfo.InvariantCulture), failure.Message);
        }
    }

    [DoesNotReturn]
    public static void ThrowNoneAvailable() => throw new ProxyException(ProxyError.NoDownstreamAvailable, FailureSide.Downstream,
        ExchangePhase.Connect, requestSent: false, connectionFailed: false,
        "Every downstream is out (a transport failure within passiveHealthReactivationPeriod, or failing active health checks).");

    public string Describe() => Mode.ToString();

    public void Dispose() => _activeChecks?.Dispose();
}
