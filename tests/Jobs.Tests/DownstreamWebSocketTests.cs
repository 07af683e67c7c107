using System.Net;
using System.Net.WebSockets;
using System.Text;
using Microsoft.AspNetCore.Builder;

namespace LLRP.Jobs.Tests;

/// <summary>src/Downstream in-process, on a free port: the origin of the WebSocket job's tests. Downstream's other
/// endpoints are tested from tests/LLRP.Tests; /ws is tested here, beside the job that measures through it.</summary>
public sealed class EchoOrigin : IAsyncLifetime
{
    public const string Name = "ws-origin";

    private WebApplication? _app;

    /// <summary>ws://127.0.0.1:PORT/ws.</summary>
    public Uri WebSocketUrl { get; private set; } = null!;

    /// <summary>http://127.0.0.1:PORT.</summary>
    public Uri HttpUrl { get; private set; } = null!;

    public async Task InitializeAsync()
    {
        _app = global::Downstream.DownstreamHost.Build(["--urls", "http://127.0.0.1:0", "--name", Name]);
        using var deadline = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        await _app.StartAsync(deadline.Token);
        HttpUrl = new Uri(global::Downstream.DownstreamHost.Addresses(_app).First());
        WebSocketUrl = new Uri($"ws://{HttpUrl.Authority}/ws");
    }

    public async Task DisposeAsync()
    {
        if (_app is not null)
        {
            using var deadline = new CancellationTokenSource(TimeSpan.FromSeconds(10));
            await _app.StopAsync(deadline.Token);
            await _app.DisposeAsync();
        }
    }
}

/// <summary>Downstream's /ws: every message back as it came (type, bytes, end of message), a close answered with its
/// code, the replica's name on the 101, and a plain request refused.</summary>
public sealed class DownstreamWebSocketTests(EchoOrigin origin) : IClassFixture<EchoOrigin>
{
    // A hang guard for each exchange, never a measured duration.
    private static readonly TimeSpan s_cap = TimeSpan.FromSeconds(30);

    private async Task<ClientWebSocket> ConnectAsync(CancellationToken cancel)
    {
        var socket = new ClientWebSocket();
        socket.Options.Proxy = null;
        socket.Options.CollectHttpResponseDetails = true;
        await socket.ConnectAsync(origin.WebSocketUrl, cancel);
        return socket;
    }

    /// <summary>The next message: its type and its bytes (hex, so that a difference shows where).</summary>
    private static async Task<(WebSocketMessageType Type, string Hex)> ReceiveMessageAsync(ClientWebSocket socket, CancellationToken cancel)
    {
        var bytes = new MemoryStream();
        var buffer = new byte[4096];
        while (true)
        {
            var r = await socket.ReceiveAsync(buffer.AsMemory(), cancel);
            bytes.Write(buffer, 0, r.Count);
            if (r.EndOfMessage || r.MessageType == WebSocketMessageType.Close)
            {
                return (r.MessageType, Convert.ToHexString(bytes.ToArray()));
            }
        }
    }

    [Fact]
    public async Task Binary_and_text_messages_come_back_as_sent()
    {
        using var cap = new CancellationTokenSource(s_cap);
        using var socket = await ConnectAsync(cap.Token);
        Assert.Equal(HttpStatusCode.SwitchingProtocols, socket.HttpStatusCode);
        Assert.Equal(EchoOrigin.Name, socket.HttpResponseHeaders!["X-Downstream"].Single());

        byte[] binary = [0, 1, 2, 255, 254, 0];
        await socket.SendAsync(binary, WebSocketMessageType.Binary, endOfMessage: true, cap.Token);
        Assert.Equal((WebSocketMessageType.Binary, Convert.ToHexString(binary)), await ReceiveMessageAsync(socket, cap.Token));

        // One text message in three frames: it comes back as one text message with the same bytes.
        var text = Encoding.UTF8.GetBytes("héllo, wörld");
        await socket.SendAsync(text.AsMemory(0, 3), WebSocketMessageType.Text, endOfMessage: false, cap.Token);
        await socket.SendAsync(text.AsMemory(3, 4), WebSocketMessageType.Text, endOfMessage: false, cap.Token);
        await socket.SendAsync(text.AsMemory(7), WebSocketMessageType.Text, endOfMessage: true, cap.Token);
        Assert.Equal((WebSocketMessageType.Text, Convert.ToHexString(text)), await ReceiveMessageAsync(socket, cap.Token));

        // An empty message is a message too.
        await socket.SendAsync(ReadOnlyMemory<byte>.Empty, WebSocketMessageType.Binary, endOfMessage: true, cap.Token);
        Assert.Equal((WebSocketMessageType.Binary, ""), await ReceiveMessageAsync(socket, cap.Token));
    }

    [Fact]
    public async Task A_message_larger_than_the_echo_s_buffer_comes_back_whole()
    {
        using var cap = new CancellationTokenSource(s_cap);
        using var socket = await ConnectAsync(cap.Token);
        var large = new byte[200_000];
        new Random(7).NextBytes(large);
        // Sent and read at once: the echo answers piece by piece while the message still arrives.
        var sending = socket.SendAsync(large, WebSocketMessageType.Binary, endOfMessage: true, cap.Token);
        var echoed = await ReceiveMessageAsync(socket, cap.Token);
        await sending;
        Assert.Equal((WebSocketMessageType.Binary, Convert.ToHexString(large)), echoed);
    }

    [Theory]
    [InlineData(WebSocketCloseStatus.NormalClosure, "done")]
    [InlineData((WebSocketCloseStatus)4001, "")]
    [InlineData(WebSocketCloseStatus.EndpointUnavailable, "going away")]
    public async Task A_close_is_answered_with_its_code(WebSocketCloseStatus status, string reason)
    {
        using var cap = new CancellationTokenSource(s_cap);
        using var socket = await ConnectAsync(cap.Token);
        await socket.CloseAsync(status, reason, cap.Token);
        Assert.Equal(WebSocketState.Closed, socket.State);
        Assert.Equal(status, socket.CloseStatus);
        Assert.Equal(reason, socket.CloseStatusDescription);
    }

    [Fact]
    public async Task A_plain_request_to_ws_is_refused_and_other_paths_are_unchanged()
    {
        using var client = new HttpClient { BaseAddress = origin.HttpUrl, Timeout = s_cap };
        using var refused = await client.GetAsync("/ws");
        Assert.Equal(HttpStatusCode.BadRequest, refused.StatusCode);
        Assert.Contains("WebSocket", await refused.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        Assert.Equal(EchoOrigin.Name, refused.Headers.GetValues("X-Downstream").Single());

        using var plain = await client.GetAsync("/?s=3");
        Assert.Equal(HttpStatusCode.OK, plain.StatusCode);
        Assert.Equal("aaa", await plain.Content.ReadAsStringAsync());
    }
}
