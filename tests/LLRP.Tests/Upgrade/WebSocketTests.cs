using System.Net.WebSockets;
using LLRP.Connections;
using LLRP.Tests.Infrastructure;

namespace LLRP.Tests.Upgrade;

/// <summary>Where the tunnel runs over TLS: nowhere, between the client and the proxy, or on both sides.</summary>
public enum Tls
{
    None,
    ClientSide,
    BothSides,
}

/// <summary>What the client speaks to the proxy: an HTTP/1.1 Upgrade, or HTTP/2's extended CONNECT (RFC 8441).</summary>
public enum Over
{
    Http11,
    Http2,
}

/// <summary>One proxy per (variant, where TLS is, what the client speaks) in front of its own WebSocket origin, shared by the tests of a class.</summary>
public sealed class WebSocketProxies : IAsyncLifetime
{
    private readonly Dictionary<(string, Tls, Over), Task<WebSocketProxy>> _proxies = [];
    private readonly object _lock = new();

    private static string[] Options => [];

    public Task<WebSocketProxy> GetAsync(string client, Tls tls, Over over)
    {
        lock (_lock)
        {
            if (!_proxies.TryGetValue((client, tls, over), out var proxy))
            {
                proxy = WebSocketProxy.StartAsync(client, tls != Tls.None, tls == Tls.BothSides, over == Over.Http2, Options);
                _proxies[(client, tls, over)] = proxy;
            }
            return proxy;
        }
    }

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        foreach (var proxy in _proxies.Values)
        {
            await (await proxy).DisposeAsync();
        }
    }
}

/// <summary>
/// WebSocket (RFC 6455) through the proxy with .NET's ClientWebSocket, for the variants that tunnel: llhttp (on either
/// socket engine), the two HttpClient-based ones and yarp (YARP's own upgrade), in cleartext, with TLS from the client,
/// and with TLS on both sides; the client over HTTP/1.1 (Upgrade) or HTTP/2 (extended CONNECT, RFC 8441, which the
/// proxy forwards as an HTTP/1.1 Upgrade), the origin HTTP/1.1. What goes in comes out
/// byte for byte, message boundaries and close codes included, and an origin that goes away mid-message ends the
/// client's connection rather than completing the message.
/// </summary>
public sealed class WebSocketTests(WebSocketProxies proxies) : IClassFixture<WebSocketProxies>
{
    public static readonly string[] Tunnelling = ["llhttp", "llhttp-runtime-engine", "httpclient", "httpclient-httpcontext", "yarp"];

    public static TheoryData<string, Tls, Over> VariantsAndTls()
    {
        var data = new TheoryData<string, Tls, Over>();
        foreach (var variant in Tunnelling)
        {
            foreach (var tls in Enum.GetValues<Tls>())
            {
                foreach (var over in Enum.GetValues<Over>())
                {
                    data.Add(variant, tls, over);
                }
            }
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(VariantsAndTls))]
    public async Task Text_and_binary_messages_of_0_B_to_1_MiB_come_back_byte_identical(string variant, Tls tls, Over over)
    {
        var proxy = await proxies.GetAsync(variant, tls, over);
        using var socket = await proxy.ConnectAsync("/echo");
        foreach (var size in new[] { 0, 1, 64 * 1024, 1024 * 1024 })
        {
            // Text must be UTF-8 (the receiving side checks it): ASCII letters. Binary: every byte value.
            var text = Wire.Body(size);
            var binary = new byte[size];
            for (var i = 0; i < size; i++)
            {
                binary[i] = (byte)(i * 7);
            }
            foreach (var (type, payload) in new[] { (WebSocketMessageType.Text, text), (WebSocketMessageType.Binary, binary) })
            {
                await socket.SendAsync(payload, type, endOfMessage: true, Wire.Deadline());
                var (receivedType, received) = await ReceiveMessageAsync(socket);
                Assert.Equal(type, receivedType);
                Assert.True(payload.AsSpan().SequenceEqual(received), $"{type} message of {size} B changed on its way ({received.Length} B came back)");
            }
        }
        await socket.CloseAsync(WebSocketCloseStatus.NormalClosure, "done", Wire.Deadline());
    }

    [Theory]
    [MemberData(nameof(VariantsAndTls))]
    public async Task A_fragmented_message_comes_back_whole(string variant, Tls tls, Over over)
    {
        var proxy = await proxies.GetAsync(variant, tls, over);
        using var socket = await proxy.ConnectAsync("/echo");
        var parts = new[] { Wire.Body(10), Wire.Body(70_000), Wire.Body(3) };
        for (var i = 0; i < parts.Length; i++)
        {
            await socket.SendAsync(parts[i], WebSocketMessageType.Binary, endOfMessage: i == parts.Length - 1, Wire.Deadline());
        }
        var (type, received) = await ReceiveMessageAsync(socket);
        Assert.Equal(WebSocketMessageType.Binary, type);
        Assert.Equal(parts.SelectMany(p => p).ToArray(), received);
        await socket.CloseAsync(WebSocketCloseStatus.NormalClosure, null, Wire.Deadline());
    }

    [Theory]
    [MemberData(nameof(VariantsAndTls))]
    public async Task A_close_from_the_client_carries_its_code_to_the_origin_and_back(string variant, Tls tls, Over over)
    {
        var proxy = await proxies.GetAsync(variant, tls, over);
        var opened = proxy.Server.Counters.Tunnels.OpenedCount;
        var toDownstream = proxy.Server.Counters.Tunnels.BytesToDownstream;
        using var socket = await proxy.ConnectAsync("/echo");
        await socket.SendAsync(Wire.Body(100), WebSocketMessageType.Binary, true, Wire.Deadline());
        await ReceiveMessageAsync(socket);
        await socket.CloseAsync((WebSocketCloseStatus)4000, "client says bye", Wire.Deadline());
        Assert.Equal((WebSocketCloseStatus)4000, socket.CloseStatus);
        Assert.Equal("client says bye", socket.CloseStatusDescription);
        Assert.Contains(4000, proxy.Origin.ReceivedCloseCodes);
        // The self-report's counters: one tunnel more, and the bytes it carried (counted once it ended).
        Assert.True(await Until(() => proxy.Server.Counters.Tunnels.BytesToDownstream > toDownstream + 100), "the tunnel's bytes were not counted");
        Assert.Equal(opened + 1, proxy.Server.Counters.Tunnels.OpenedCount);
    }

    [Theory]
    [MemberData(nameof(VariantsAndTls))]
    public async Task A_close_from_the_origin_carries_its_code_to_the_client(string variant, Tls tls, Over over)
    {
        var proxy = await proxies.GetAsync(variant, tls, over);
        using var socket = await proxy.ConnectAsync("/close?code=4001");
        var result = await socket.ReceiveAsync(new byte[1024], Wire.Deadline());
        Assert.Equal(WebSocketMessageType.Close, result.MessageType);
        Assert.Equal((WebSocketCloseStatus)4001, result.CloseStatus);
        Assert.Equal("server closes", result.CloseStatusDescription);
        await socket.CloseOutputAsync((WebSocketCloseStatus)4001, null, Wire.Deadline());
        Assert.Equal(WebSocketState.Closed, socket.State);
    }

    [Theory]
    [MemberData(nameof(VariantsAndTls))]
    public async Task An_origin_gone_mid_message_ends_the_client_connection_and_never_completes_the_message(string variant, Tls tls, Over over)
    {
        var proxy = await proxies.GetAsync(variant, tls, over);
        var id = Guid.NewGuid().ToString("N");
        using var socket = await proxy.ConnectAsync($"/die?id={id}");
        var buffer = new byte[64 * 1024];
        var received = 0;
        // The fragment first, whole; then the origin goes (a reset, which would discard bytes the proxy had not read yet).
        while (received < 1000)
        {
            var result = await socket.ReceiveAsync(buffer, Wire.Deadline());
            Assert.False(result.EndOfMessage, "the message looked whole although only its first fragment was sent");
            received += result.Count;
        }
        proxy.Origin.Die(id);
        var failure = await Record.ExceptionAsync(async () =>
        {
            while (true)
            {
                var result = await socket.ReceiveAsync(buffer, Wire.Deadline());
                received += result.Count;
                Assert.False(result.EndOfMessage, "the message looked whole although the origin went away in its middle");
            }
        });
        Assert.IsType<WebSocketException>(failure);
        Assert.Equal(1000, received);
        Assert.Equal(WebSocketState.Aborted, socket.State);
    }

    [Theory]
    [MemberData(nameof(VariantsAndTls))]
    public async Task A_hundred_tunnels_at_once_each_get_their_own_messages_back(string variant, Tls tls, Over over)
    {
        var proxy = await proxies.GetAsync(variant, tls, over);
        // One deadline for the whole run, not Wire.Cap per step: the hundred handshakes (four TLS handshakes each with
        // TLS on both sides) start together and queue for two cores shared with the rest of the suite, so the last
        // connect may wait its turn for seconds. A tunnel that hangs still fails the test.
        var deadline = Wire.Deadline(Wire.Cap * 6);
        await Task.WhenAll(Enumerable.Range(0, 100).Select(async i =>
        {
            using var socket = await proxy.ConnectAsync("/echo", deadline);
            for (var m = 0; m < 3; m++)
            {
                var payload = Wire.Bytes($"tunnel {i} message {m} " + new string('x', i * 100));
                await socket.SendAsync(payload, WebSocketMessageType.Text, true, deadline);
                var (_, received) = await ReceiveMessageAsync(socket, deadline);
                Assert.Equal(payload, received);
            }
            await socket.CloseAsync(WebSocketCloseStatus.NormalClosure, null, deadline);
        }));
    }

    // RFC 6455 §5.5: control frames may come between the frames of messages. The client sends one every 100 ms while
    // the tunnel is otherwise quiet (ClientWebSocket's keep-alive: unsolicited pongs, which the origin must ignore),
    // then a message: it comes back whole, so the control frames crossed without breaking the stream either way. No
    // pong timeout is set: how fast an answer comes back on a busy machine must not decide the test.
    [Theory]
    [MemberData(nameof(VariantsAndTls))]
    public async Task Control_frames_cross_the_tunnel_between_messages(string variant, Tls tls, Over over)
    {
        var proxy = await proxies.GetAsync(variant, tls, over);
        using var socket = await proxy.ConnectAsync("/echo", configure: options => options.KeepAliveInterval = TimeSpan.FromMilliseconds(100));
        var receive = ReceiveMessageAsync(socket);
        await Task.Delay(TimeSpan.FromSeconds(1));
        var payload = Wire.Bytes("still there");
        await socket.SendAsync(payload, WebSocketMessageType.Binary, true, Wire.Deadline());
        Assert.Equal(payload, (await receive).Payload);
        Assert.Equal(WebSocketState.Open, socket.State);
        await socket.CloseAsync(WebSocketCloseStatus.NormalClosure, null, Wire.Deadline());
    }

    internal static async Task<(WebSocketMessageType Type, byte[] Payload)> ReceiveMessageAsync(ClientWebSocket socket, CancellationToken deadline = default)
    {
        using var message = new MemoryStream();
        var buffer = new byte[64 * 1024];
        while (true)
        {
            var result = await socket.ReceiveAsync(buffer, deadline.CanBeCanceled ? deadline : Wire.Deadline());
            Assert.NotEqual(WebSocketMessageType.Close, result.MessageType);
            message.Write(buffer, 0, result.Count);
            if (result.EndOfMessage)
            {
                return (result.MessageType, message.ToArray());
            }
        }
    }

    internal static async Task<bool> Until(Func<bool> condition)
    {
        var deadline = DateTime.UtcNow + Wire.Cap;
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                return false;
            }
            await Task.Delay(10);
        }
        return true;
    }
}

/// <summary>Proxies with a one-second tunnelIdleTimeout.</summary>
public sealed class IdleTunnelProxies : IAsyncLifetime
{
    private readonly Dictionary<(string, Tls, Over), Task<WebSocketProxy>> _proxies = [];

    public Task<WebSocketProxy> GetAsync(string client, Tls tls, Over over)
    {
        lock (_proxies)
        {
            if (!_proxies.TryGetValue((client, tls, over), out var proxy))
            {
                proxy = WebSocketProxy.StartAsync(client, tls != Tls.None, tls == Tls.BothSides, over == Over.Http2, "--tunnelIdleTimeout", "1");
                _proxies[(client, tls, over)] = proxy;
            }
            return proxy;
        }
    }

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        foreach (var proxy in _proxies.Values)
        {
            await (await proxy).DisposeAsync();
        }
    }
}

/// <summary>A stop ends every open tunnel at the sweep's next pass (a tunnel has no end a graceful stop could wait for).</summary>
public sealed class TunnelStopTests
{
    public static TheoryData<string, Over> Variant()
    {
        var data = new TheoryData<string, Over>();
        foreach (var variant in WebSocketTests.Tunnelling)
        {
            data.Add(variant, Over.Http11);
            data.Add(variant, Over.Http2);
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Variant))]
    public async Task Stopping_the_proxy_ends_an_open_tunnel(string variant, Over over)
    {
        await using var proxy = await WebSocketProxy.StartAsync(variant, tls: false, downstreamTls: false, over == Over.Http2);
        using var socket = await proxy.ConnectAsync("/echo");
        await socket.SendAsync(Wire.Body(10), WebSocketMessageType.Binary, true, Wire.Deadline());
        await WebSocketTests.ReceiveMessageAsync(socket);

        await proxy.StopProxyAsync();

        Assert.Equal(1, proxy.Server.Counters.Tunnels.EndedBy(TunnelEnd.Stopped));
        var failure = await Record.ExceptionAsync(() => socket.ReceiveAsync(new byte[16], Wire.Deadline()));
        Assert.IsType<WebSocketException>(failure);
    }
}

public sealed class TunnelIdleTimeoutTests(IdleTunnelProxies proxies) : IClassFixture<IdleTunnelProxies>
{
    public static TheoryData<string, Tls, Over> VariantsAndTls() => WebSocketTests.VariantsAndTls();

    [Theory]
    [MemberData(nameof(VariantsAndTls))]
    public async Task A_tunnel_that_carries_nothing_for_tunnelIdleTimeout_is_closed(string variant, Tls tls, Over over)
    {
        var proxy = await proxies.GetAsync(variant, tls, over);
        var idled = proxy.Server.Counters.Tunnels.EndedBy(TunnelEnd.IdleTimeout);
        using var socket = await proxy.ConnectAsync("/echo");
        // Silence from both ends (no traffic first: how long that took on a busy machine would decide the test).
        var failure = await Record.ExceptionAsync(() => socket.ReceiveAsync(new byte[16], Wire.Deadline()));
        Assert.IsType<WebSocketException>(failure);
        Assert.True(await WebSocketTests.Until(() => proxy.Server.Counters.Tunnels.EndedBy(TunnelEnd.IdleTimeout) > idled), "the tunnel did not end by its idle timeout");
    }
}
