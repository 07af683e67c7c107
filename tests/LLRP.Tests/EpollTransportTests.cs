using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using LLRP.Transport;
using Xunit;

namespace LLRP.Tests;

/// <summary>
/// The epoll transport (Transport/EpollConnection*.cs): how large its input's receives are, its end points and id, and
/// the half-close of its output.
/// </summary>
public sealed class EpollTransportTests
{
    [Fact]
    public async Task Receives_a_streaming_body_in_larger_buffers_and_a_request_head_in_a_small_one()
    {
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen();
        using var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await client.ConnectAsync(listener.LocalEndPoint!);
        var accepted = await listener.AcceptAsync();
        // The connection takes the accepted socket's descriptor and disposes the socket: a duplicate watches the
        // receive queue.
        using var watch = new Socket(new SafeSocketHandle(dup((int)accepted.SafeHandle.DangerousGetHandle()), ownsHandle: true));
        await using var connection = new EpollConnection(accepted, MemoryPool<byte>.Shared, inlineScheduling: false);
        var input = connection.Transport.Input;

        // 80 KiB waiting in the socket: the first receive fills the 4 KiB a request head gets, so the next buffer is
        // the streaming one, and the receive after it takes 64 KiB at once.
        var sent = 80 * 1024;
        await SendAndWaitUntilReceivable(client, watch, new byte[sent]);
        Assert.Equal(4096, await ReadAll(input));
        Assert.Equal(64 * 1024, await ReadAll(input));
        // The rest fits: a receive that does not fill its buffer sends the next one back to 4 KiB.
        Assert.Equal(sent - 4096 - 64 * 1024, await ReadAll(input));
        await SendAndWaitUntilReceivable(client, watch, new byte[6000]);
        Assert.Equal(4096, await ReadAll(input));
    }

    [Theory]
    [InlineData("127.0.0.1")]
    [InlineData("::1")]
    public async Task Reads_the_peers_end_point_and_names_itself_when_asked(string loopback)
    {
        var address = IPAddress.Parse(loopback);
        using var listener = new Socket(address.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(address, 0));
        listener.Listen();
        using var client = new Socket(address.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        await client.ConnectAsync(listener.LocalEndPoint!);
        var connection = new EpollConnection(await listener.AcceptAsync(), MemoryPool<byte>.Shared, inlineScheduling: false);
        using var other = new Socket(address.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        await other.ConnectAsync(listener.LocalEndPoint!);
        await using var second = new EpollConnection(await listener.AcceptAsync(), MemoryPool<byte>.Shared, inlineScheduling: false);

        Assert.Equal(client.LocalEndPoint, connection.RemoteEndPoint);
        Assert.Equal(listener.LocalEndPoint, connection.LocalEndPoint);
        Assert.Equal(connection.ConnectionId, connection.ConnectionId);
        Assert.NotEqual(connection.ConnectionId, second.ConnectionId);
        connection.ConnectionId = "named";
        Assert.Equal("named", connection.ConnectionId);

        // Closed: no peer to read.
        connection.Abort(new Microsoft.AspNetCore.Connections.ConnectionAbortedException("test"));
        Assert.Null(connection.RemoteEndPoint);
        await connection.DisposeAsync();
    }

    [Fact]
    public async Task Closing_the_output_alone_sends_a_fin_after_the_flushed_bytes_and_keeps_reading()
    {
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen();
        using var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await client.ConnectAsync(listener.LocalEndPoint!);
        await using var connection = new EpollConnection(await listener.AcceptAsync(), MemoryPool<byte>.Shared, inlineScheduling: false);
        using var cap = new CancellationTokenSource(TimeSpan.FromSeconds(10));

        await connection.Transport.Output.WriteAsync("last response"u8.ToArray(), cap.Token);
        Assert.True(connection.CloseOutput());
        // Written after the half-close: dropped, and the flush says the output is done.
        Assert.True((await connection.Transport.Output.WriteAsync("dropped"u8.ToArray(), cap.Token)).IsCompleted);

        // The client reads the flushed bytes, then the FIN.
        var received = new byte[64];
        var length = 0;
        int read;
        while ((read = await client.ReceiveAsync(received.AsMemory(length), cap.Token)) > 0)
        {
            length += read;
        }
        Assert.Equal("last response", System.Text.Encoding.ASCII.GetString(received, 0, length));

        // The connection still reads what the client sends, up to the client's own FIN.
        await client.SendAsync("still sending"u8.ToArray(), cap.Token);
        client.Shutdown(SocketShutdown.Send);
        var input = connection.Transport.Input;
        var total = 0L;
        while (true)
        {
            var result = await input.ReadAsync(cap.Token);
            total += result.Buffer.Length;
            input.AdvanceTo(result.Buffer.End);
            if (result.IsCompleted)
            {
                break;
            }
        }
        Assert.Equal("still sending".Length, total);
        Assert.False(connection.CloseOutput());
    }

    private static async Task SendAndWaitUntilReceivable(Socket client, Socket accepted, byte[] bytes)
    {
        await client.SendAsync(bytes);
        // Loopback delivers at once, but not within the send call: wait (bounded) until every byte can be received.
        for (var i = 0; i < 500 && accepted.Available < bytes.Length; i++)
        {
            await Task.Delay(10);
        }
        Assert.Equal(bytes.Length, accepted.Available);
    }

    [DllImport("libc", SetLastError = true)]
    private static extern nint dup(int fd);

    // One read: how many bytes it returned, all of them consumed.
    private static async Task<long> ReadAll(PipeReader input)
    {
        var result = await input.ReadAsync();
        var length = result.Buffer.Length;
        input.AdvanceTo(result.Buffer.End);
        return length;
    }
}
