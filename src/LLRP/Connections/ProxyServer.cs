using LLRP.Balancing;
using LLRP.Errors;
using LLRP.Exchanges;
using Microsoft.AspNetCore.Connections;
using Microsoft.Extensions.Logging;

namespace LLRP.Connections;

/// <summary>What a front end does for a failed exchange (<see cref="ProxyServer.Fail"/>).</summary>
internal enum FailedExchange
{
    /// <summary>The client went away: nothing to answer.</summary>
    ClientGone,

    /// <summary>The response has begun: abort the client's side (its connection, or its HTTP/2 stream).</summary>
    Abort,

    /// <summary>Nothing was sent: answer with the reason's status.</summary>
    Answer,
}

/// <summary>
/// The state every connection shares: options, the downstreams, the variant's forwarder factory, the one decision for a
/// failed exchange and the logging; beside them what the proxy counts (<see cref="Counters"/>), what is in flight
/// (<see cref="InFlight"/>) and the sweep that keeps their time (<see cref="Sweep"/>).
/// </summary>
internal sealed class ProxyServer : IDisposable
{
    private readonly IForwarderFactory _forwarders;
    private volatile bool _stopping;
    private readonly CancellationTokenSource _stoppingSource = new();
    private ExchangeFailureLog? _failures;
    private ILogger? _connectionLog;

    public ProxyServer(ProxyOptions options, DownstreamSet downstreams, IForwarderFactory forwarders)
    {
        Options = options;
        Downstreams = downstreams;
        _forwarders = forwarders;
        Sweep = new DeadlineSweep(InFlight, Counters, options.IdleTrimAfter);
    }

    public ProxyOptions Options { get; }

    public DownstreamSet Downstreams { get; }

    /// <summary>Requests, rejections, failures and tunnels, counted alike for every front end.</summary>
    public ProxyCounters Counters { get; } = new();

    /// <summary>The connections and exchanges in flight that the sweep and a graceful stop look at.</summary>
    public InFlightRegistry InFlight { get; } = new();

    /// <summary>The one thread that enforces the deadlines of <see cref="InFlight"/> and trims an idle proxy.</summary>
    public DeadlineSweep Sweep { get; }

    public string ClientDescription => _forwarders.Description;

    /// <summary>The host is stopping: no new connections, idle ones close, busy ones close after their exchange.</summary>
    public bool Stopping => _stopping;

    /// <summary>Cancelled when the host begins stopping: what ends the waits of connections that are closing anyway.</summary>
    public CancellationToken StoppingToken => _stoppingSource.Token;

    /// <summary>Where failed exchanges are logged (set once the host's logging exists; tests without it log nothing).</summary>
    public void UseLogging(ILoggerFactory loggers)
    {
        _failures = new ExchangeFailureLog(loggers.CreateLogger("LLRP.Exchanges"), TimeProvider.System);
        _connectionLog = loggers.CreateLogger("LLRP.Connections");
        Sweep.UseLog(_connectionLog);
    }

    /// <summary>
    /// The one decision for a failed exchange, for every front end, counted and logged here: a client that went away
    /// gets nothing (<see cref="FailedExchange.ClientGone"/>); a response that has begun cannot be finished correctly,
    /// so the client must see an incomplete message, never a truncated one that looks whole (RFC 9112 §6.3, RFC 9110
    /// §15.6: <see cref="FailedExchange.Abort"/>); otherwise the reason's status is the answer.
    /// </summary>
    public FailedExchange Fail(Exchange exchange, Exception e, bool clientGone, Uri? downstream, out ProxyException failure, out int status)
    {
        failure = exchange.FailureOf(e);
        status = 0;
        if (clientGone || failure.Error == ProxyError.ClientGone)
        {
            Counters.Failed.ClientGone();
            return FailedExchange.ClientGone;
        }
        if (exchange.Response.HasStarted)
        {
            Counters.Failed.Aborted();
            ReportFailure(failure, 0, downstream);
            return FailedExchange.Abort;
        }
        status = ProxyErrors.StatusCode(failure.Error);
        Counters.Failed.Answered(status);
        ReportFailure(failure, status, downstream);
        return FailedExchange.Answer;
    }

    /// <summary>Logs a failure the downstream side caused (rate-limited; see <see cref="ExchangeFailureLog"/>).</summary>
    private void ReportFailure(ProxyException failure, int answer, Uri? downstream)
    {
        if (ExchangeFailureLog.IsLogged(failure.Error))
        {
            _failures?.Report(failure.Error, answer, downstream, failure);
        }
    }

    /// <summary>
    /// Starts a graceful stop and returns how many exchanges are in flight. Kestrel stops accepting and waits up to
    /// shutdownTimeout for the connections to end, then aborts the rest; the deadline sweep closes idle connections
    /// (<see cref="ProxyConnection.CheckDeadline"/>) so that only exchanges in flight are waited for.
    /// </summary>
    public int BeginStopping()
    {
        _stopping = true;
        _stoppingSource.Cancel();
        return InFlight.ExchangesInFlight;
    }

    /// <summary>A forwarder for a front end's exchange slot, numbered as a connection is (HttpContext's ConnectionId).</summary>
    public IForwarder CreateForwarder(DownstreamChoice choice, out int index)
    {
        index = Counters.NextConnectionIndex();
        return _forwarders.Create(choice, index);
    }

    /// <summary>
    /// Kestrel's connection delegate: the connection's request loop, which is its whole life. The loop's own state
    /// machine is the task Kestrel awaits (no second one per connection here); it leaves the set itself
    /// (<see cref="InFlightRegistry.ConnectionEnded"/>) and has what no layer classified logged (<see cref="LogUnhandled"/>).
    /// </summary>
    public Task OnConnectionAsync(ConnectionContext context)
    {
        var index = Counters.NextConnectionIndex();
        // Which downstream each request goes to is the balancer's (loadBalancing); ConnectionRoundRobin assigns one here.
        var downstreams = new DownstreamChoice(Downstreams);
        var connection = new ProxyConnection(this, context, _forwarders.Create(downstreams, index), index, downstreams);
        InFlight.ConnectionStarted(connection);
        return connection.RunAsync();
    }

    /// <summary>
    /// An exception that reached a connection's loop is a bug, not a client or downstream failure (those end inside
    /// the loop): logged here because Kestrel's own category, which would log it, is off (ProxyHost). False when
    /// nothing logs (tests without the host), so that it reaches Kestrel. The connection closes either way.
    /// </summary>
    internal bool LogUnhandled(Exception e, string connectionId)
    {
        if (_connectionLog is null)
        {
            return false;
        }
        _connectionLog.LogError(e, "Unhandled exception on connection {ConnectionId}.", connectionId);
        return true;
    }

    public void Dispose()
    {
        Sweep.Dispose();
        _stoppingSource.Dispose();
        _forwarders.Dispose();
        Downstreams.Dispose();
    }
}
