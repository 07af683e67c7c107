using LLHttp.Pooling;
using Xunit;
using static LLHttp.Tests.TestKit;

namespace LLHttp.Tests;

public class PoolTests
{
    private sealed class ManualClock : TimeProvider
    {
        public long Now { get; set; }

        public override long TimestampFrequency => TimeSpan.TicksPerSecond;

        public override long GetTimestamp() => Now;

        public void Advance(TimeSpan by) => Now += by.Ticks;
    }

    private sealed class Factory
    {
        public List<(LLHttpConnection Connection, ScriptedTransport Transport)> Made { get; } = [];

        public LLHttpOptions Options { get; init; } = TestKit.Options;

        public ValueTask<LLHttpConnection> ConnectAsync(CancellationToken cancellationToken)
        {
            var transport = new ScriptedTransport();
            var connection = Connect(transport, Options);
            Made.Add((connection, transport));
            return new ValueTask<LLHttpConnection>(connection);
        }
    }

    [Fact]
    public async Task Rent_is_last_in_first_out()
    {
        var factory = new Factory();
        using var pool = new LLHttpConnectionPool(factory.ConnectAsync, Options);
        var a = await pool.RentAsync();
        var b = await pool.RentAsync();
        var c = await pool.RentAsync();
        Assert.Equal(3, factory.Made.Count);
        pool.Return(a);
        pool.Return(b);
        pool.Return(c);
        Assert.Equal(3, pool.IdleCount);

        Assert.Same(c, await pool.RentAsync());
        Assert.Same(b, await pool.RentAsync());
        pool.Return(b);
        Assert.Same(b, await pool.RentAsync());
        Assert.Same(a, await pool.RentAsync());
        Assert.Equal(3, factory.Made.Count);
        Assert.NotSame(a, await pool.RentAsync()); // empty: connects
        Assert.Equal(4, factory.Made.Count);
    }

    [Fact]
    public async Task Idle_connections_are_evicted_oldest_first()
    {
        var clock = new ManualClock();
        var options = new LLHttpOptions { TimeProvider = clock, PooledConnectionIdleTimeout = TimeSpan.FromSeconds(10) };
        var factory = new Factory { Options = options };
        using var pool = new LLHttpConnectionPool(factory.ConnectAsync, options);
        var old = await pool.RentAsync();
        clock.Advance(TimeSpan.FromSeconds(6));
        var young = await pool.RentAsync();
        pool.Return(old);
        pool.Return(young);

        clock.Advance(TimeSpan.FromSeconds(5)); // old: 11 s idle, young: 5 s
        pool.EvictExpired();
        Assert.Equal(1, pool.IdleCount);
        Assert.True(factory.Made[0].Transport.Disposed);
        Assert.False(factory.Made[1].Transport.Disposed);

        clock.Advance(TimeSpan.FromSeconds(5));
        Assert.NotSame(young, await pool.RentAsync()); // expired on rent too
        Assert.True(factory.Made[1].Transport.Disposed);
    }

    [Fact]
    public async Task Connection_closed_while_idle_is_skipped()
    {
        var factory = new Factory();
        using var pool = new LLHttpConnectionPool(factory.ConnectAsync, Options);
        var a = await pool.RentAsync();
        var b = await pool.RentAsync();
        pool.Return(a);
        pool.Return(b);
        factory.Made[1].Transport.ReadableWhileIdle = true; // the origin closed b

        Assert.Same(a, await pool.RentAsync());
        Assert.True(factory.Made[1].Transport.Disposed);
    }

    [Fact]
    public async Task Unusable_and_excess_returns_are_closed()
    {
        var factory = new Factory { Options = new LLHttpOptions { MaxIdleConnections = 1 } };
        using var pool = new LLHttpConnectionPool(factory.ConnectAsync, factory.Options);
        var a = await pool.RentAsync();
        var b = await pool.RentAsync();
        var c = await pool.RentAsync();
        a.Abort();
        pool.Return(a);
        pool.Return(b);
        pool.Return(c);
        Assert.Equal(1, pool.IdleCount);
        Assert.False(factory.Made[1].Transport.Disposed);
        Assert.True(factory.Made[2].Transport.Disposed);
    }

    [Fact]
    public async Task Affinity_slot_keeps_its_connection_until_unusable()
    {
        var factory = new Factory();
        using var slot = new LLHttpAffinitySlot(factory.ConnectAsync, Options);
        var first = await slot.GetAsync();
        factory.Made[0].Transport.Enqueue("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        first.StartRequest("GET"u8, "/"u8, "h"u8);
        await first.SendRequestAsync();
        await first.ReadResponseHeadAsync();
        Assert.Same(first, await slot.GetAsync());

        factory.Made[0].Transport.Enqueue("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
        first.StartRequest("GET"u8, "/"u8, "h"u8);
        await first.SendRequestAsync();
        await first.ReadResponseHeadAsync();
        var second = await slot.GetAsync();
        Assert.NotSame(first, second);
        Assert.True(factory.Made[0].Transport.Disposed);
    }
}
