using System.Buffers;
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
        factory.Made[1].Transport.ReadableWhileIdle = true; // the downstream closed b

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
    private static async Task ExchangeAsync(LLHttpConnection connection, ScriptedTransport transport)
    {
        transport.Enqueue("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
        connection.StartRequest("GET"u8, "/"u8, "h"u8);
        await connection.SendRequestAsync();
        var head = await connection.ReadResponseHeadAsync();
        Assert.Equal(200, head.StatusCode);
        Assert.True(connection.HoldsBuffers);
        var body = new byte[16];
        var length = 0;
        int read;
        while ((read = await connection.ReadBodyAsync(body.AsMemory(length))) > 0)
        {
            length += read;
        }
        Assert.Equal("hello"u8.ToArray(), body[..length]);
    }

    [Fact]
    public async Task Connection_returned_to_the_pool_holds_no_buffer_until_its_next_exchange()
    {
        var factory = new Factory();
        using var pool = new LLHttpConnectionPool(factory.ConnectAsync, Options);
        var connection = await pool.RentAsync();
        Assert.False(connection.HoldsBuffers); // nothing rented before the first exchange
        await ExchangeAsync(connection, factory.Made[0].Transport);
        pool.Return(connection);
        Assert.False(connection.HoldsBuffers);

        Assert.Same(connection, await pool.RentAsync());
        await ExchangeAsync(connection, factory.Made[0].Transport); // rented again, same bytes
        pool.Return(connection);
        Assert.False(connection.HoldsBuffers);
    }

    [Fact]
    public async Task Affinity_slot_releases_buffers_and_closes_its_idle_connection_after_the_idle_timeout()
    {
        var clock = new ManualClock();
        var options = new LLHttpOptions { TimeProvider = clock, PooledConnectionIdleTimeout = TimeSpan.FromSeconds(60) };
        var factory = new Factory { Options = options };
        using var slot = new LLHttpAffinitySlot(factory.ConnectAsync, options);
        var connection = await slot.GetAsync();
        await ExchangeAsync(connection, factory.Made[0].Transport);
        slot.Return(connection);
        Assert.False(connection.HoldsBuffers);
        Assert.True(slot.HoldsIdleConnection);

        clock.Advance(TimeSpan.FromSeconds(59));
        slot.EvictExpired();
        Assert.False(factory.Made[0].Transport.Disposed);
        Assert.Same(connection, await slot.GetAsync());
        await ExchangeAsync(connection, factory.Made[0].Transport);
        slot.Return(connection);

        clock.Advance(TimeSpan.FromSeconds(60));
        slot.EvictExpired();
        Assert.True(factory.Made[0].Transport.Disposed);
        Assert.False(slot.HoldsIdleConnection);
        Assert.NotSame(connection, await slot.GetAsync());
        Assert.Equal(2, factory.Made.Count);
    }

    [Fact]
    public async Task Affinity_slot_gives_its_idle_connection_to_the_idle_pool_after_the_share_time_and_rents_from_it()
    {
        var clock = new ManualClock();
        var options = new LLHttpOptions { TimeProvider = clock, PooledConnectionIdleTimeout = TimeSpan.FromSeconds(60) };
        var factory = new Factory { Options = options };
        using var pool = new LLHttpConnectionPool(factory.ConnectAsync, options);
        using var idle = new LLHttpAffinitySlot(pool.RentAsync, options, pool, TimeSpan.FromSeconds(1));
        using var other = new LLHttpAffinitySlot(pool.RentAsync, options, pool, TimeSpan.FromSeconds(1));
        var connection = await idle.GetAsync();
        await ExchangeAsync(connection, factory.Made[0].Transport);
        idle.Return(connection);

        // Within the share time the connection stays with its own client connection.
        clock.Advance(TimeSpan.FromMilliseconds(999));
        idle.EvictExpired();
        Assert.True(idle.HoldsIdleConnection);
        Assert.Equal(0, pool.IdleCount);

        clock.Advance(TimeSpan.FromMilliseconds(1));
        idle.EvictExpired();
        Assert.False(idle.HoldsIdleConnection);
        Assert.Equal(1, pool.IdleCount);
        Assert.False(connection.HoldsBuffers);
        Assert.False(factory.Made[0].Transport.Disposed);

        // A slot without a connection takes the shared one instead of connecting.
        Assert.Same(connection, await other.GetAsync());
        Assert.Single(factory.Made);
        await ExchangeAsync(connection, factory.Made[0].Transport);
        other.Return(connection);

        // A closed slot leaves its idle connection to the pool, still open.
        other.Dispose();
        Assert.Equal(1, pool.IdleCount);
        Assert.False(factory.Made[0].Transport.Disposed);
    }

    [Fact]
    public async Task Buffers_come_from_the_configured_pool_and_all_go_back_to_it()
    {
        var buffers = new CountingPool();
        var factory = new Factory { Options = new LLHttpOptions { BufferPool = buffers } };
        using var pool = new LLHttpConnectionPool(factory.ConnectAsync, factory.Options);
        var connection = await pool.RentAsync();
        await ExchangeAsync(connection, factory.Made[0].Transport);
        Assert.True(buffers.Rented > 0, "the exchange rented nothing from the configured pool");
        pool.Return(connection);
        Assert.Equal(buffers.Rented, buffers.Returned);
    }

    /// <summary>Counts what a connection rents and gives back; the arrays themselves come from the shared pool.</summary>
    private sealed class CountingPool : ArrayPool<byte>
    {
        public int Rented { get; private set; }
        public int Returned { get; private set; }

        public override byte[] Rent(int minimumLength)
        {
            Rented++;
            return Shared.Rent(minimumLength);
        }

        public override void Return(byte[] array, bool clearArray = false)
        {
            Returned++;
            Shared.Return(array, clearArray);
        }
    }

    [Fact]
    public async Task Affinity_slot_closes_a_returned_connection_that_is_not_reusable()
    {
        var factory = new Factory();
        using var slot = new LLHttpAffinitySlot(factory.ConnectAsync, Options);
        var connection = await slot.GetAsync();
        connection.Abort();
        slot.Return(connection);
        Assert.False(slot.HoldsIdleConnection);
        Assert.True(factory.Made[0].Transport.Disposed);
        Assert.Throws<InvalidOperationException>(() => slot.Return(connection));
    }
}
