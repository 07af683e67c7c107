using LLHttp.Http2;
using Xunit;
using static LLHttp.Tests.Http2.H2Kit;

namespace LLHttp.Tests.Http2;

public class Http2PoolTests
{
    private static async Task<string> GetAsync(LLHttp2ConnectionPool pool, string path)
    {
        using var stream = await pool.OpenStreamAsync().AsTask().WaitAsync(Bound);
        stream.StartRequest("GET"u8, "http"u8, "localhost"u8, System.Text.Encoding.ASCII.GetBytes(path));
        stream.SendRequest();
        var head = await stream.ReadResponseHeadAsync().AsTask().WaitAsync(Bound);
        Assert.True(head.StatusCode == 200, $"{path}: {head.StatusCode} on stream {stream.StreamId}");
        var body = new MemoryStream();
        var buffer = new byte[256];
        int n;
        while ((n = await stream.ReadBodyAsync(buffer).AsTask().WaitAsync(Bound)) != 0)
        {
            body.Write(buffer, 0, n);
        }

        return System.Text.Encoding.ASCII.GetString(body.ToArray());
    }

    [Fact]
    public async Task A_full_connection_makes_the_pool_open_another_and_the_cap_makes_callers_wait()
    {
        await using var server = await KestrelH2Server.StartAsync(maxStreams: 2);
        using var pool = new LLHttp2ConnectionPool(server.EndPoint, maxConnections: 2);
        Assert.Equal("ok", await GetAsync(pool, "/warm")); // the server's limit of 2 is known from here on
        Assert.Equal(1, pool.ConnectionCount);

        // A stream counts against its connection's limit from the moment it is taken, before its HEADERS leave.
        var taken = new List<LLHttp2Stream>();
        for (int i = 0; i < 4; i++)
        {
            taken.Add(await pool.OpenStreamAsync().AsTask().WaitAsync(Bound));
        }

        Assert.Equal(2, pool.ConnectionCount);
        var waiting = pool.OpenStreamAsync().AsTask();
        Assert.False(waiting.IsCompleted);
        taken[0].Dispose();
        using var freed = await waiting.WaitAsync(Bound);
        freed.StartRequest("GET"u8, "http"u8, "localhost"u8, "/after"u8);
        freed.SendRequest();
        Assert.Equal(200, (await freed.ReadResponseHeadAsync().AsTask().WaitAsync(Bound)).StatusCode);
        foreach (var stream in taken.Skip(1))
        {
            stream.Dispose();
        }

        Assert.Equal("ok", await GetAsync(pool, "/again"));
        Assert.Equal(2, pool.ConnectionCount);
    }

    [Fact]
    public async Task Concurrent_callers_fill_a_connection_opened_while_they_waited()
    {
        await using var server = await KestrelH2Server.StartAsync(maxStreams: 2);
        using var pool = new LLHttp2ConnectionPool(server.EndPoint, maxConnections: 2);
        Assert.Equal("ok", await GetAsync(pool, "/warm"));
        // The third and fourth callers find the first connection full: one opens the second, the other waits for it
        // and must be woken when it is added, not when a stream ends (none ends before Release).
        var held = Enumerable.Range(0, 4).Select(_ => GetAsync(pool, "/hold")).ToArray();
        await UntilAsync(() => server.Held == 4);
        Assert.Equal(2, pool.ConnectionCount);
        server.Release();
        Assert.All(await Task.WhenAll(held).WaitAsync(Bound), body => Assert.Equal("held", body));
    }

    [Fact]
    public async Task A_connection_that_received_goaway_leaves_the_pool()
    {
        var first = await KestrelH2Server.StartAsync();
        using var pool = new LLHttp2ConnectionPool(first.EndPoint);
        Assert.Equal("ok", await GetAsync(pool, "/one"));
        await first.StopAsync().WaitAsync(Bound);
        await first.DisposeAsync();
        // The connection got GOAWAY (or its close): the next take drops it and connects again, which fails here,
        // with the connect error, not with a stream on a dead connection.
        var e = await Assert.ThrowsAsync<LLHttpException>(() => GetAsync(pool, "/two"));
        Assert.Equal(LLHttpError.ConnectFailed, e.Error);
        Assert.Equal(0, pool.ConnectionCount);
    }
}
