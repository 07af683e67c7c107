using System.Buffers;
using System.Net;
using System.Net.Sockets;
using System.Text;
using LLRP.Buffers;
using LLRP.Http1;
using LLRP.Tests.Infrastructure;
using Xunit;
using Xunit.Abstractions;

namespace LLRP.Tests;

/// <summary>
/// Measures the managed heap, so nothing else may allocate meanwhile: runs after the parallel tests, alone.
/// </summary>
[CollectionDefinition(nameof(MemoryMeasurement), DisableParallelization = true)]
public sealed class MemoryMeasurement;

/// <summary>
/// An idle client connection holds no request buffers (rented for a request and given back after it), no LLHttp
/// buffers and, once idle for downstreamShareAfter, no downstream connection of its own.
/// </summary>
[Collection(nameof(MemoryMeasurement))]
public sealed class IdleMemoryTests(ITestOutputHelper output)
{
    [Fact]
    public void Request_head_holds_buffers_only_from_a_request_line_until_reset()
    {
        var head = new RequestHead(new RequestLimits());
        Assert.False(head.HoldsBuffers);
        for (var round = 0; round < 2; round++)
        {
            var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>("GET /a?b HTTP/1.1\r\nHost: h\r\nX-One: 1\r\n\r\n"u8.ToArray()));
            Assert.True(KestrelParser.ParseRequestLine(head, ref reader));
            Assert.True(KestrelParser.ParseHeaders(head, ref reader, budget: 8192));
            Assert.True(head.HoldsBuffers);
            Assert.Equal("/a?b", Encoding.ASCII.GetString(head.Target));
            Assert.Equal(2, head.HeaderCount);
            Assert.Equal("X-One", Encoding.ASCII.GetString(head.Name(1)));

            head.Reset();
            Assert.False(head.HoldsBuffers);
        }
    }

    [Fact]
    public async Task Idle_client_connections_give_their_downstream_connection_to_the_shared_pool()
    {
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get("llhttp"), ["--downstreamShareAfter", "0"], unreachableDownstream: false);
        var clients = new List<Socket>();
        try
        {
            // Each new client connection sends one request and stays open. Once the earlier ones' downstream
            // connections went to the pool (the next deadline sweep), a new client connection reuses one: without
            // sharing, every one of them would open its own.
            var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
            var reused = false;
            while (!reused && DateTime.UtcNow < deadline)
            {
                var before = proxy.Downstream.AcceptedConnections;
                clients.Add(await OpenWithOneRequestAsync(proxy.Url));
                reused = proxy.Downstream.AcceptedConnections == before;
                await Task.Delay(100);
            }
            Assert.True(reused, $"{clients.Count} idle client connections opened {proxy.Downstream.AcceptedConnections} downstream connections and never reused one");
        }
        finally
        {
            clients.ForEach(c => c.Dispose());
        }
    }

    [Fact]
    public async Task An_idle_client_connection_after_one_request_holds_no_buffers()
    {
        // What an idle connection keeps is a few KiB of objects (Kestrel's socket and pipes, the proxy's connection
        // state); a buffer held while idle (the request head's 40 KB, LLHttp's receive or send array, the body buffer)
        // takes it far past this bound.
        const int Connections = 200;
        const int BoundBytesPerConnection = 12 * 1024;
        // One shared downstream connection for every exchange, so what remains is the client connections' own state
        // (the affinity slots' hand-over to that pool is the test above).
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get("llhttp"), ["--shareClients", "true"], unreachableDownstream: false);
        // First use of every path (JIT, pools, the first downstream connection) lands before the baseline.
        (await OpenWithOneRequestAsync(proxy.Url)).Dispose();
        var clients = new List<Socket>();
        try
        {
            await Task.Delay(500);
            proxy.Downstream.Reset();
            var before = LiveManagedBytes();
            for (var i = 0; i < Connections; i++)
            {
                clients.Add(await OpenWithOneRequestAsync(proxy.Url));
            }
            await Task.Delay(500);
            proxy.Downstream.Reset();
            var perConnection = (LiveManagedBytes() - before) / Connections;
            output.WriteLine($"{perConnection} bytes of live managed heap per idle client connection");
            Assert.True(perConnection < BoundBytesPerConnection,
                $"{perConnection} bytes of live managed heap per idle client connection (client sockets included), bound {BoundBytesPerConnection}");
        }
        finally
        {
            clients.ForEach(c => c.Dispose());
        }
    }

    [Fact]
    public async Task An_idle_proxy_gives_back_the_arrays_a_burst_left_in_its_pools()
    {
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get("llhttp"), ["--idleTrimAfter", "0.2"], unreachableDownstream: false);
        var clients = new List<Socket>();
        try
        {
            // A burst: exchanges in flight at once, each returning its request head's buffer, its field entries and
            // LLHttp's arrays to ProxyBuffers, which keeps them; and more than the allocation a trim waits for.
            clients.AddRange(await Task.WhenAll(Enumerable.Range(0, 32).Select(_ => OpenWithOneRequestAsync(proxy.Url))));
            GC.KeepAlive(new byte[IdleTrim.DefaultMinAllocatedBytes + 1]);

            var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
            while ((ProxyBuffers.Bytes.RetainedCount > 0 || RequestHead.HeaderEntries.RetainedCount > 0) && DateTime.UtcNow < deadline)
            {
                await Task.Delay(100);
            }
            Assert.Equal(0, ProxyBuffers.Bytes.RetainedCount);
            Assert.Equal(0, RequestHead.HeaderEntries.RetainedCount);

            // The next exchange rents (allocates) its arrays again.
            clients.Add(await OpenWithOneRequestAsync(proxy.Url));
        }
        finally
        {
            clients.ForEach(c => c.Dispose());
        }
    }

    [Fact]
    public async Task A_connection_idle_through_a_trim_serves_its_next_requests()
    {
        // The trim ends each idle connection's exchange loop and shares its downstream connection; the connection's next
        // request starts a new loop and gets a downstream connection again, and the loop serves the requests after it.
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get("llhttp"), ["--idleTrimAfter", "0.2"], unreachableDownstream: false);
        using var client = await OpenWithOneRequestAsync(proxy.Url);
        // More than a trim waits for, allocated after the exchange returned its arrays: the next idle sweep trims.
        GC.KeepAlive(new byte[IdleTrim.DefaultMinAllocatedBytes + 1]);
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        while (ProxyBuffers.Bytes.RetainedCount > 0 && DateTime.UtcNow < deadline)
        {
            await Task.Delay(100);
        }
        Assert.Equal(0, ProxyBuffers.Bytes.RetainedCount);
        for (var i = 0; i < 3; i++)
        {
            await RequestAsync(client);
        }
    }

    private static long LiveManagedBytes()
    {
        for (var i = 0; i < 2; i++)
        {
            GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
            GC.WaitForPendingFinalizers();
        }
        return GC.GetTotalMemory(forceFullCollection: true);
    }

    /// <summary>A client connection that sent one GET and read its whole response, left open and idle.</summary>
    private static async Task<Socket> OpenWithOneRequestAsync(Uri proxy)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            using var deadline = new CancellationTokenSource(Wire.Cap);
            await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, proxy.Port), deadline.Token);
            await RequestAsync(socket);
            return socket;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    /// <summary>One GET on the connection, its whole response read (200 with a Content-Length body).</summary>
    private static async Task RequestAsync(Socket socket)
    {
        using var deadline = new CancellationTokenSource(Wire.Cap);
        await socket.SendAsync("GET / HTTP/1.1\r\nHost: idle\r\n\r\n"u8.ToArray(), deadline.Token);
        var buffer = new byte[1024];
        var length = 0;
        while (true)
        {
            var read = await socket.ReceiveAsync(buffer.AsMemory(length), deadline.Token);
            Assert.NotEqual(0, read);
            length += read;
            var text = Encoding.ASCII.GetString(buffer, 0, length);
            var end = text.IndexOf("\r\n\r\n", StringComparison.Ordinal);
            if (end < 0)
            {
                continue;
            }
            Assert.StartsWith("HTTP/1.1 200", text);
            var declared = text[..end].Split("\r\n").First(l => l.StartsWith("Content-Length:", StringComparison.OrdinalIgnoreCase));
            var total = end + 4 + int.Parse(declared["Content-Length:".Length..].Trim());
            if (length >= total)
            {
                Assert.Equal(total, length);
                return;
            }
        }
    }
}
