using System.Collections.Concurrent;
using LLRP.Exchanges;

namespace LLRP.Connections;

/// <summary>
/// What is in flight, for the deadline sweep and a graceful stop: the client connections of the front ends that keep
/// their own timeouts (<see cref="ISweptConnection"/>), and the exchanges of the front ends that run several per
/// connection and leave their deadlines to the sweep (tracked one by one).
/// </summary>
internal sealed class InFlightRegistry
{
    private readonly ConcurrentDictionary<ISweptConnection, byte> _connections = new();
    // Exchanges in flight of the front ends that run several per connection (HTTP/2 streams, Kestrel's HTTP/1.1): the
    // sweep keeps their deadlines as it keeps the raw connections'.
    private readonly ConcurrentDictionary<IExchangeControl, byte> _streams = new();

    /// <summary>A front end's connection joins the set the sweep and a graceful stop look at.</summary>
    public void ConnectionStarted(ISweptConnection connection) => _connections.TryAdd(connection, 0);

    /// <summary>The last thing a connection's loop does: it leaves the set the sweep and a graceful stop look at.</summary>
    public void ConnectionEnded(ISweptConnection connection) => _connections.TryRemove(connection, out _);

    /// <summary>A front end other than the raw connection's starts <paramref name="exchange"/>: the sweep keeps its deadline.</summary>
    public void Track(IExchangeControl exchange) => _streams.TryAdd(exchange, 0);

    /// <summary>The exchange <see cref="Track"/> was given has ended.</summary>
    public void Untrack(IExchangeControl exchange) => _streams.TryRemove(exchange, out _);

    /// <summary>The exchanges in flight now: what a graceful stop waits for.</summary>
    public int ExchangesInFlight => _connections.Keys.Sum(c => c.ExchangesInFlight) + _streams.Count;

    /// <summary>
    /// One pass over what is in flight at <paramref name="now"/>: each connection acts on its own timeouts
    /// (<see cref="ISweptConnection.CheckDeadline"/>) and each tracked exchange past its deadline expires. Returns
    /// whether any exchange is in flight, which keeps the proxy from counting as idle.
    /// </summary>
    public bool CheckDeadlines(long now)
    {
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
        return busy;
    }

    /// <summary>The proxy is idle after a burst: each connection gives back what it keeps between exchanges.</summary>
    public void ReleaseIdle()
    {
        foreach (var (connection, _) in _connections)
        {
            connection.ReleaseIdle();
        }
    }
}
