using System.Net;
using System.Net.Sockets;
using System.Text;
using LLHttp.Sockets;
using LLHttp.Transports;
using Xunit;

namespace LLHttp.Tests;

/// <summary>
/// Real loopback sockets and tiny timeouts, over each socket engine this machine runs. Only the error kind is asserted,
/// never a duration.
/// </summary>
public sealed class TimeoutTests : IDisposable
{
    // Only the timeout under test is tiny, so a slow machine cannot trip a different one first.
    private static readonly LLHttpOptions TinyConnect = new() { ConnectTimeout = TimeSpan.FromMilliseconds(50) };

    public static TheoryData<LLHttpSocketEngine> Engines()
    {
        var engines = new TheoryData<LLHttpSocketEngine>();
        foreach (var engine in Enum.GetValues<LLHttpSocketEngine>().Where(e => e.IsSupported()))
        {
            engines.Add(engine);
        }

        return engines;
    }

    private readonly Socket _listener = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
    private readonly List<Socket> _accepted = [];

    public TimeoutTests()
    {
        _listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        _listener.Listen(8);
    }

    private EndPoint EndPoint => _listener.LocalEndPoint!;

    /// <summary>Accepts one connection, reads the request head, sends <paramref name="response"/>, then stays silent.</summary>
    private async Task ServeOnceAsync(string response)
    {
        var socket = await _listener.AcceptAsync();
        _accepted.Add(socket);
        var buffer = new byte[4096];
        int total = 0;
        while (total < buffer.Length && !Encoding.Latin1.GetString(buffer, 0, total).Contains("\r\n\r\n", StringComparison.Ordinal))
        {
            int n = await socket.ReceiveAsync(buffer.AsMemory(total));
            if (n == 0)
            {
                return;
            }

            total += n;
        }

        await socket.SendAsync(Encoding.Latin1.GetBytes(response));
    }

    [Theory]
    [MemberData(nameof(Engines))]
    public async Task Silent_origin_is_a_response_head_timeout(LLHttpSocketEngine engine)
    {
        var server = ServeOnceAsync("");
        var tinyHead = new LLHttpOptions { ResponseHeadTimeout = TimeSpan.FromMilliseconds(50), SocketEngine = engine };
        using var connection = await LLHttpConnection.ConnectAsync(EndPoint, tinyHead);
        connection.StartRequest("GET"u8, "/"u8, "h"u8);
        await connection.SendRequestAsync();
        var e = await Assert.ThrowsAsync<LLHttpException>(async () => await connection.ReadResponseHeadAsync());
        Assert.Equal(LLHttpError.ResponseHeadTimeout, e.Error);
        Assert.True(e.IsTimeout);
        Assert.False(connection.IsReusable);
        await server;
    }

    [Theory]
    [MemberData(nameof(Engines))]
    public async Task Origin_stalling_mid_body_is_a_body_idle_timeout(LLHttpSocketEngine engine)
    {
        var server = ServeOnceAsync("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello");
        var tinyBody = new LLHttpOptions { BodyIdleTimeout = TimeSpan.FromMilliseconds(50), SocketEngine = engine };
        using var connection = await LLHttpConnection.ConnectAsync(EndPoint, tinyBody);
        connection.StartRequest("GET"u8, "/"u8, "h"u8);
        await connection.SendRequestAsync();
        var head = await connection.ReadResponseHeadAsync();
        Assert.Equal(10, head.ContentLength);
        var buffer = new byte[16];
        int got = 0;
        var e = await Assert.ThrowsAsync<LLHttpException>(async () =>
        {
            for (int i = 0; i < 10; i++)
            {
                got += await connection.ReadBodyAsync(buffer);
            }
        });
        Assert.Equal(LLHttpError.BodyIdleTimeout, e.Error);
        Assert.Equal(5, got);
        Assert.False(connection.IsReusable);
        await server;
    }

    [Theory]
    [MemberData(nameof(Engines))]
    public async Task Timer_is_disarmed_between_operations(LLHttpSocketEngine engine)
    {
        // The idle gap between exchanges is longer than both timeouts: a timer left armed by the first exchange would
        // fire during the gap and fail the second one. The timeouts are 60 times the origin's 50 ms, so an exchange
        // slowed by a busy machine (the suite builds and runs other assemblies beside this one) still beats them.
        var options = new LLHttpOptions { ResponseHeadTimeout = TimeSpan.FromSeconds(3), BodyIdleTimeout = TimeSpan.FromSeconds(3), SocketEngine = engine };
        var server = Task.Run(async () =>
        {
            var socket = await _listener.AcceptAsync();
            _accepted.Add(socket);
            var buffer = new byte[4096];
            for (int i = 0; i < 2; i++)
            {
                await socket.ReceiveAsync(buffer);

                // Answer late enough that the client's head receive goes asynchronous and arms the timer.
                await Task.Delay(50);
                await socket.SendAsync("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"u8.ToArray());
            }
        });
        using var connection = await LLHttpConnection.ConnectAsync(EndPoint, options);
        for (int i = 0; i < 2; i++)
        {
            if (i == 1)
            {
                await Task.Delay(TimeSpan.FromSeconds(3.5));
            }

            connection.StartRequest("GET"u8, "/"u8, "h"u8);
            await connection.SendRequestAsync();
            await connection.ReadResponseHeadAsync();
            Assert.Equal(2, await connection.ReadBodyAsync(new byte[8]));
            Assert.Equal(0, await connection.ReadBodyAsync(new byte[8]));
            Assert.True(connection.IsReusable);
        }

        await server;
    }

    [Theory]
    [MemberData(nameof(Engines))]
    public async Task Refused_connect_is_connect_failed(LLHttpSocketEngine engine)
    {
        // Bound and never listening, and held through the connect: refused, and no parallel test can take the port.
        using var closed = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        closed.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        var endPoint = closed.LocalEndPoint!;
        var e = await Assert.ThrowsAsync<LLHttpException>(async () => await LLHttpConnection.ConnectAsync(endPoint, new LLHttpOptions { SocketEngine = engine }));
        Assert.Equal(LLHttpError.ConnectFailed, e.Error);
    }

    [Fact]
    public async Task Connect_that_never_completes_is_connect_timeout()
    {
        static async ValueTask<Transport> Hang(CancellationToken cancellationToken)
        {
            await Task.Delay(Timeout.Infinite, cancellationToken);
            throw new InvalidOperationException("unreachable");
        }

        var e = await Assert.ThrowsAsync<LLHttpException>(async () => await LLHttpConnection.ConnectAsync(Hang, TinyConnect, default));
        Assert.Equal(LLHttpError.ConnectTimeout, e.Error);
    }

    [Theory]
    [MemberData(nameof(Engines))]
    public async Task Caller_cancellation_is_not_reported_as_timeout(LLHttpSocketEngine engine)
    {
        var server = ServeOnceAsync("");
        using var connection = await LLHttpConnection.ConnectAsync(EndPoint, new LLHttpOptions { SocketEngine = engine });
        connection.StartRequest("GET"u8, "/"u8, "h"u8);
        await connection.SendRequestAsync();
        using var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(50));
        var e = await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await connection.ReadResponseHeadAsync(cts.Token));
        Assert.Equal(cts.Token, e.CancellationToken);
        Assert.False(connection.IsReusable);
        await server;
    }

    [Theory]
    [MemberData(nameof(Engines))]
    public async Task Without_timeouts_caller_cancellation_ends_a_waiting_head_or_body_read(LLHttpSocketEngine engine)
    {
        // No timer to arm: each wait holds the caller's token itself instead of the gate's linked one.
        var untimed = new LLHttpOptions { ResponseHeadTimeout = Timeout.InfiniteTimeSpan, BodyIdleTimeout = Timeout.InfiniteTimeSpan, SocketEngine = engine };
        foreach (var stallInBody in new[] { false, true })
        {
            var server = ServeOnceAsync(stallInBody ? "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc" : "");
            using var connection = await LLHttpConnection.ConnectAsync(EndPoint, untimed);
            connection.StartRequest("GET"u8, "/"u8, "h"u8);
            await connection.SendRequestAsync();
            using var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(50));
            async Task ReadResponseAsync()
            {
                await connection.ReadResponseHeadAsync(cts.Token);
                var body = new byte[16];
                Assert.Equal(3, await connection.ReadBodyAsync(body, cts.Token));
                await connection.ReadBodyAsync(body, cts.Token);
            }

            // Bounded, so a wait the cancellation does not reach fails the test instead of hanging it.
            var e = await Assert.ThrowsAnyAsync<OperationCanceledException>(() => ReadResponseAsync().WaitAsync(TimeSpan.FromSeconds(30)));
            Assert.Equal(cts.Token, e.CancellationToken);
            Assert.False(connection.IsReusable);
            await server;
        }
    }

    [Theory]
    [MemberData(nameof(Engines))]
    public async Task Pool_over_loopback_reuses_the_socket(LLHttpSocketEngine engine)
    {
        var server = Task.Run(async () =>
        {
            var socket = await _listener.AcceptAsync();
            _accepted.Add(socket);
            var buffer = new byte[4096];
            for (int i = 0; i < 2; i++)
            {
                await socket.ReceiveAsync(buffer);
                await socket.SendAsync("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"u8.ToArray());
            }
        });
        using var pool = new Pooling.LLHttpConnectionPool(EndPoint, new LLHttpOptions { SocketEngine = engine });
        for (int i = 0; i < 2; i++)
        {
            var connection = await pool.RentAsync();
            connection.StartRequest("GET"u8, "/"u8, "h"u8);
            await connection.SendRequestAsync();
            await connection.ReadResponseHeadAsync();
            while (await connection.ReadBodyAsync(new byte[8]) != 0)
            {
            }

            pool.Return(connection);
        }

        Assert.Equal(1, pool.IdleCount);
        await server; // the server only ever accepted one connection
    }

    [Theory]
    [MemberData(nameof(Engines))]
    public async Task Pool_drops_a_connection_the_origin_closed_while_idle(LLHttpSocketEngine engine)
    {
        var firstClosed = new TaskCompletionSource();
        var server = Task.Run(async () =>
        {
            var buffer = new byte[4096];
            for (int i = 0; i < 2; i++)
            {
                var socket = await _listener.AcceptAsync();
                _accepted.Add(socket);
                await socket.ReceiveAsync(buffer);
                await socket.SendAsync("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"u8.ToArray());
                if (i == 0)
                {
                    // After the client read the whole response: the close finds its connection idle in the pool.
                    await firstClosed.Task;
                    socket.Close();
                }
            }
        });
        using var pool = new Pooling.LLHttpConnectionPool(EndPoint, new LLHttpOptions { SocketEngine = engine });
        LLHttpConnection? first = null;
        for (int i = 0; i < 2; i++)
        {
            var connection = await pool.RentAsync();
            Assert.NotSame(first, connection);
            connection.StartRequest("GET"u8, "/"u8, "h"u8);
            await connection.SendRequestAsync();
            await connection.ReadResponseHeadAsync();
            while (await connection.ReadBodyAsync(new byte[8]) != 0)
            {
            }

            pool.Return(connection);
            if (i == 0)
            {
                first = connection;
                firstClosed.SetResult();
                // Bounded wait for the kernel to report the close (no duration is asserted).
                for (var deadline = DateTime.UtcNow.AddSeconds(10); !first.IsReadableWhileIdle(); await Task.Delay(1))
                {
                    Assert.True(DateTime.UtcNow < deadline, "the close was never reported");
                }
            }
        }

        await server; // the second exchange went over a second connection: the server accepted it
    }

    public void Dispose()
    {
        foreach (var socket in _accepted)
        {
            socket.Dispose();
        }

        _listener.Dispose();
    }
}
