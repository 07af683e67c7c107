using System.Net;
using System.Net.Sockets;
using System.Text;
using LLRP.Tests.Infrastructure;

namespace LLRP.Tests.Upgrade;

/// <summary>
/// The Upgrade rules a tunnel invites smuggling through, over raw sockets and for every variant (yarp through YARP's own
/// upgrade handling, which the proxy's response feature completes with the shared rule). The proxy forwards Upgrade only for an HTTP/1.1 request with
/// "upgrade" in Connection, no content and no h2c; a tunnel opens only on a 101 to such a request that switches to a
/// protocol it offered; any other 101 is a 502; any other answer is relayed as a plain response (its Upgrade removed,
/// as hop-by-hop) and the connection goes on as HTTP/1.1.
/// </summary>
public sealed class UpgradeSmugglingTests(DefaultProxies farm) : IClassFixture<DefaultProxies>
{
    public static TheoryData<string> Variant => Variants.Each();

    private const string SwitchToWebSocket = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";

    private static string WebSocketUpgrade(string path) =>
        $"GET {path} HTTP/1.1\r\nHost: example.com\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";

    [Theory, MemberData(nameof(Variant))]
    public async Task Upgrade_h2c_is_never_forwarded_and_a_101_to_it_is_a_502(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Raw("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n", closeAfter: true);
        await using var client = await p.ConnectAsync();
        await client.SendAsync("GET /h2c HTTP/1.1\r\nHost: example.com\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n");
        var response = await client.ReadResponseAsync();
        Assert.Equal(502, response?.Status);
        var forwarded = Assert.Single(await p.Downstream.WaitForForwardedAsync(1));
        Assert.Empty(forwarded.Values("Upgrade"));
        Assert.Empty(forwarded.Values("HTTP2-Settings"));
        Assert.DoesNotContain("upgrade", forwarded.Joined("Connection") ?? "", StringComparison.OrdinalIgnoreCase);
    }

    [Theory, MemberData(nameof(Variant))]
    public async Task A_101_to_a_request_that_asked_for_no_upgrade_is_a_502(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Raw(SwitchToWebSocket, closeAfter: true);
        await using var client = await p.ConnectAsync();
        await client.SendAsync("GET /plain HTTP/1.1\r\nHost: example.com\r\n\r\n");
        Assert.Equal(502, (await client.ReadResponseAsync())?.Status);
    }

    [Theory, MemberData(nameof(Variant))]
    public async Task A_101_to_a_protocol_the_client_did_not_offer_is_a_502(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Raw("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n", closeAfter: true);
        await using var client = await p.ConnectAsync();
        await client.SendAsync(WebSocketUpgrade("/offered"));
        Assert.Equal(502, (await client.ReadResponseAsync())?.Status);
    }

    [Theory, MemberData(nameof(Variant))]
    public async Task A_101_without_Upgrade_is_a_502(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Raw("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n\r\n", closeAfter: true);
        await using var client = await p.ConnectAsync();
        await client.SendAsync(WebSocketUpgrade("/no-upgrade-field"));
        Assert.Equal(502, (await client.ReadResponseAsync())?.Status);
    }

    // A 2xx with Upgrade to a request that asked is the upgrade refused (RFC 9110 §7.8: a server may ignore Upgrade):
    // relayed as a plain response, Upgrade removed, and the bytes that followed the request are the next request.
    [Theory, MemberData(nameof(Variant))]
    public async Task A_refused_upgrade_is_relayed_as_a_plain_response_and_the_next_request_is_read(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = r => r.Target == "/refused"
            ? DownstreamReply.Ok("no", "Upgrade: websocket\r\nConnection: Upgrade\r\n")
            : DownstreamReply.Ok("second");
        await using var client = await p.ConnectAsync();
        await client.SendAsync(WebSocketUpgrade("/refused") + "GET /second HTTP/1.1\r\nHost: example.com\r\n\r\n");
        var first = await client.ReadResponseAsync();
        Assert.Equal(200, first?.Status);
        Assert.Equal("no", first!.BodyText);
        Assert.Null(first.Header("Upgrade"));
        var second = await client.ReadResponseAsync();
        Assert.Equal("second", second?.BodyText);
        var forwarded = await p.Downstream.WaitForForwardedAsync(2);
        Assert.Equal(["/refused", "/second"], forwarded.Select(r => r.Target));
        Assert.Equal("websocket", forwarded[0].Joined("Upgrade"));
    }

    // The rule for an upgrade request with content: the Upgrade is ignored and removed, and the request with its body is
    // forwarded as a plain one, so a 101 to it is a 502 (where the body ends and a tunnel would begin is never in question).
    [Theory, MemberData(nameof(Variant))]
    public async Task An_upgrade_request_with_a_body_is_forwarded_as_a_plain_request(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Raw(SwitchToWebSocket, closeAfter: true);
        await using var client = await p.ConnectAsync();
        await client.SendAsync("POST /with-body HTTP/1.1\r\nHost: example.com\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: 5\r\n\r\nhello");
        Assert.Equal(502, (await client.ReadResponseAsync())?.Status);
        var forwarded = Assert.Single(await p.Downstream.WaitForForwardedAsync(1));
        Assert.Empty(forwarded.Values("Upgrade"));
        Assert.Equal("hello", Wire.Text(forwarded.Body));
    }

    // RFC 9110 §7.8: a server MUST ignore Upgrade in an HTTP/1.0 request.
    [Theory, MemberData(nameof(Variant))]
    public async Task Upgrade_over_HTTP_1_0_is_ignored_and_removed(string variant)
    {
        var p = await farm.GetAsync(variant);
        await using var client = await p.ConnectAsync();
        await client.SendAsync("GET /old HTTP/1.0\r\nHost: example.com\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n");
        Assert.Equal(200, (await client.ReadResponseAsync())?.Status);
        var forwarded = Assert.Single(await p.Downstream.WaitForForwardedAsync(1));
        Assert.Empty(forwarded.Values("Upgrade"));
    }

    [Theory, MemberData(nameof(Variant))]
    public async Task An_upgrade_request_is_forwarded_with_Connection_upgrade_and_its_Upgrade(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Ok("refused");
        await using var client = await p.ConnectAsync();
        await client.SendAsync(WebSocketUpgrade("/asks"));
        Assert.Equal(200, (await client.ReadResponseAsync())?.Status);
        var forwarded = Assert.Single(await p.Downstream.WaitForForwardedAsync(1));
        Assert.Equal("websocket", forwarded.Joined("Upgrade"));
        Assert.Contains("upgrade", forwarded.Joined("Connection") ?? "", StringComparison.OrdinalIgnoreCase);
    }
}

/// <summary>
/// The tunnel itself over raw sockets, against a raw origin that switches to "websocket" and then speaks bytes, for
/// the cleartext variants that tunnel: bytes the client sent right after its upgrade request are the tunnel's first
/// bytes, never a request; half-closes cross the tunnel where the transports allow.
/// </summary>
public sealed class TunnelTests : IAsyncLifetime
{
    private readonly RawTunnelOrigin _origin = new();
    private readonly Dictionary<string, Task<Microsoft.AspNetCore.Builder.WebApplication>> _proxies = [];

    public static TheoryData<string> Tunnelling => ["llhttp", "llhttp-runtime-engine", "httpclient", "httpclient-httpcontext", "yarp"];

    public static TheoryData<string> HalfClosing => ["llhttp", "llhttp-runtime-engine"];

    private async Task<Uri> ProxyAsync(string variant)
    {
        Task<Microsoft.AspNetCore.Builder.WebApplication> start;
        lock (_proxies)
        {
            if (!_proxies.TryGetValue(variant, out start!))
            {
                start = StartAsync(variant);
                _proxies[variant] = start;
            }
        }
        return new Uri(LLRP.Hosting.ProxyHost.Addresses(await start).First());

        async Task<Microsoft.AspNetCore.Builder.WebApplication> StartAsync(string name)
        {
            var app = LLRP.Hosting.ProxyHost.Build(["--urls", "http://127.0.0.1:0", "--downstream", $"http://127.0.0.1:{_origin.Port}", .. Variants.Get(name).Arguments]);
            await app.StartAsync(Wire.Deadline(TimeSpan.FromSeconds(30)));
            return app;
        }
    }

    [Theory, MemberData(nameof(Tunnelling))]
    public async Task Bytes_after_an_accepted_upgrade_request_go_through_the_tunnel_unparsed(string variant)
    {
        using var client = await ConnectAsync(await ProxyAsync(variant));
        var stream = client.GetStream();
        const string smuggled = "GET /smuggled HTTP/1.1\r\nHost: example.com\r\n\r\n";
        await stream.WriteAsync(Wire.Bytes(Upgrade("/echo") + smuggled), Wire.Deadline());
        var head = await ReadHeadAsync(stream);
        Assert.StartsWith("HTTP/1.1 101 ", head, StringComparison.Ordinal);
        Assert.Contains("\r\nUpgrade: websocket\r\n", head, StringComparison.OrdinalIgnoreCase);
        Assert.Equal(smuggled, await ReadExactlyAsync(stream, smuggled.Length));
        // The origin saw one request head, the upgrade, and the rest as tunnel bytes.
        var seen = Assert.Single(_origin.Heads, h => h.Contains("/echo", StringComparison.Ordinal) && h.Contains(variant + "-marker", StringComparison.Ordinal));
        Assert.Contains("\r\nUpgrade: websocket\r\n", seen, StringComparison.OrdinalIgnoreCase);
        Assert.DoesNotContain(_origin.Heads, h => h.Contains("/smuggled", StringComparison.Ordinal));
        string Upgrade(string path) =>
            $"GET {path} HTTP/1.1\r\nHost: example.com\r\nX-Marker: {variant}-marker\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n";
    }

    [Theory, MemberData(nameof(Tunnelling))]
    public async Task Bytes_the_origin_sent_with_its_101_head_reach_the_client_first(string variant)
    {
        using var client = await ConnectAsync(await ProxyAsync(variant));
        var stream = client.GetStream();
        await stream.WriteAsync(Wire.Bytes("GET /greet HTTP/1.1\r\nHost: example.com\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"), Wire.Deadline());
        await ReadHeadAsync(stream);
        Assert.Equal(RawTunnelOrigin.Greeting, await ReadExactlyAsync(stream, RawTunnelOrigin.Greeting.Length));
        await stream.WriteAsync(Wire.Bytes("ping"), Wire.Deadline());
        Assert.Equal("ping", await ReadExactlyAsync(stream, 4));
    }

    [Theory, MemberData(nameof(HalfClosing))]
    public async Task The_client_end_of_stream_reaches_the_origin_as_a_half_close_and_its_answer_still_arrives(string variant)
    {
        using var client = await ConnectAsync(await ProxyAsync(variant));
        var stream = client.GetStream();
        await stream.WriteAsync(Wire.Bytes("GET /echo HTTP/1.1\r\nHost: example.com\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nabc"), Wire.Deadline());
        await ReadHeadAsync(stream);
        Assert.Equal("abc", await ReadExactlyAsync(stream, 3));
        client.Client.Shutdown(SocketShutdown.Send);
        Assert.Equal(RawTunnelOrigin.AfterEndOfStream, await ReadToEndAsync(stream));
    }

    [Fact]
    public async Task The_origin_end_of_stream_reaches_the_client_as_a_half_close_and_the_client_may_still_send()
    {
        using var client = await ConnectAsync(await ProxyAsync("llhttp"));
        var stream = client.GetStream();
        await stream.WriteAsync(Wire.Bytes("GET /bye HTTP/1.1\r\nHost: example.com\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"), Wire.Deadline());
        await ReadHeadAsync(stream);
        Assert.Equal("bye", await ReadToEndAsync(stream));
        await stream.WriteAsync(Wire.Bytes("late words"), Wire.Deadline());
        client.Client.Shutdown(SocketShutdown.Send);
        Assert.Equal("late words", await _origin.AfterBye.Task.WaitAsync(Wire.Cap));
    }

    private static async Task<TcpClient> ConnectAsync(Uri proxy)
    {
        var client = new TcpClient();
        await client.ConnectAsync(IPAddress.Loopback, proxy.Port, Wire.Deadline());
        return client;
    }

    internal static async Task<string> ReadHeadAsync(Stream stream)
    {
        var head = new StringBuilder();
        var one = new byte[1];
        while (!head.ToString().EndsWith("\r\n\r\n", StringComparison.Ordinal))
        {
            if (await stream.ReadAsync(one, Wire.Deadline()) == 0)
            {
                throw new IOException($"closed before the end of a head: {head}");
            }
            head.Append((char)one[0]);
        }
        return head.ToString();
    }

    internal static async Task<string> ReadExactlyAsync(Stream stream, int count)
    {
        var buffer = new byte[count];
        await stream.ReadExactlyAsync(buffer, Wire.Deadline());
        return Wire.Text(buffer);
    }

    internal static async Task<string> ReadToEndAsync(Stream stream)
    {
        using var all = new MemoryStream();
        await stream.CopyToAsync(all, Wire.Deadline());
        return Wire.Text(all.ToArray());
    }

    public Task InitializeAsync()
    {
        _origin.Start();
        return Task.CompletedTask;
    }

    public async Task DisposeAsync()
    {
        foreach (var app in _proxies.Values)
        {
            var started = await app;
            await started.StopAsync(Wire.Deadline());
            await started.DisposeAsync();
        }
        _origin.Dispose();
    }
}

/// <summary>
/// A raw TCP origin that answers every request head with 101 to "websocket" (/greet: with <see cref="Greeting"/> in
/// the same send), then by path: /echo and /greet send back every
/// byte until the proxy's end of stream and then <see cref="AfterEndOfStream"/> before it closes; /bye sends "bye",
/// ends its sending side (a FIN) and reads on until the proxy's end of stream (<see cref="AfterBye"/>).
/// </summary>
internal sealed class RawTunnelOrigin : IDisposable
{
    public const string AfterEndOfStream = "answer after your end of stream";

    public const string Greeting = "origin speaks first";

    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly CancellationTokenSource _stop = new();

    public int Port { get; private set; }

    public System.Collections.Concurrent.ConcurrentQueue<string> Heads { get; } = new();

    public TaskCompletionSource<string> AfterBye { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public void Start()
    {
        _listener.Start();
        Port = ((IPEndPoint)_listener.LocalEndpoint).Port;
        _ = AcceptAsync();
    }

    private async Task AcceptAsync()
    {
        while (!_stop.IsCancellationRequested)
        {
            Socket socket;
            try
            {
                socket = await _listener.AcceptSocketAsync(_stop.Token);
            }
            catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
            {
                return;
            }
            _ = ServeAsync(socket);
        }
    }

    private async Task ServeAsync(Socket socket)
    {
        using var _ = socket;
        try
        {
            using var stream = new NetworkStream(socket, ownsSocket: false);
            var head = await TunnelTests.ReadHeadAsync(stream);
            Heads.Enqueue(head);
            // /greet: the origin's first bytes leave in the same send as the 101 head.
            var greeting = head.StartsWith("GET /greet ", StringComparison.Ordinal) ? Greeting : "";
            await stream.WriteAsync(Wire.Bytes("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n" + greeting));
            var buffer = new byte[16 * 1024];
            if (head.StartsWith("GET /bye ", StringComparison.Ordinal))
            {
                await stream.WriteAsync(Wire.Bytes("bye"));
                socket.Shutdown(SocketShutdown.Send);
                AfterBye.TrySetResult(await TunnelTests.ReadToEndAsync(stream));
                return;
            }
            int read;
            while ((read = await stream.ReadAsync(buffer, _stop.Token)) > 0)
            {
                await stream.WriteAsync(buffer.AsMemory(0, read), _stop.Token);
            }
            await stream.WriteAsync(Wire.Bytes(AfterEndOfStream));
            socket.Shutdown(SocketShutdown.Send);
        }
        catch (Exception e) when (e is IOException or SocketException or OperationCanceledException or ObjectDisposedException)
        {
            // The proxy went away, or the test ended.
        }
    }

    public void Dispose()
    {
        _stop.Cancel();
        _listener.Stop();
        _stop.Dispose();
    }
}
