using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text;
using LLRP.Tests.Infrastructure;

namespace LLRP.Tests.Upgrade;

/// <summary>One proxy per tunnelling variant, h2c with prior knowledge, in front of one <see cref="HandshakeOrigin"/>.</summary>
public class Http2TunnelProxies : IAsyncLifetime
{
    private readonly Dictionary<string, Task<Microsoft.AspNetCore.Builder.WebApplication>> _proxies = [];

    public HandshakeOrigin Origin { get; } = new();

    /// <summary>The proxies' options beside the listener, the downstream and the variant's.</summary>
    protected virtual string[] Options => [];

    internal async Task<(Uri Url, LLRP.Connections.ProxyServer Server)> GetAsync(string variant)
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
        var app = await start;
        return (new Uri(LLRP.Hosting.ProxyHost.Addresses(app).First()),
            Microsoft.Extensions.DependencyInjection.ServiceProviderServiceExtensions.GetRequiredService<LLRP.Connections.ProxyServer>(app.Services));

        async Task<Microsoft.AspNetCore.Builder.WebApplication> StartAsync(string name)
        {
            var app = LLRP.Hosting.ProxyHost.Build(["--urls", "http://127.0.0.1:0", "--protocols", "h2", "--downstream", $"http://127.0.0.1:{Origin.Port}",
                .. Variants.Get(name).Arguments, .. Options]);
            await app.StartAsync(Wire.Deadline(TimeSpan.FromSeconds(30)));
            return app;
        }
    }

    public Task InitializeAsync()
    {
        Origin.Start();
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
        Origin.Dispose();
    }
}

/// <summary>
/// WebSocket over the proxy's own HTTP/2 front end (RFC 8441) with raw frames, for every variant that tunnels: what the
/// front end advertises, the extended CONNECT forwarded as an HTTP/1.1 WebSocket upgrade with a key the proxy makes,
/// the 101 turned into a 200 that leaves the stream open (after the proxy checked the Accept), the stream's DATA as the
/// tunnel both ways with END_STREAM as the half-close, and what is refused: :protocol without CONNECT or without its
/// pseudo-headers (malformed, RST_STREAM PROTOCOL_ERROR), a protocol other than websocket (501), a plain CONNECT (405),
/// a 101 whose Sec-WebSocket-Accept is not the key's (502). The connection carries other streams throughout.
/// </summary>
public sealed class Http2WebSocketTests(Http2TunnelProxies proxies) : IClassFixture<Http2TunnelProxies>
{
    public static TheoryData<string> Tunnelling => [.. WebSocketTests.Tunnelling];

    private const ushort SettingsEnableConnectProtocol = 0x8;

    private static int s_ids;

    private static string NewId() => Interlocked.Increment(ref s_ids).ToString(System.Globalization.CultureInfo.InvariantCulture);

    private static byte[] WebSocketConnect(string path, params (string Name, string Value)[] fields) =>
        H2Connection.Block([(":method", "CONNECT"), (":protocol", "websocket"), (":scheme", "http"), (":path", path), (":authority", "h2.example"),
            ("sec-websocket-version", "13"), .. fields]);

    private static byte[] Headers(int streamId, byte[] block, bool endStream = false) =>
        H2Connection.Frame(H2Frame.Headers, (byte)(H2Frame.EndHeaders | (endStream ? H2Frame.EndStream : 0)), streamId, block);

    private static byte[] Data(int streamId, string text, bool endStream = false) =>
        H2Connection.Frame(H2Frame.Data, endStream ? H2Frame.EndStream : (byte)0, streamId, Wire.Bytes(text));

    // The stream's next HEADERS, DATA or RST_STREAM; other streams' frames and the connection's are skipped.
    private static async Task<H2Frame> NextOnAsync(H2Connection h2, int streamId)
    {
        while (true)
        {
            var frame = await h2.ReadFrameAsync() ?? throw new IOException($"the connection ended while stream {streamId} waited");
            if (frame.StreamId == streamId && frame.Type is H2Frame.Headers or H2Frame.Data or H2Frame.RstStream)
            {
                return frame;
            }
        }
    }

    // DATA on the stream until <count> bytes came, or the stream ended: the text and whether END_STREAM came.
    private static async Task<(string Text, bool Ended)> ReadDataAsync(H2Connection h2, int streamId, int count = int.MaxValue)
    {
        var text = new StringBuilder();
        while (text.Length < count)
        {
            var frame = await NextOnAsync(h2, streamId);
            Assert.True(frame.Type == H2Frame.Data, $"expected DATA on stream {streamId}, got {frame}");
            text.Append(Wire.Text(frame.Payload));
            if ((frame.Flags & H2Frame.EndStream) != 0)
            {
                return (text.ToString(), true);
            }
        }
        return (text.ToString(), false);
    }

    private static string? Field(H2Frame headers, string name) => headers.Fields?.FirstOrDefault(f => f.Name == name).Value;

    /// <summary>A GET on <paramref name="streamId"/> is answered 200 in full: the connection still serves requests.</summary>
    private static async Task AssertServesAsync(H2Connection h2, int streamId)
    {
        await h2.SendRequestAsync(streamId, h2.RequestBlock("GET", "/plain"));
        var response = await h2.ReadResponseAsync(streamId);
        Assert.True(response.Status == 200 && response.Complete && Wire.Text(response.Body) == "plain", $"stream {streamId} was not served: {response.Describe()}");
    }

    [Theory, MemberData(nameof(Tunnelling))]
    public async Task The_front_end_advertises_SETTINGS_ENABLE_CONNECT_PROTOCOL(string variant)
    {
        var (url, _) = await proxies.GetAsync(variant);
        await using var h2 = await H2Connection.OpenAsync(url);
        var payload = h2.ProxySettings!.Payload;
        var pairs = Enumerable.Range(0, payload.Length / 6)
            .Select(i => ((payload[6 * i] << 8) | payload[(6 * i) + 1], System.Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(payload.AsSpan((6 * i) + 2))));
        Assert.Contains((SettingsEnableConnectProtocol, 1u), pairs);
    }

    [Theory, MemberData(nameof(Tunnelling))]
    public async Task An_extended_connect_is_forwarded_as_a_WebSocket_upgrade_and_the_stream_is_a_tunnel_beside_other_streams(string variant)
    {
        var (url, server) = await proxies.GetAsync(variant);
        var opened = server.Counters.Tunnels.OpenedCount;
        var id = NewId();
        await using var h2 = await H2Connection.OpenAsync(url);
        // A key from the client is not used over HTTP/2 (RFC 8441 §5): the proxy sends its own.
        await h2.WriteRawAsync(Headers(1, WebSocketConnect($"/echo?id={id}", ("sec-websocket-protocol", "chat"), ("sec-websocket-key", "Y2xpZW50IGtleSBpZ25vcmVk"), ("origin", "http://h2.example"))));

        var head = await NextOnAsync(h2, 1);
        Assert.True(head.Type == H2Frame.Headers && head.Status == 200, $"expected a 200, got {head}");
        Assert.True((head.Flags & H2Frame.EndStream) == 0, "the 200 ended the stream the tunnel runs on");
        Assert.Equal("chat", Field(head, "sec-websocket-protocol"));
        Assert.DoesNotContain(head.Fields!, f => f.Name is "sec-websocket-accept" or "upgrade" or "connection");

        // The origin saw the HTTP/1.1 upgrade an HTTP/1.1 client's handshake is, with a key the proxy made.
        var forwarded = await proxies.Origin.HeadAsync(id);
        Assert.StartsWith($"GET /echo?id={id} HTTP/1.1\r\n", forwarded, StringComparison.Ordinal);
        Assert.Contains("\r\nHost: h2.example\r\n", forwarded, StringComparison.OrdinalIgnoreCase);
        Assert.Contains("\r\nUpgrade: websocket\r\n", forwarded, StringComparison.OrdinalIgnoreCase);
        Assert.Matches("(?im)^Connection:.*\\bupgrade\\b", forwarded);
        Assert.Matches("(?im)^Sec-WebSocket-Version: 13\r$", forwarded);
        Assert.Matches("(?im)^Sec-WebSocket-Protocol: chat\r$", forwarded);
        Assert.Matches("(?im)^Origin: http://h2.example\r$", forwarded);
        var key = Assert.Single(HandshakeOrigin.Values(forwarded, "Sec-WebSocket-Key"));
        Assert.NotEqual("Y2xpZW50IGtleSBpZ25vcmVk", key);
        Assert.Equal(16, Convert.FromBase64String(key).Length);

        await h2.WriteRawAsync(Data(1, "hello"));
        Assert.Equal(("hello", false), await ReadDataAsync(h2, 1, 5));

        // Another stream on the same connection while the tunnel is open.
        await AssertServesAsync(h2, 3);
        await h2.WriteRawAsync(Data(1, "still here"));
        Assert.Equal(("still here", false), await ReadDataAsync(h2, 1, 10));

        if (variant != "yarp")
        {
            // The client's END_STREAM is the origin's end of stream: a half-close where the downstream connection can
            // be half-closed (llhttp's), the origin's answer after it still arriving, then END_STREAM; both ways at once
            // where it cannot (HttpClient's connection stream), END_STREAM then too. YARP's relay is left out: it
            // carries no half-close to the origin (over HTTP/1.1 too) and ends when both directions have.
            await h2.WriteRawAsync(Data(1, "", endStream: true));
            var (text, ended) = await ReadDataAsync(h2, 1);
            Assert.True(ended, "the tunnel did not end the stream");
            if (variant.StartsWith("llhttp", StringComparison.Ordinal))
            {
                Assert.Equal(HandshakeOrigin.AfterEndOfStream, text);
            }
            Assert.True(await WebSocketTests.Until(() => server.Counters.Tunnels.OpenedCount > opened), "the tunnel was not counted");
        }
        await AssertServesAsync(h2, 5);
    }

    [Theory, MemberData(nameof(Tunnelling))]
    public async Task A_101_whose_Sec_WebSocket_Accept_is_wrong_or_missing_is_a_502_and_no_tunnel_opens(string variant)
    {
        var (url, server) = await proxies.GetAsync(variant);
        var opened = server.Counters.Tunnels.OpenedCount;
        await using var h2 = await H2Connection.OpenAsync(url);
        var stream = 1;
        foreach (var path in new[] { "/wrong-accept", "/no-accept", "/two-accepts" })
        {
            var id = NewId();
            await h2.WriteRawAsync(Headers(stream, WebSocketConnect($"{path}?id={id}")));
            var response = await h2.ReadResponseAsync(stream);
            Assert.True(response.Status == 502 && response.Complete, $"{path}: {response.Describe()}");
            await proxies.Origin.HeadAsync(id);
            stream += 2;
        }
        Assert.Equal(opened, server.Counters.Tunnels.OpenedCount);
        await AssertServesAsync(h2, stream);
    }

    [Theory, MemberData(nameof(Tunnelling))]
    public async Task A_refused_upgrade_is_relayed_with_END_STREAM_and_the_connection_carries_on(string variant)
    {
        var (url, _) = await proxies.GetAsync(variant);
        await using var h2 = await H2Connection.OpenAsync(url);
        var id = NewId();
        await h2.WriteRawAsync(Headers(1, WebSocketConnect($"/refuse?id={id}")));
        var response = await h2.ReadResponseAsync(1);
        Assert.True(response.Status == 403 && response.Complete, response.Describe());
        Assert.Equal("no", Wire.Text(response.Body));
        await AssertServesAsync(h2, 3);
    }

    [Theory, MemberData(nameof(Tunnelling))]
    public async Task RST_STREAM_from_the_client_mid_tunnel_ends_the_downstream_connection(string variant)
    {
        var (url, server) = await proxies.GetAsync(variant);
        var failed = server.Counters.Tunnels.EndedBy(LLRP.Connections.TunnelEnd.Error) + server.Counters.Tunnels.EndedBy(LLRP.Connections.TunnelEnd.ClientClosed);
        await using var h2 = await H2Connection.OpenAsync(url);
        var id = NewId();
        await h2.WriteRawAsync(Headers(1, WebSocketConnect($"/echo?id={id}")));
        Assert.Equal(200, (await NextOnAsync(h2, 1)).Status);
        await h2.WriteRawAsync(Data(1, "ping"));
        Assert.Equal(("ping", false), await ReadDataAsync(h2, 1, 4));

        await h2.WriteRawAsync(H2Connection.Reset(1, H2Frame.Cancel));

        Assert.True(await proxies.Origin.EndedAsync(id), "the downstream connection outlived the client's RST_STREAM");
        Assert.True(await WebSocketTests.Until(() =>
            server.Counters.Tunnels.EndedBy(LLRP.Connections.TunnelEnd.Error) + server.Counters.Tunnels.EndedBy(LLRP.Connections.TunnelEnd.ClientClosed) > failed), "the tunnel's end was not counted");
        await AssertServesAsync(h2, 3);
    }

    [Theory, MemberData(nameof(Tunnelling))]
    public async Task A_protocol_other_than_websocket_is_answered_501_and_plain_CONNECT_405_neither_forwarded(string variant)
    {
        var (url, _) = await proxies.GetAsync(variant);
        await using var h2 = await H2Connection.OpenAsync(url);
        var id = NewId();
        await h2.WriteRawAsync(Headers(1, H2Connection.Block((":method", "CONNECT"), (":protocol", "connect-udp"), (":scheme", "http"),
            (":path", $"/udp?id={id}"), (":authority", "h2.example"))));
        var other = await h2.ReadResponseAsync(1);
        Assert.True(other.Status == 501 && other.Complete, other.Describe());

        await h2.WriteRawAsync(Headers(3, H2Connection.Block((":method", "CONNECT"), (":authority", "h2.example:443")), endStream: true));
        var plain = await h2.ReadResponseAsync(3);
        Assert.True(plain.Status == 405 && plain.Complete, plain.Describe());

        await AssertServesAsync(h2, 5);
        Assert.False(proxies.Origin.Saw(id), "a refused CONNECT reached the origin");
    }

    public static TheoryData<string, string> Malformed() => new()
    {
        { ":protocol on GET", "GET" },
        { "extended CONNECT without :path", "no-path" },
        { "extended CONNECT without :scheme", "no-scheme" },
    };

    // RFC 8441 §4, RFC 9113 §8.1.1: a malformed request is a stream error PROTOCOL_ERROR; the connection goes on.
    [Theory, MemberData(nameof(Malformed))]
    public async Task A_malformed_extended_connect_is_a_stream_PROTOCOL_ERROR(string rule, string shape)
    {
        var (url, _) = await proxies.GetAsync("llhttp");
        await using var h2 = await H2Connection.OpenAsync(url);
        (string, string)[] fields = shape switch
        {
            "GET" => [(":method", "GET"), (":protocol", "websocket"), (":scheme", "http"), (":path", "/"), (":authority", "h2.example")],
            "no-path" => [(":method", "CONNECT"), (":protocol", "websocket"), (":scheme", "http"), (":authority", "h2.example")],
            _ => [(":method", "CONNECT"), (":protocol", "websocket"), (":path", "/"), (":authority", "h2.example")],
        };
        await h2.WriteRawAsync(Headers(1, H2Connection.Block(fields)));
        var frame = await NextOnAsync(h2, 1);
        Assert.True(frame.Type == H2Frame.RstStream && frame.ErrorCode == H2Frame.ProtocolError, $"{rule}: {frame}");
        await AssertServesAsync(h2, 3);
    }
}

/// <summary>
/// The same proxies with a two-second tunnelIdleTimeout: short for the tests' sake, and still long against the proxy's
/// first read of bytes the origin sent with its 101, which the window test needs to come before the idle end.
/// </summary>
public sealed class Http2IdleTunnelProxies : Http2TunnelProxies
{
    protected override string[] Options => ["--tunnelIdleTimeout", "2"];
}

/// <summary>
/// tunnelIdleTimeout on a tunnel that is an HTTP/2 stream, kept by the HTTP/2 connection's deadline sweep: the stream
/// ends (END_STREAM; RST_STREAM CANCEL when the client's window holds bytes back, which could not be delivered) and the
/// connection carries on. No timing is asserted: each wait is bounded by the cap only.
/// </summary>
public sealed class Http2TunnelIdleTests(Http2IdleTunnelProxies proxies) : IClassFixture<Http2IdleTunnelProxies>
{
    public static TheoryData<string> Tunnelling => [.. WebSocketTests.Tunnelling];

    private static byte[] Connect(string path) =>
        H2Connection.Frame(H2Frame.Headers, H2Frame.EndHeaders, 1, H2Connection.Block((":method", "CONNECT"), (":protocol", "websocket"), (":scheme", "http"),
            (":path", path), (":authority", "h2.example"), ("sec-websocket-version", "13")));

    private static async Task<H2Frame> NextOnAsync(H2Connection h2, int streamId)
    {
        while (true)
        {
            var frame = await h2.ReadFrameAsync() ?? throw new IOException($"the connection ended while stream {streamId} waited");
            if (frame.StreamId == streamId && frame.Type is H2Frame.Headers or H2Frame.Data or H2Frame.RstStream)
            {
                return frame;
            }
        }
    }

    private static async Task AssertServesAsync(H2Connection h2, int streamId, bool openWindow = false)
    {
        await h2.SendRequestAsync(streamId, h2.RequestBlock("GET", "/plain"));
        if (openWindow)
        {
            await h2.WriteRawAsync(H2Connection.WindowUpdate(streamId, 1000));
        }
        var response = await h2.ReadResponseAsync(streamId);
        Assert.True(response.Status == 200 && response.Complete, $"stream {streamId} was not served: {response.Describe()}");
    }

    [Theory, MemberData(nameof(Tunnelling))]
    public async Task A_tunnel_stream_that_carries_nothing_ends_with_END_STREAM(string variant)
    {
        var (url, server) = await proxies.GetAsync(variant);
        var idled = server.Counters.Tunnels.EndedBy(LLRP.Connections.TunnelEnd.IdleTimeout);
        await using var h2 = await H2Connection.OpenAsync(url);
        await h2.WriteRawAsync(Connect("/echo"));
        Assert.Equal(200, (await NextOnAsync(h2, 1)).Status);

        var end = await NextOnAsync(h2, 1);
        Assert.True(end.Type == H2Frame.Data && end.Payload.Length == 0 && (end.Flags & H2Frame.EndStream) != 0, $"expected an empty DATA with END_STREAM, got {end}");
        Assert.True(await WebSocketTests.Until(() => server.Counters.Tunnels.EndedBy(LLRP.Connections.TunnelEnd.IdleTimeout) > idled), "the tunnel did not end by its idle timeout");
        await AssertServesAsync(h2, 3);
    }

    [Theory, MemberData(nameof(Tunnelling))]
    public async Task A_tunnel_stream_whose_client_window_holds_bytes_back_is_reset_when_it_idles(string variant)
    {
        var (url, _) = await proxies.GetAsync(variant);
        // SETTINGS_INITIAL_WINDOW_SIZE 0: the proxy may send no DATA on any stream until a WINDOW_UPDATE opens it.
        // The origin's first bytes come with its 101 (/greet), so they wait for the window from the tunnel's start.
        await using var h2 = await H2Connection.OpenAsync(url, tls: false, settings: [(H2Connection.SettingsInitialWindowSize, 0)]);
        await h2.WriteRawAsync(Connect("/greet"));
        Assert.Equal(200, (await NextOnAsync(h2, 1)).Status);

        var end = await NextOnAsync(h2, 1);
        Assert.True(end.Type == H2Frame.RstStream && end.ErrorCode == H2Frame.Cancel, $"expected RST_STREAM CANCEL, got {end}");
        await AssertServesAsync(h2, 3, openWindow: true);
    }
}

/// <summary>
/// A raw HTTP/1.1 origin for <see cref="Http2WebSocketTests"/>. A request without Upgrade gets 200 "plain". An upgrade
/// request, by path (its ?id= names it to the test): /echo answers 101 with the Sec-WebSocket-Accept RFC 6455 §4.2.2
/// derives from the key (and Sec-WebSocket-Protocol: chat when offered), echoes every byte until the proxy's end of
/// stream, then sends <see cref="AfterEndOfStream"/> and closes; /greet does the same after sending <see cref="Greeting"/>
/// in the same write as its 101; /wrong-accept, /no-accept and /two-accepts answer 101
/// with a wrong Accept, none, or the right one twice; /refuse answers 403 "no".
/// </summary>
public sealed class HandshakeOrigin : IDisposable
{
    public const string AfterEndOfStream = "answer after your end of stream";

    public const string Greeting = "origin speaks first";

    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly CancellationTokenSource _stop = new();
    private readonly ConcurrentDictionary<string, TaskCompletionSource<string>> _heads = new();
    private readonly ConcurrentDictionary<string, TaskCompletionSource<string>> _ended = new();

    public int Port { get; private set; }

    public void Start()
    {
        _listener.Start();
        Port = ((IPEndPoint)_listener.LocalEndpoint).Port;
        _ = AcceptAsync();
    }

    /// <summary>The head of the request named <paramref name="id"/>, once it arrived (within the cap).</summary>
    public Task<string> HeadAsync(string id) => Slot(_heads, id).Task.WaitAsync(Wire.Cap);

    public bool Saw(string id) => _heads.TryGetValue(id, out var head) && head.Task.IsCompleted;

    /// <summary>Whether the tunnel of request <paramref name="id"/> ended on the origin's side within the cap.</summary>
    public async Task<bool> EndedAsync(string id)
    {
        try
        {
            await Slot(_ended, id).Task.WaitAsync(Wire.Cap);
            return true;
        }
        catch (TimeoutException)
        {
            return false;
        }
    }

    public static IEnumerable<string> Values(string head, string name) =>
        head.Split("\r\n").Where(l => l.StartsWith(name + ":", StringComparison.OrdinalIgnoreCase)).Select(l => l[(name.Length + 1)..].Trim());

    private static TaskCompletionSource<string> Slot(ConcurrentDictionary<string, TaskCompletionSource<string>> slots, string id) =>
        slots.GetOrAdd(id, _ => new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously));

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
        string? id = null;
        try
        {
            using var stream = new NetworkStream(socket, ownsSocket: false);
            while (true)
            {
                var head = await TunnelTests.ReadHeadAsync(stream);
                var target = head.Split(' ')[1];
                var query = target.IndexOf("?id=", StringComparison.Ordinal);
                id = query >= 0 ? target[(query + 4)..] : null;
                if (id is not null)
                {
                    Slot(_heads, id).TrySetResult(head);
                }
                if (!Values(head, "Upgrade").Any())
                {
                    await stream.WriteAsync(Wire.Bytes("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nplain"), _stop.Token);
                    continue;
                }
                var path = query >= 0 ? target[..query] : target;
                var accept = Accept(Values(head, "Sec-WebSocket-Key").FirstOrDefault() ?? "");
                var protocol = Values(head, "Sec-WebSocket-Protocol").Any() ? "Sec-WebSocket-Protocol: chat\r\n" : "";
                const string Switch = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n";
                var answer = path switch
                {
                    "/echo" => $"{Switch}Sec-WebSocket-Accept: {accept}\r\n{protocol}\r\n",
                    "/greet" => $"{Switch}Sec-WebSocket-Accept: {accept}\r\n\r\n{Greeting}",
                    "/wrong-accept" => $"{Switch}Sec-WebSocket-Accept: {Accept("AAAAAAAAAAAAAAAAAAAAAA==")}\r\n\r\n",
                    "/no-accept" => $"{Switch}\r\n",
                    "/two-accepts" => $"{Switch}Sec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Accept: {accept}\r\n\r\n",
                    _ => "HTTP/1.1 403 Forbidden\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno",
                };
                await stream.WriteAsync(Wire.Bytes(answer), _stop.Token);
                if (path is not ("/echo" or "/greet"))
                {
                    return;
                }
                var buffer = new byte[16 * 1024];
                int read;
                while ((read = await stream.ReadAsync(buffer, _stop.Token)) > 0)
                {
                    await stream.WriteAsync(buffer.AsMemory(0, read), _stop.Token);
                }
                await stream.WriteAsync(Wire.Bytes(AfterEndOfStream), _stop.Token);
                socket.Shutdown(SocketShutdown.Send);
                Slot(_ended, id!).TrySetResult(AfterEndOfStream);
                return;
            }
        }
        catch (Exception e) when (e is IOException or SocketException or OperationCanceledException or ObjectDisposedException)
        {
            // The proxy dropped the connection (a tunnel it aborted), or the test ended.
            if (id is not null)
            {
                Slot(_ended, id).TrySetResult(e.GetType().Name);
            }
        }
    }

    // RFC 6455 §4.2.2: base64(SHA-1(key + GUID)), computed here independently of the proxy's code.
    private static string Accept(string key) =>
        Convert.ToBase64String(SHA1.HashData(Encoding.ASCII.GetBytes(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")));

    public void Dispose()
    {
        _stop.Cancel();
        _listener.Stop();
        _stop.Dispose();
    }
}
