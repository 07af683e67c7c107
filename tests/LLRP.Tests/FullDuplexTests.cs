using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text;
using LLRP.Tests.Infrastructure;
using Microsoft.AspNetCore.Builder;

namespace LLRP.Tests;

/// <summary>
/// Full-duplex exchanges through the proxy in front of src/Downstream, whose /echo answers while it reads and stops
/// reading while its answer is not read, and whose /early/{code} answers without reading: uploads larger than the
/// kernel's socket buffers come back intact in both framings, an early final response reaches the client with its body
/// and the client connection is then drained (reusable) or closed, and a client that stops reading or writing holds the
/// proxy's memory to a bound (asserted on its resident set, never on time).
/// </summary>
public sealed class FullDuplexTests(DuplexProxies fixture) : IClassFixture<DuplexProxies>
{
    private const int MiB = 1024 * 1024;
    private const int Piece = 64 * 1024;

    // A hang guard for large uploads on a shared machine, not a measurement.
    private static readonly TimeSpan s_largeCap = TimeSpan.FromSeconds(180);

    /// <summary>The variants that forward full duplex: one row each; the other rows of every theory follow from it.</summary>
    public static readonly string[] DuplexVariants = ["llhttp", "llhttp-runtime-engine"];

    public static TheoryData<string, int, bool> Uploads()
    {
        var data = new TheoryData<string, int, bool>();
        foreach (var variant in DuplexVariants)
        {
            foreach (var size in new[] { 1 * MiB, 10 * MiB, 25 * MiB })
            {
                data.Add(variant, size, false);
                data.Add(variant, size, true);
            }
        }
        return data;
    }

    public static TheoryData<string, int> EarlyStatuses()
    {
        var data = new TheoryData<string, int>();
        foreach (var variant in DuplexVariants)
        {
            data.Add(variant, 413);
            data.Add(variant, 401);
            data.Add(variant, 200);
        }
        return data;
    }

    public static TheoryData<string> Each()
    {
        var data = new TheoryData<string>();
        foreach (var variant in DuplexVariants)
        {
            data.Add(variant);
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Uploads))]
    public async Task Echoed_upload_comes_back_intact(string variant, int size, bool chunked)
    {
        var proxy = await fixture.GetAsync(variant);
        var body = RandomBody(size, seed: size + (chunked ? 1 : 0));
        await using var client = await RawClient.ConnectAsync(proxy);

        var sending = SendUploadAsync(client, "/echo", body, chunked);
        // Read while sending: the echo answers as it reads, so waiting for the end of the upload first would deadlock.
        var response = await client.ReadResponseAsync("POST", s_largeCap);
        await sending;

        Assert.False(client.SendFailed, "the proxy closed before the whole body was sent");
        Assert.NotNull(response);
        Assert.Equal(200, response.Status);
        Assert.True(response.Complete, $"the echo ended early: {response}");
        Assert.Equal(body.Length, response.Body.Length);
        Assert.Equal(Sha256(body), Sha256(response.Body));

        // The exchange ended in frame: the connection carries the next request.
        await client.SendAsync("GET / HTTP/1.1\r\nHost: proxy.example\r\n\r\n");
        var next = await client.ReadResponseAsync();
        Assert.Equal(200, next?.Status);
    }

    /// <summary>
    /// RFC 9110 §15 and RFC 9112 §9.3: a final response may come before the request body is done; the proxy relays it
    /// whole, stops forwarding the body, and reads and discards the rest (bounded) or closes the client connection.
    /// A 25 MiB body may outlast the drain bound on a busy machine, so either ending is accepted, but never a response
    /// that is not the origin's, a byte out of frame or a downstream connection reused mid-body.
    /// </summary>
    [Theory]
    [MemberData(nameof(EarlyStatuses))]
    public async Task Early_final_response_is_relayed_then_the_connection_is_drained_or_closed(string variant, int status)
    {
        var proxy = await fixture.GetAsync(variant);
        var body = RandomBody(25 * MiB, seed: status);
        await using var client = await RawClient.ConnectAsync(proxy);

        var sending = SendUploadAsync(client, $"/early/{status}", body, chunked: false);
        var response = await client.ReadResponseAsync("POST", s_largeCap);
        await sending;

        Assert.NotNull(response);
        Assert.Equal(status, response.Status);
        Assert.True(response.Complete, $"the early response ended early: {response}");
        Assert.Equal($"{status}: answered before reading the request body\n", response.BodyText);

        await client.SendAsync("GET / HTTP/1.1\r\nHost: proxy.example\r\n\r\n");
        var next = client.SendFailed ? null : await client.ReadResponseAsync(cap: s_largeCap);
        if (next is null)
        {
            Assert.Equal(Ending.Closed, await client.WaitForEndAsync(s_largeCap));
        }
        else
        {
            Assert.Equal(200, next.Status);
            Assert.Equal("aaaaaaaaaa", next.BodyText);
        }
        await AssertOriginAnswersAsync(proxy);
    }

    /// <summary>A body the drain bound covers with room to spare: the connection stays usable (this proxy drains).</summary>
    [Theory]
    [MemberData(nameof(Each))]
    public async Task Early_final_response_to_a_small_upload_leaves_the_connection_reusable(string variant)
    {
        var proxy = await fixture.GetAsync(variant);
        var body = RandomBody(256 * 1024, seed: 7);
        foreach (var chunked in new[] { false, true })
        {
            await using var client = await RawClient.ConnectAsync(proxy);
            var sending = SendUploadAsync(client, "/early/413", body, chunked);
            var response = await client.ReadResponseAsync("POST", s_largeCap);
            await sending;

            Assert.Equal(413, response?.Status);
            Assert.False(client.SendFailed, "the proxy closed before the client sent the whole body");
            await client.SendAsync("GET / HTTP/1.1\r\nHost: proxy.example\r\n\r\n");
            var next = await client.ReadResponseAsync(cap: s_largeCap);
            Assert.Equal(200, next?.Status);
            Assert.Equal("aaaaaaaaaa", next?.BodyText);
        }
    }

    /// <summary>
    /// A client that sends a large echo and never reads the answer: the proxy stops reading the downstream, the echo
    /// stops reading the proxy, the proxy stops reading the client, and the client's send stalls with the proxy's
    /// resident set bounded far below the body. Then it reads, and the whole body comes back intact.
    /// </summary>
    [Theory]
    [MemberData(nameof(Each))]
    public async Task Slow_reader_stalls_the_upload_and_bounds_proxy_memory(string variant)
    {
        const long total = 192L * MiB;
        await using var proxy = await ProxyProcess.StartAsync(variant, fixture.Origin.Url);
        var baseline = await proxy.WarmUpAsync();
        using var socket = await ConnectAsync(proxy.Url);
        await using var stream = new NetworkStream(socket, ownsSocket: false);

        var sent = 0L;
        var sending = Task.Run(async () =>
        {
            await stream.WriteAsync(Wire.Bytes($"POST /echo HTTP/1.1\r\nHost: proxy.example\r\nContent-Length: {total}\r\n\r\n"));
            var piece = Pattern();
            while (Volatile.Read(ref sent) < total)
            {
                await stream.WriteAsync(piece);
                Interlocked.Add(ref sent, piece.Length);
            }
        });

        await WaitUntilStalledAsync(() => Volatile.Read(ref sent), sending);
        var stalledAt = Volatile.Read(ref sent);
        var rss = proxy.ResidentBytes();
        Assert.True(stalledAt < total, "the client sent the whole body while nobody read the answer: something buffered it");
        Assert.True(rss - baseline < 64L * MiB,
            $"proxy resident set grew by {(rss - baseline) / MiB} MiB while {stalledAt / MiB} MiB of a {total / MiB} MiB upload were in flight");

        var reader = new ByteReader(stream);
        await ReadEchoAsync(reader, total);
        await sending;
    }

    /// <summary>
    /// A client that sends half a body and waits: the echo of that half arrives before the rest is sent (the response
    /// is relayed while the request is still open), with the proxy's memory bounded; then the rest follows intact.
    /// </summary>
    [Theory]
    [MemberData(nameof(Each))]
    public async Task Slow_writer_gets_the_echo_of_what_it_sent_and_bounds_proxy_memory(string variant)
    {
        const int half = 8 * MiB;
        await using var proxy = await ProxyProcess.StartAsync(variant, fixture.Origin.Url);
        var baseline = await proxy.WarmUpAsync();
        using var socket = await ConnectAsync(proxy.Url);
        await using var stream = new NetworkStream(socket, ownsSocket: false);
        var reader = new ByteReader(stream);
        var pattern = Pattern();

        await stream.WriteAsync(Wire.Bytes($"POST /echo HTTP/1.1\r\nHost: proxy.example\r\nContent-Length: {2 * half}\r\n\r\n"), Wire.Deadline());
        var first = Task.Run(async () =>
        {
            for (var offset = 0; offset < half; offset += Piece)
            {
                await stream.WriteAsync(pattern, Wire.Deadline(s_largeCap));
            }
        });
        var head = await ReadHeadAsync(reader);
        Assert.StartsWith("HTTP/1.1 200 ", head[0], StringComparison.Ordinal);
        await ReadPatternAsync(reader, half);
        await first;
        var rss = proxy.ResidentBytes();
        Assert.True(rss - baseline < 64L * MiB, $"proxy resident set grew by {(rss - baseline) / MiB} MiB during a paused upload");

        var second = Task.Run(async () =>
        {
            for (var offset = 0; offset < half; offset += Piece)
            {
                await stream.WriteAsync(pattern, Wire.Deadline(s_largeCap));
            }
        });
        await ReadPatternAsync(reader, half);
        await second;
    }

    private static async Task SendUploadAsync(RawClient client, string target, byte[] body, bool chunked)
    {
        var framing = chunked ? "Transfer-Encoding: chunked" : $"Content-Length: {body.Length}";
        await Task.Yield();
        await client.SendAsync($"POST {target} HTTP/1.1\r\nHost: proxy.example\r\n{framing}\r\n\r\n");
        for (var offset = 0; offset < body.Length && !client.SendFailed; offset += Piece)
        {
            var piece = body.AsSpan(offset, Math.Min(Piece, body.Length - offset)).ToArray();
            await client.SendAsync(chunked ? [.. Wire.Bytes($"{piece.Length:x}\r\n"), .. piece, .. "\r\n"u8] : piece);
        }
        if (chunked)
        {
            await client.SendAsync("0\r\n\r\n");
        }
    }

    /// <summary>The origin still answers through the proxy on a new connection (no downstream connection left out of frame).</summary>
    private static async Task AssertOriginAnswersAsync(Uri proxy)
    {
        await using var client = await RawClient.ConnectAsync(proxy);
        await client.SendAsync("GET / HTTP/1.1\r\nHost: proxy.example\r\n\r\n");
        var response = await client.ReadResponseAsync();
        Assert.Equal(200, response?.Status);
        Assert.Equal("aaaaaaaaaa", response?.BodyText);
    }

    /// <summary>
    /// Waits until <paramref name="progress"/> stops moving (unchanged across 2 s of polls) or the send ends. A hang
    /// guard bounds it; nothing about durations is asserted.
    /// </summary>
    private static async Task WaitUntilStalledAsync(Func<long> progress, Task sending)
    {
        var deadline = DateTime.UtcNow + s_largeCap;
        var last = -1L;
        var unchanged = 0;
        while (unchanged < 8 && !sending.IsCompleted && DateTime.UtcNow < deadline)
        {
            await Task.Delay(250);
            var now = progress();
            unchanged = now == last ? unchanged + 1 : 0;
            last = now;
        }
        Assert.True(unchanged >= 8 || sending.IsCompleted, "the upload neither stalled nor ended within the hang guard");
    }

    private static async Task ReadEchoAsync(ByteReader reader, long total)
    {
        var head = await ReadHeadAsync(reader);
        Assert.StartsWith("HTTP/1.1 200 ", head[0], StringComparison.Ordinal);
        Assert.Contains($"Content-Length: {total}", head);
        await ReadPatternAsync(reader, total);
    }

    /// <summary>Reads <paramref name="count"/> bytes (a multiple of <see cref="Piece"/>), each piece equal to <see cref="Pattern"/>.</summary>
    private static async Task ReadPatternAsync(ByteReader reader, long count)
    {
        var pattern = Pattern();
        for (var read = 0L; read < count; read += Piece)
        {
            var piece = await reader.ReadUpToAsync(Piece, Wire.Deadline(s_largeCap));
            Assert.True(piece.AsSpan().SequenceEqual(pattern), $"echoed bytes differ at offset {read}");
        }
    }

    private static async Task<List<string>> ReadHeadAsync(ByteReader reader)
    {
        var lines = new List<string>();
        while (true)
        {
            var line = await reader.ReadLineAsync(1 << 16, Wire.Deadline(s_largeCap));
            Assert.True(line is not null && line[^1] == '\n', $"the head ended early after [{string.Join(" | ", lines)}]");
            var text = Encoding.Latin1.GetString(line.AsSpan(0, line.Length - 1)).TrimEnd('\r');
            if (text.Length == 0)
            {
                return lines;
            }
            lines.Add(text);
        }
    }

    private static async Task<Socket> ConnectAsync(Uri url)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, url.Port), Wire.Deadline());
        return socket;
    }

    private static byte[] Pattern() => RandomBody(Piece, seed: 42);

    private static byte[] RandomBody(int size, int seed)
    {
        var body = new byte[size];
        new Random(seed).NextBytes(body);
        return body;
    }

    private static string Sha256(byte[] bytes) => Convert.ToHexStringLower(SHA256.HashData(bytes));
}

/// <summary>
/// Class fixture: src/Downstream in-process, and one in-process proxy per variant in front of it, started on first use.
/// </summary>
public sealed class DuplexProxies : IAsyncLifetime
{
    private readonly Dictionary<string, Task<(WebApplication App, Uri Url)>> _proxies = [];
    private readonly object _lock = new();
    private DownstreamUnderTest? _origin;

    public DownstreamUnderTest Origin => _origin ?? throw new InvalidOperationException("not started");

    public async Task<Uri> GetAsync(string variant)
    {
        Task<(WebApplication App, Uri Url)> task;
        lock (_lock)
        {
            if (!_proxies.TryGetValue(variant, out task!))
            {
                task = StartAsync(variant);
                _proxies[variant] = task;
            }
        }
        return (await task).Url;
    }

    private async Task<(WebApplication, Uri)> StartAsync(string variant)
    {
        var app = LLRP.Hosting.ProxyHost.Build(
            ["--urls", "http://127.0.0.1:0", "--downstream", Origin.Url.ToString().TrimEnd('/'), .. Variants.Get(variant).Arguments]);
        await app.StartAsync(Wire.Deadline(TimeSpan.FromSeconds(30)));
        return (app, new Uri(LLRP.Hosting.ProxyHost.Addresses(app).First()));
    }

    public async Task InitializeAsync() => _origin = await DownstreamUnderTest.StartAsync();

    public async Task DisposeAsync()
    {
        foreach (var task in _proxies.Values)
        {
            try
            {
                var (app, _) = await task;
                await app.StopAsync(Wire.Deadline());
                await app.DisposeAsync();
            }
            catch (Exception e) when (e is OperationCanceledException or InvalidOperationException or IOException)
            {
            }
        }
        if (_origin is not null)
        {
            await _origin.DisposeAsync();
        }
    }
}

/// <summary>
/// LLRP as its own process (`dotnet exec LLRP.dll`), so its resident set is its own: the memory bounds above are
/// asserted on it, not on the test process that also holds the origin and the clients.
/// </summary>
internal sealed class ProxyProcess : IAsyncDisposable
{
    private readonly RunningProgram _program;

    private ProxyProcess(RunningProgram program, Uri url)
    {
        _program = program;
        Url = url;
    }

    public Uri Url { get; }

    public static async Task<ProxyProcess> StartAsync(string variant, Uri downstream)
    {
        // Port 0 and the address LLRP reports: a port picked here and bound by the process later could be taken
        // meanwhile by a test running in parallel.
        var program = ProgramRun.Start(
        [
            "--urls", "http://127.0.0.1:0", "--downstream", downstream.ToString().TrimEnd('/'), .. Variants.Get(variant).Arguments,
            // Above the uploads these tests send, which exceed the 30 MB default on purpose.
            "--maxRequestBodySize", $"{1L << 30}",
        ]);
        try
        {
            return new ProxyProcess(program, await program.ListeningAsync());
        }
        catch
        {
            await program.DisposeAsync();
            throw;
        }
    }

    /// <summary>Runs a 1 MiB echo so the relay's code and buffers are in place; returns the resident set after it.</summary>
    public async Task<long> WarmUpAsync()
    {
        await using var client = await RawClient.ConnectAsync(Url);
        var body = new byte[1024 * 1024];
        var sending = Task.Run(async () =>
        {
            await client.SendAsync($"POST /echo HTTP/1.1\r\nHost: proxy.example\r\nContent-Length: {body.Length}\r\n\r\n");
            await client.SendAsync(body);
        });
        var response = await client.ReadResponseAsync("POST", TimeSpan.FromSeconds(60));
        await sending;
        Assert.Equal(body.Length, response?.Body.Length);
        return ResidentBytes();
    }

    /// <summary>VmRSS from /proc (Linux, where the suite runs).</summary>
    public long ResidentBytes()
    {
        foreach (var line in File.ReadLines($"/proc/{_program.ProcessId}/status"))
        {
            if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
            {
                return long.Parse(line.AsSpan(6).Trim().TrimEnd("kB").Trim(), System.Globalization.CultureInfo.InvariantCulture) * 1024;
            }
        }
        throw new InvalidOperationException("no VmRSS line");
    }

    public ValueTask DisposeAsync() => _program.DisposeAsync();
}
