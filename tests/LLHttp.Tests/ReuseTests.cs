using System.Text;
using LLHttp.Transports;
using Xunit;
using static LLHttp.Tests.TestKit;

namespace LLHttp.Tests;

public class ReuseTests
{
    private static async Task<ResponseHead> GetAsync(LLHttpConnection connection, string target = "/")
    {
        connection.StartRequest("GET"u8, Encoding.ASCII.GetBytes(target), "h"u8);
        await connection.SendRequestAsync();
        return await connection.ReadResponseHeadAsync();
    }

    private static async Task<string> ReadToEndAsync(LLHttpConnection connection)
    {
        var sb = new StringBuilder();
        var buffer = new byte[64];
        for (int i = 0; i < 1000; i++)
        {
            int n = await connection.ReadBodyAsync(buffer);
            if (n == 0)
            {
                return sb.ToString();
            }

            sb.Append(Encoding.Latin1.GetString(buffer, 0, n));
        }

        throw new InvalidOperationException("Body never ended.");
    }

    [Fact]
    public async Task Sequential_exchanges_share_the_connection()
    {
        var transport = new ScriptedTransport(
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\ntwo\r\n0\r\n\r\n");
        using var connection = Connect(transport);
        await GetAsync(connection, "/1");
        Assert.False(connection.IsReusable); // body not read yet
        Assert.Equal("one", await ReadToEndAsync(connection));
        Assert.True(connection.IsReusable);

        await GetAsync(connection, "/2");
        Assert.Equal("two", await ReadToEndAsync(connection));
        Assert.Equal("GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n", transport.SentText);
    }

    [Theory]
    [InlineData("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nConnection: upgrade, CLOSE\r\nContent-Length: 0\r\n\r\n")]
    [InlineData("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nextra")] // bytes nobody asked for
    public async Task Not_reusable_after_close_semantics(string response)
    {
        using var connection = Connect(new ScriptedTransport(response));
        await GetAsync(connection);
        await ReadToEndAsync(connection);
        Assert.False(connection.IsReusable);
    }

    [Fact]
    public async Task Not_reusable_with_unread_body_and_pool_closes_it()
    {
        var transport = new ScriptedTransport("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789");
        var connection = Connect(transport);
        using var pool = new Pooling.LLHttpConnectionPool(_ => new ValueTask<LLHttpConnection>(connection), Options);
        var rented = await pool.RentAsync();
        await GetAsync(rented);
        Assert.Equal(5, await rented.ReadBodyAsync(new byte[5]));
        Assert.False(rented.IsReusable);
        pool.Return(rented);
        Assert.Equal(0, pool.IdleCount);
        Assert.True(transport.Disposed);
    }

    [Fact]
    public async Task Not_reusable_after_protocol_error()
    {
        var transport = new ScriptedTransport("HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n");
        using var connection = Connect(transport);
        var e = await Assert.ThrowsAsync<LLHttpException>(() => GetAsync(connection));
        Assert.Equal(LLHttpError.InvalidContentLength, e.Error);
        Assert.False(connection.IsReusable);
        Assert.True(transport.Disposed);
    }

    [Fact]
    public async Task Not_reusable_after_cancellation()
    {
        var transport = new ScriptedTransport { HangAtEnd = true };
        using var connection = Connect(transport);
        connection.StartRequest("GET"u8, "/"u8, "h"u8);
        await connection.SendRequestAsync();
        using var cts = new CancellationTokenSource();
        var read = connection.ReadResponseHeadAsync(cts.Token).AsTask();
        cts.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => read);
        Assert.False(connection.IsReusable);
        Assert.True(transport.Disposed);
    }

    [Fact]
    public async Task Head_spans_stay_valid_until_the_next_read()
    {
        using var connection = Connect(new ScriptedTransport("HTTP/1.1 200 OK\r\nX-A: 1\r\nContent-Length: 2\r\n\r\nok"));
        var head = await GetAsync(connection);
        Assert.Equal("1", Encoding.ASCII.GetString(head.Headers.Value(0)));
        Assert.Equal("OK", Encoding.ASCII.GetString(head.ReasonPhrase));
        Assert.Throws<ArgumentOutOfRangeException>(() => head.Headers.Name(2));
    }

    [Fact]
    public async Task Stale_connection_retries_an_idempotent_request_once()
    {
        var first = new ScriptedTransport("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"); // then end of stream
        var second = new ScriptedTransport("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");
        var transports = new Queue<Transport>([first, second]);
        var connection = await LLHttpConnection.ConnectAsync(_ => new ValueTask<Transport>(transports.Dequeue()), Options, default);
        using var _ = connection;

        await GetAsync(connection, "/1");
        Assert.True(connection.IsReusable);
        var head = await GetAsync(connection, "/2");
        Assert.Equal(200, head.StatusCode);
        Assert.Equal("hi", await ReadToEndAsync(connection));
        Assert.True(first.Disposed);
        Assert.Equal("GET /2 HTTP/1.1\r\nHost: h\r\n\r\n", second.SentText);
    }

    [Fact]
    public async Task Stale_connection_does_not_retry_a_streamed_body()
    {
        var first = new ScriptedTransport("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        var transports = new Queue<Transport>([first, new ScriptedTransport(), new ScriptedTransport()]);
        using var connection = await LLHttpConnection.ConnectAsync(_ => new ValueTask<Transport>(transports.Dequeue()), Options, default);
        await GetAsync(connection);

        connection.StartRequest("POST"u8, "/"u8, "h"u8);
        connection.StartRequestBody(RequestBodyFraming.Chunked);
        await connection.WriteBodyAsync("x"u8.ToArray());
        await connection.CompleteRequestAsync();
        var e = await Assert.ThrowsAsync<LLHttpException>(async () => await connection.ReadResponseHeadAsync());
        Assert.Equal(LLHttpError.ConnectionClosedBeforeResponse, e.Error);
        Assert.Equal(2, transports.Count); // no reconnect
    }

    [Fact]
    public async Task First_request_on_a_fresh_connection_is_not_retried()
    {
        var transports = new Queue<Transport>([new ScriptedTransport(), new ScriptedTransport()]);
        using var connection = await LLHttpConnection.ConnectAsync(_ => new ValueTask<Transport>(transports.Dequeue()), Options, default);
        var e = await Assert.ThrowsAsync<LLHttpException>(() => GetAsync(connection));
        Assert.Equal(LLHttpError.ConnectionClosedBeforeResponse, e.Error);
        Assert.Single(transports);
    }
}
