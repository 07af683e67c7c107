using System.Collections.Concurrent;
using LLRP.Balancing;
using LLRP.Buffers;
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
/// The state every connection shares: options, the variant's forwarder factory, the one timer that enforces every
/// timeout of every connection, and the counters the proxy reports about itself.
/// </summary>
internal sealed class ProxyServer : IDisposable
{
    /// <summary>
    /// How often connections' deadlines are checked, so a timeout fires at most this much after its deadline (a 1 s
    /// downstreamResponseTimeout answers 504 within about 1.05 s). One pass over the open connections 20 times a second
    /// costs far less than arming a timer per wait, which would also allocate or take a lock per request.
    /// </summary>
    internal static readonly TimeSpan DeadlineSweepInterval = TimeSpan.FromMilliseconds(50);

    private readonly ConcurrentDictionary<ISweptConnection, byte> _connections = new();
    // Exchanges in flight of the front ends that run several per connection (HTTP/2 streams, Kestrel's HTTP/1.1): the
    // sweep keeps their deadlines as it keeps the raw connections'.
    private readonly ConcurrentDictionary<IExchangeControl, byte> _streams = new();
    private readonly IForwarderFactory _forwarders;
    private readonly Thread _deadlineSweep;
    private volatile bool _disposed;
    private readonly IdleTrim _idleTrim;
    private int _connectionCount;
    private long _requests;
    private long _rejected;
    private volatile bool _stopping;
    private readonly CancellationTokenSource _stoppingSource = new();
    private ExchangeFailureLog? _failures;
    private ILogger? _connectionLog;
    private IIdleForwarders[] _idleSlots = [];

    public ProxyServer(ProxyOptions options, DownstreamSet downstreams, IForwarderFactory forwarders)
    {
        Options = options;
        Downstreams = downstreams;
        _forwarders = forwarders;
        _idleTrim = new IdleTrim(options.IdleTrimAfter, IdleTrim.DefaultMinAllocatedBytes);
        // A thread of its own rather than a Timer: a timer's callback runs on the thread pool, and each of the 20 a second
        // wakes an idle pool worker that then spins on the proxy's core before it sleeps again.
        _deadlineSweep = new Thread(static state => ((ProxyServer)state!).SweepLoop()) { IsBackground = true, Name = "LLRP deadline sweep" };
        _deadlineSweep.Start(this);
    }

    public ProxyOptions Options { get; }

    public DownstreamSet Downstreams { get; }

    public long Requests => Interlocked.Read(ref _requests);
    public long Rejected => Interlocked.Read(ref _rejected);

    /// <summary>The tunnels opened after a 101, the bytes they carried and how they ended.</summary>
    public TunnelCounters Tunnels { get; } = new();

    /// <summary>Exchanges that ended in an error answer, an aborted client connection or a client gone, by kind.</summary>
    public FailedExchanges Failed { get; } = new();

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
            Failed.ClientGone();
            return FailedExchange.ClientGone;
        }
        if (exchange.Response.HasStarted)
        {
            Failed.Aborted();
            ReportFailure(failure, 0, downstream);
            return FailedExchange.Abort;
        }
        status = ProxyErrors.StatusCode(failure.Error);
        Failed.Answered(status);
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
        return _connections.Keys.Sum(c => c.ExchangesInFlight) + _streams.Count;
    }

    /// <summary>A front end other than the raw connection's starts <paramref name="exchange"/>: the sweep keeps its deadline.</summary>
    public void Track(IExchangeControl exchange) => _streams.TryAdd(exchange, 0);

    /// <summary>The exchange <see cref="Track"/> was given has ended.</summary>
    public void Untrack(IExchangeControl exchange) => _streams.TryRemove(exchange, out _);

    /// <summary>
    /// A front end that keeps forwarders between exchanges outside a raw connection (the pooled exchange slots of the
    /// HTTP/2 front end and of Kestrel's HTTP layer) names them here: the sweep gives each idle one the calls a raw
    /// connection gives its forwarder while it waits for the next request (<see cref="IForwarder.OnIdle"/>,
    /// <see cref="IForwarder.ReleaseIdle"/>).
    /// </summary>
    public void UseIdleSlots(IIdleForwarders slots)
    {
        lock (_idleTrim)
        {
            _idleSlots = [.. _idleSlots, slots];
        }
    }

    /// <summary>A forwarder for a front end's exchange slot, numbered as a connection is (HttpContext's ConnectionId).</summary>
    public IForwarder CreateForwarder(DownstreamChoice choice, out int index)
    {
        index = Interlocked.Increment(ref _connectionCount) - 1;
        return _forwarders.Create(choice, index);
    }

    public void CountRequest() => Interlocked.Increment(ref _requests);
    public void CountRejected() => Interlocked.Increment(ref _rejected);

    /// <summary>
    /// Kestrel's connection delegate: the connection's request loop, which is its whole life. The loop's own state
    /// machine is the task Kestrel awaits (no second one per connection here); it leaves the set itself
    /// (<see cref="ConnectionEnded"/>) and has what no layer classified logged (<see cref="LogUnhandled"/>).
    /// </summary>
    public Task OnConnectionAsync(ConnectionContext context)
    {
        var index = Interlocked.Increment(ref _connectionCount) - 1;
        // Which downstream each request goes to is the balancer's (loadBalancing); ConnectionRoundRobin assigns one here.
        var downstreams = new DownstreamChoice(Downstreams);
        var connection = new ProxyConnection(this, context, _forwarders.Create(downstreams, index), index, downstreams);
        ConnectionStarted(connection);
        return connection.RunAsync();
    }

    /// <summary>A front end's connection joins the set the sweep and a graceful stop look at.</summary>
    internal void ConnectionStarted(ISweptConnection connection) => _connections.TryAdd(connection, 0);

    /// <summary>The last thing a connection's loop does: it leaves the set the sweep and a graceful stop look at.</summary>
    internal void ConnectionEnded(ISweptConnection connection) => _connections.TryRemove(connection, out _);

    /// <summary>A connection number, as <see cref="OnConnectionAsync"/> gives each connection (the self-report counts them).</summary>
    internal int NextConnectionIndex() => Interlocked.Increment(ref _connectionCount) - 1;

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

    /// <summary>
    /// One pass of the sweep. An exception thrown out of a timer's callback ends the process, and with it every
    /// connection: a failed pass is logged, and the next pass runs as usual.
    /// </summary>
    private void SweepLoop()
    {
        while (true)
        {
            Thread.Sleep(DeadlineSweepInterval);
            if (_disposed)
            {
                return;
            }
            SweepOnce();
        }
    }

    private void SweepOnce()
    {
        try
        {
            SweepDeadlines();
        }
        catch (Exception e)
        {
            _connectionLog?.LogCritical(e, "The deadline sweep failed; it runs again at its next interval.");
        }
    }

    private void SweepDeadlines()
    {
        var now = Environment.TickCount64;
        var busy = false;
        foreach (var (connection, _) in _connections)
        {
            connection.CheckDeadline(now);
            busy |= connection.ExchangesInFlight > 0;
        }
        foreach (var (exchange, _) in _streams)
        {
            busy = true;
            if (exchange.IsPastDeadline(now))
            {
                exchange.Expire();
            }
        }
        var pooled = Volatile.Read(ref _idleSlots);
        foreach (var slots in pooled)
        {
            slots.ForEachIdle(release: false);
        }
        // Timer callbacks may overlap (a trim's collection takes longer than the interval): one looks, the others skip.
        if (Monitor.TryEnter(_idleTrim))
        {
            try
            {
                var activity = Volatile.Read(ref _connectionCount) + Requests + Rejected;
                if (_idleTrim.Observe(now, activity, busy, GC.GetTotalAllocatedBytes()))
                {
                    // What idle connections keep between exchanges first, so that the collection reclaims it too.
                    foreach (var (connection, _) in _connections)
                    {
                        connection.ReleaseIdle();
                    }
                    foreach (var slots in pooled)
                    {
                        slots.ForEachIdle(release: true);
                    }
                    IdleTrim.TrimNow();
                }
            }
            finally
            {
                Monitor.Exit(_idleTrim);
            }
        }
    }

    public void Dispose()
    {
        _disposed = true;
        _stoppingSource.Dispose();
        _forwarders.Dispose();
        Downstreams.Dispose();
    }
}
