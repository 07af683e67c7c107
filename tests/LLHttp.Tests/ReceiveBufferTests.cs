using System.Net;
using System.Net.Sockets;
using LLHttp.Sockets;
using Xunit;

namespace LLHttp.Tests;

/// <summary>LLHttpOptions.ReceiveBufferSize reaches the socket on each engine, and 0 leaves the kernel's buffer alone.</summary>
public sealed class ReceiveBufferTests : IDisposable
{
    // Above the kernel's starting buffer (net.ipv4.tcp_rmem's 128 KiB on Linux) and below net.core.rmem_max's default
    // (208 KiB), so the kernel grants at least this much (it doubles the value) and a buffer left alone reads less.
    private const int Requested = 200_000;

    private readonly Socket _listener = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);

    public ReceiveBufferTests()
    {
        _listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        _listener.Listen(8);
    }

    public static TheoryData<LLHttpSocketEngine> Engines() => TimeoutTests.Engines();

    [Theory]
    [MemberData(nameof(Engines))]
    public async Task A_set_size_is_the_sockets_receive_buffer(LLHttpSocketEngine engine)
    {
        using var connection = await LLHttpConnection.ConnectAsync(_listener.LocalEndPoint!, new LLHttpOptions { SocketEngine = engine, ReceiveBufferSize = Requested });
        Assert.True(connection.SocketReceiveBufferSize >= Requested, $"SO_RCVBUF {connection.SocketReceiveBufferSize}, asked for {Requested}");
    }

    [Theory]
    [MemberData(nameof(Engines))]
    public async Task Zero_leaves_the_kernels_buffer(LLHttpSocketEngine engine)
    {
        using var plain = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await plain.ConnectAsync(_listener.LocalEndPoint!);
        using var connection = await LLHttpConnection.ConnectAsync(_listener.LocalEndPoint!, new LLHttpOptions { SocketEngine = engine });
        Assert.Equal(plain.ReceiveBufferSize, connection.SocketReceiveBufferSize);
    }

    [Fact]
    public void A_negative_size_is_refused()
        => Assert.Throws<ArgumentOutOfRangeException>(() => new LLHttpOptions { ReceiveBufferSize = -1 }.Validate());

    public void Dispose() => _listener.Dispose();
}
