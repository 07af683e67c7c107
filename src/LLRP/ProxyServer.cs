using System.Collections.Concurrent;
using LLRP.Forwarding;
using Microsoft.AspNetCore.Connections;

namespace LLRP;

/// <summary>
/// The state every connection shares: options, the variant's client factory, the timeout heartbeat and the
/// counters the proxy reports about itself.
/// </summary>
internal sealed class ProxyServer : IDisposable
{
    // Kestrel's heartbeat also ticks once a second; timeouts are therefore enforced within about a second.
    private static readonly TimeSpan s_heartbeatInterval = TimeSpan.FromSeconds(1);

    private readonly ConcurrentDictionary<ProxyConnection, byte> _connections = new();
    private readonly IForwarderFactory _forwarders;
    private readonly Timer _heartbeat;
    private int _connectionCount;
    private long _requests;
    private long _rejected;

    public ProxyServer(ProxyOptions options)
    {
        Options = options;
        _forwarders = ForwarderFactory.Create(options);
        _heartbeat = new Timer(static state => ((ProxyServer)state!).OnHeartbeat(), this, s_heartbeatInterval, s_heartbeatInterval);
    }

    public ProxyOptions Options { get; }

    public long Requests => Interlocked.Read(ref _requests);
    public long Rejected => Interlocked.Read(ref _rejected);

    public string ClientDescription => _forwarders.Description;

    public void CountRequest() => Interlocked.Increment(ref _requests);
    public void CountRejected() => Interlocked.Increment(ref _rejected);

    public async Task OnConnectionAsync(ConnectionContext context)
    {
        var index = Interlocked.Increment(ref _connectionCount) - 1;
        // Round-robin per inbound connection, as the original LLRP does.
        var downstream = Options.Downstreams[(uint)index % (uint)Options.Downstreams.Length];
        var connection = new ProxyConnection(this, context, downstream, _forwarders.Create(downstream, index), index);
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

    private void OnHeartbeat()
    {
        var now = Environment.TickCount64;
        foreach (var (connection, _) in _connections)
        {
            connection.OnHeartbeat(now);
        }
    }

    public void Dispose()
    {
        _heartbeat.Dispose();
        _forwarders.Dispose();
    }
}
