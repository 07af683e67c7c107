using System.Buffers;
using System.Net;
using System.Net.Sockets;
using LLHttp.Sockets;
using Xunit;

namespace LLHttp.Tests;

/// <summary>A test of LLHttp's epoll engine, skipped where the engine does not run (anything but Linux x86-64).</summary>
public sealed class EpollFactAttribute : FactAttribute
{
    public EpollFactAttribute()
    {
        if (!EpollEngine.IsSupported)
        {
            Skip = "LLHttp's epoll engine runs on Linux x86-64 only.";
        }
    }
}

/// <summary>
/// <see cref="EpollSocket"/> over real loopback sockets, its peer a runtime socket. Waits for an event are bounded loops
/// that fail after <see cref="Patience"/>; no duration is asserted.
/// </summary>
public sealed class EpollSocketTests : IDisposable
{
    // How long a test waits for the kernel to report what it already did (a close, a byte): generous for a loaded box.
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(10);

    private readonly Socket _listener = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
    private readonly List<IDisposable> _owned = [];

    public EpollSocketTests()
    {
        _listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        _listener.Listen(1024);
    }

    private async Task<(EpollSocket Client, Socket Server)> PairAsync()
    {
        var accept = _listener.AcceptAsync();
        var client = await EpollSocket.ConnectAsync(_listener.LocalEndPoint!, 0, CancellationToken.None);
        var server = await accept;
        _owned.Add(client);
        _owned.Add(server);
        return (client, server);
    }

    private static async Task<byte[]> ReceiveExactlyAsync(EpollSocket socket, int count, int bufferSize)
    {
        var received = new byte[count];
        var buffer = new byte[bufferSize];
        int total = 0;
        while (total < count)
        {
            // The whole buffer every time: a receive that gets less than it asked for drained the socket.
            // Bounded: a readiness event the engine lost fails the test instead of hanging it.
            int n = await socket.ReceiveAsync(buffer, CancellationToken.None).AsTask().WaitAsync(Patience);
            Assert.NotEqual(0, n);
            Assert.True(total + n <= count, "more bytes than the peer sent");
            buffer.AsSpan(0, n).CopyTo(received.AsSpan(total));
            total += n;
        }

        return received;
    }

    private static async Task WaitUntilAsync(Func<bool> condition)
    {
        var deadline = DateTime.UtcNow + Patience;
        while (!condition())
        {
            Assert.True(DateTime.UtcNow < deadline, "the event never came");
            await Task.Delay(1);
        }
    }

    private static byte[] Pattern(int length)
    {
        var bytes = new byte[length];
        for (int i = 0; i < length; i++)
        {
            bytes[i] = (byte)(i * 31 + (i >> 8));
        }

        return bytes;
    }

    [EpollFact]
    public async Task Every_split_of_the_peer_sends_arrives_whole()
    {
        // The first part drains the socket, so the second receive waits for its readiness event instead of trying.
        // A 3-byte buffer makes receives that fill their buffer, which must try again before they wait.
        var message = Pattern(40);
        foreach (int bufferSize in new[] { 3, 4096 })
        {
            for (int split = 1; split < message.Length; split++)
            {
                var (client, server) = await PairAsync();
                await server.SendAsync(message.AsMemory(0, split));
                var first = await ReceiveExactlyAsync(client, split, bufferSize);
                var rest = ReceiveExactlyAsync(client, message.Length - split, bufferSize);
                await server.SendAsync(message.AsMemory(split));
                byte[] whole = [.. first, .. await rest];
                Assert.Equal(message, whole);
            }
        }
    }

    [EpollFact]
    public async Task A_send_larger_than_the_socket_buffers_waits_for_the_peer_and_loses_no_byte()
    {
        var (client, server) = await PairAsync();
        var message = Pattern(16 * 1024 * 1024);
        var send = client.SendAsync(message, CancellationToken.None);
        Assert.False(send.IsCompleted, "16 MiB fitted the socket buffers: the test no longer covers a send that waits");
        var received = new byte[message.Length];
        int total = 0;
        while (total < received.Length)
        {
            total += await server.ReceiveAsync(received.AsMemory(total));
        }

        await send.AsTask().WaitAsync(Patience);
        Assert.Equal(message, received);
    }

    [EpollFact]
    public async Task The_thread_count_is_fixed_once_the_engine_runs()
    {
        await PairAsync();
        int running = EpollEngine.ThreadCount;

        Assert.Throws<ArgumentOutOfRangeException>(() => EpollEngine.ThreadCount = 0);
        EpollEngine.ThreadCount = running; // the same count changes nothing
        Assert.Throws<InvalidOperationException>(() => EpollEngine.ThreadCount = running + 1);
        Assert.Equal(running, EpollEngine.ThreadCount);
    }

    [EpollFact]
    public async Task Sending_and_receiving_at_once_both_complete()
    {
        var (client, server) = await PairAsync();
        var message = Pattern(4 * 1024 * 1024);
        var echo = Task.Run(async () =>
        {
            var buffer = new byte[64 * 1024];
            for (int total = 0; total < message.Length;)
            {
                int n = await server.ReceiveAsync(buffer);
                Assert.NotEqual(0, n);
                await server.SendAsync(buffer.AsMemory(0, n));
                total += n;
            }
        });
        var receive = ReceiveExactlyAsync(client, message.Length, 64 * 1024);
        await client.SendAsync(message, CancellationToken.None);
        Assert.Equal(message, await receive);
        await echo;
    }

    [EpollFact]
    public async Task An_idle_socket_is_readable_once_the_peer_closes_and_not_before()
    {
        var (client, server) = await PairAsync();
        Assert.False(client.IsReadable());
        server.Shutdown(SocketShutdown.Send);
        await WaitUntilAsync(client.IsReadable);
        Assert.Equal(0, await client.ReceiveAsync(new byte[8], CancellationToken.None));
        Assert.Equal(0, await client.ReceiveAsync(new byte[8], CancellationToken.None));
    }

    [EpollFact]
    public async Task The_end_of_stream_that_came_with_the_last_bytes_is_read()
    {
        // The bytes and the FIN are both in the socket before the engine serves it, so its first event reports both at
        // once, and the receive that takes the bytes is short without having read the end of stream.
        using var runtimeClient = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        var accept = _listener.AcceptAsync();
        runtimeClient.Connect(_listener.LocalEndPoint!);
        using var server = await accept;
        await server.SendAsync("last"u8.ToArray());
        server.Shutdown(SocketShutdown.Send);
        var deadline = DateTime.UtcNow + Patience;
        while (!runtimeClient.Poll(0, SelectMode.SelectRead) || runtimeClient.Available < 4)
        {
            Assert.True(DateTime.UtcNow < deadline, "the bytes never came");
            await Task.Delay(1);
        }

        using var client = EpollSocket.Serve(runtimeClient);
        // Gives the engine's thread time to take the event first, the order that once lost the end of stream; the
        // test holds in either order.
        await Task.Delay(50);
        Assert.Equal("last"u8.ToArray(), await ReceiveExactlyAsync(client, 4, 64));
        Assert.Equal(0, await client.ReceiveAsync(new byte[64], CancellationToken.None).AsTask().WaitAsync(Patience));
    }

    [EpollFact]
    public async Task An_idle_socket_is_readable_once_the_peer_sends_unasked()
    {
        var (client, server) = await PairAsync();
        await server.SendAsync("x"u8.ToArray());
        await WaitUntilAsync(client.IsReadable);
        Assert.True(client.IsReadable(), "reading the state must not consume it");
        Assert.Equal((byte)'x', (await ReceiveExactlyAsync(client, 1, 8))[0]);
        Assert.False(client.IsReadable());
    }

    [EpollFact]
    public async Task Try_receive_takes_what_is_there_and_never_waits()
    {
        var (client, server) = await PairAsync();
        var buffer = new byte[8];
        Assert.False(client.MayBeReadable);
        Assert.Equal(-1, client.TryReceive(buffer));
        await server.SendAsync("abc"u8.ToArray());
        await WaitUntilAsync(() => client.MayBeReadable);
        Assert.Equal(3, client.TryReceive(buffer));
        Assert.Equal("abc"u8.ToArray(), buffer[..3]);
        // The short receive drained the socket: the next try makes no system call and finds nothing.
        Assert.False(client.MayBeReadable);
        Assert.Equal(-1, client.TryReceive(buffer));
        server.Shutdown(SocketShutdown.Send);
        await WaitUntilAsync(() => client.MayBeReadable);
        Assert.Equal(0, client.TryReceive(buffer));
        client.Dispose();
        Assert.Throws<ObjectDisposedException>(() => client.TryReceive(buffer));
    }

    [EpollFact]
    public async Task Has_ended_tells_a_fin_from_bytes_still_to_read()
    {
        var (client, server) = await PairAsync();
        Assert.False(client.HasEnded());
        await server.SendAsync("x"u8.ToArray());
        await WaitUntilAsync(() => client.MayBeReadable);
        Assert.False(client.HasEnded());
        server.Shutdown(SocketShutdown.Send);
        // The byte before the FIN is still to read: not ended, and the peek consumed nothing.
        await Task.Delay(20);
        Assert.False(client.HasEnded());
        Assert.Equal((byte)'x', (await ReceiveExactlyAsync(client, 1, 1))[0]);
        await WaitUntilAsync(client.HasEnded);
        Assert.Equal(0, client.TryReceive(new byte[8]));
    }

    [EpollFact]
    public async Task Has_ended_is_true_after_a_reset()
    {
        var (client, server) = await PairAsync();
        server.LingerState = new LingerOption(true, 0);
        server.Close();
        await WaitUntilAsync(client.HasEnded);
        // The peek may have taken the reset's error with it: then a receive reads the end of stream.
        var received = -1;
        var error = Record.Exception(() => received = client.TryReceive(new byte[8]));
        Assert.True(error is SocketException || received == 0, $"after a reset: {error?.GetType().Name ?? received.ToString()}");
    }

    [EpollFact]
    public async Task Closing_fails_a_pending_receive_with_operation_aborted_and_later_calls_with_disposed()
    {
        var (client, _) = await PairAsync();
        var pending = client.ReceiveAsync(new byte[8], CancellationToken.None);
        Assert.False(pending.IsCompleted);
        client.Dispose();
        var e = await Assert.ThrowsAsync<SocketException>(async () => await pending);
        Assert.Equal(SocketError.OperationAborted, e.SocketErrorCode);
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await client.ReceiveAsync(new byte[8], CancellationToken.None));
        await Assert.ThrowsAsync<ObjectDisposedException>(async () => await client.SendAsync(new byte[8], CancellationToken.None));
        Assert.True(client.IsReadable());
    }

    [EpollFact]
    public async Task Cancelling_a_pending_receive_leaves_the_socket_usable()
    {
        var (client, server) = await PairAsync();
        using var cts = new CancellationTokenSource();
        var pending = client.ReceiveAsync(new byte[8], cts.Token);
        Assert.False(pending.IsCompleted);
        cts.Cancel();
        var e = await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await pending);
        Assert.Equal(cts.Token, e.CancellationToken);
        await server.SendAsync("ok"u8.ToArray());
        Assert.Equal("ok"u8.ToArray(), await ReceiveExactlyAsync(client, 2, 8));
    }

    [EpollFact]
    public async Task A_refused_connect_throws_connection_refused()
    {
        // Bound and never listening, and held through the connect: refused, and no parallel test can take the port.
        using var closed = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        closed.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        var endPoint = closed.LocalEndPoint!;
        var e = await Assert.ThrowsAsync<SocketException>(async () => await EpollSocket.ConnectAsync(endPoint, 0, CancellationToken.None));
        Assert.Equal(SocketError.ConnectionRefused, e.SocketErrorCode);
    }

    [EpollFact]
    public async Task A_dns_end_point_connects()
    {
        var accept = _listener.AcceptAsync();
        using var client = await EpollSocket.ConnectAsync(new DnsEndPoint("localhost", ((IPEndPoint)_listener.LocalEndPoint!).Port), 0, CancellationToken.None);
        using var server = await accept;
        await server.SendAsync("hi"u8.ToArray());
        Assert.Equal("hi"u8.ToArray(), await ReceiveExactlyAsync(client, 2, 8));
    }

    [EpollFact]
    public async Task Many_sockets_at_once_each_get_their_own_bytes_and_freed_slots_are_reused()
    {
        // More sockets than the engine's first slot table holds (256), twice: the second round reuses freed slots, so
        // an event meant for a closed socket must never reach the socket that took its slot.
        for (int round = 0; round < 2; round++)
        {
            var pairs = new List<(EpollSocket Client, Socket Server)>();
            for (int i = 0; i < 300; i++)
            {
                pairs.Add(await PairAsync());
            }

            var receives = pairs.Select(p => ReceiveExactlyAsync(p.Client, 4, 4)).ToArray();
            for (int i = 0; i < pairs.Count; i++)
            {
                await pairs[i].Server.SendAsync(BitConverter.GetBytes(i + round * 1000));
            }

            for (int i = 0; i < pairs.Count; i++)
            {
                Assert.Equal(i + round * 1000, BitConverter.ToInt32(await receives[i]));
            }

            foreach (var (client, server) in pairs)
            {
                client.Dispose();
                server.Dispose();
            }
        }
    }

    public void Dispose()
    {
        foreach (var owned in _owned)
        {
            owned.Dispose();
        }

        _listener.Dispose();
    }
}
