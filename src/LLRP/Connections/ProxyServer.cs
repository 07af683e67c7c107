using System.Collections.Concurrent;
using LLRP.Balancing;
using Microsoft.AspNetCore.Connections;

namespace LLRP.Connections;

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

    private readonly ConcurrentDictionary<ProxyConnection, byte> _connections = new();
    private readonly IForwarderFactory _forwarders;
    private readonly Timer _deadlineSweep;
    private int _connectionCount;
    private long _requests;
    private long _rejected;

    public ProxyServer(ProxyOptions options, DownstreamSet downstreams, IForwarderFactory forwarders)
    {
        Options = options;
        Downstreams = downstreams;
        _forwarders = forwarders;
        _deadlineSweep = new Timer(static state => ((ProxyServer)state!).SweepDeadlines(), this, DeadlineSweepInterval, DeadlineSweepInterval);
    }

    public ProxyOptions Options { get; }

    public DownstreamSet Downstreams { get; }

    public long Requests => Interlocked.Read(ref _requests);
    public long Rejected => Interlocked.Read(ref _rejected);

    public string ClientDescription => _forwarders.Description;

    public void CountRequest() => Interlocked.Increment(ref _requests);
    public void CountRejected() => Interlocked.Increment(ref _rejected);

    public async Task OnConnectionAsync(ConnectionContext context)
    {
        var index = Interlocked.Increment(ref _connectionCount) - 1;
        // Which downstream each request goes to is the balancer's (loadBalancing); ConnectionRoundRobin assigns one here.
        var connection = new ProxyConnection(this, context, _forwarders.Create(new DownstreamChoice(Downstreams), index), index);
        _connections.TryAdd(connection, 0);
        try
        {
            await connection.RunAsync();
        }
        finally
        {
            _connections.TryRemove(connection, out _);
        }
    }

    private void SweepDeadlines()
    {
        var now = Environment.TickCount64;
        foreach (var (connection, _) in _connections)
        {
            connection.CheckDeadline(now);
        }
    }

    public void Dispose()
    {
        _deadlineSweep.Dispose();
        _forwarders.Dispose();
        Downstreams.Dispose();
    }
}
