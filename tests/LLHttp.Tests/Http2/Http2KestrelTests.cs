using LLHttp.Http2;
using LLHttp.Sockets;
using Xunit;
using static LLHttp.Tests.Http2.H2Kit;

namespace LLHttp.Tests.Http2;

/// <summary>The HTTP/2 client against a real server: in-process Kestrel, h2c with prior knowledge and h2 over TLS.</summary>
public class Http2KestrelTests
{
    [Fact]
    public async Task Requests_without_a_body_reuse_one_connection_and_its_streams()
    {
        await using var server = await KestrelH2Server.StartAsync();
        using var connection = await LLHttp2Connection.ConnectAsync(server.EndPoint);
        for (int i = 0; i < 5; i++)
        {
            var result = await ExchangeAsync(connection, "GET", $"/item/{i}");
            Assert.Equal(200, result.Status);
            Assert.Equal($"/item/{i}", result.Headers["x-path"]);
            Assert.Equal("ok"u8.ToArray(), result.Body);
        }

        Assert.True(connection.IsUsable);
        Assert.Equal(0, connection.ActiveStreams);
    }

    [Fact]
    public async Task Bodies_larger_than_the_initial_window_go_both_ways_with_trailers()
    {
        await using var server = await KestrelH2Server.StartAsync();
        using var connection = await LLHttp2Connection.ConnectAsync(server.EndPoint);
        byte[] body = Pattern(1_500_000);
        var result = await ExchangeAsync(connection, "POST", "/echo", body, requestTrailer: "from-client");
        Assert.Equal(200, result.Status);
        Assert.Equal(body, result.Body);
        Assert.Equal("from-client", result.Trailers["x-resp-trailer"]);
        Assert.Equal("1500000", result.Trailers["x-length"]);

        var download = await ExchangeAsync(connection, "GET", "/size/300000", readSize: 1000);
        Assert.Equal(300_000, download.Body.Length);
        Assert.Empty(download.Trailers);
    }

    [Fact]
    public async Task Request_without_trailers_gets_the_echo_trailers_only()
    {
        await using var server = await KestrelH2Server.StartAsync();
        using var connection = await LLHttp2Connection.ConnectAsync(server.EndPoint);
        var result = await ExchangeAsync(connection, "PUT", "/echo", "hello"u8.ToArray());
        Assert.Equal("hello"u8.ToArray(), result.Body);
        Assert.Equal("none", result.Trailers["x-resp-trailer"]);
    }

    [Fact]
    public async Task Many_concurrent_streams_share_one_connection()
    {
        await using var server = await KestrelH2Server.StartAsync();
        using var connection = await LLHttp2Connection.ConnectAsync(server.EndPoint);
        await ExchangeAsync(connection, "GET", "/warm"); // the server's SETTINGS are in force
        var results = await Task.WhenAll(Enumerable.Range(0, 60).Select(i => Task.Run(() => ExchangeAsync(connection, "POST", "/echo", Pattern(i * 1000)))));
        for (int i = 0; i < results.Length; i++)
        {
            Assert.Equal(Pattern(i * 1000), results[i].Body);
        }
    }

    [Fact]
    public async Task Beyond_the_servers_max_concurrent_streams_no_stream_opens()
    {
        await using var server = await KestrelH2Server.StartAsync(maxStreams: 4);
        using var connection = await LLHttp2Connection.ConnectAsync(server.EndPoint);
        await ExchangeAsync(connection, "GET", "/warm");
        Assert.Equal(4u, connection.PeerMaxConcurrentStreams);
        var held = Enumerable.Range(0, 4).Select(_ => ExchangeAsync(connection, "GET", "/hold")).ToArray();
        Assert.False(connection.CanOpenStream);
        Assert.False(connection.TryOpenStream(out _));
        await UntilAsync(() => server.Held == 4);
        server.Release();
        foreach (var result in await Task.WhenAll(held).WaitAsync(Bound))
        {
            Assert.Equal("held"u8.ToArray(), result.Body);
        }

        Assert.True(connection.CanOpenStream);
    }

    [Fact]
    public async Task A_stream_the_server_resets_fails_alone()
    {
        await using var server = await KestrelH2Server.StartAsync();
        using var connection = await LLHttp2Connection.ConnectAsync(server.EndPoint);
        var e = await Assert.ThrowsAsync<LLHttpException>(() => ExchangeAsync(connection, "GET", "/reset"));
        Assert.Equal(LLHttpError.StreamReset, e.Error);
        Assert.False(e.IsRetryable);
        Assert.Equal(200, (await ExchangeAsync(connection, "GET", "/after")).Status);
    }

    [Fact]
    public async Task Graceful_shutdown_finishes_streams_in_progress_and_stops_new_ones()
    {
        await using var server = await KestrelH2Server.StartAsync();
        using var connection = await LLHttp2Connection.ConnectAsync(server.EndPoint);
        var held = ExchangeAsync(connection, "GET", "/hold");
        await UntilAsync(() => server.Held == 1);
        var stopping = server.StopAsync();
        await UntilAsync(() => !connection.IsUsable);
        Assert.False(connection.TryOpenStream(out _));
        server.Release();
        Assert.Equal("held"u8.ToArray(), (await held.WaitAsync(Bound)).Body);
        await stopping.WaitAsync(Bound);
        await connection.Completion.WaitAsync(Bound);
    }

    [Fact]
    public async Task The_epoll_engine_carries_h2c()
    {
        if (!LLHttpSocketEngine.Epoll.IsSupported())
        {
            return;
        }

        await using var server = await KestrelH2Server.StartAsync();
        using var connection = await LLHttp2Connection.ConnectAsync(server.EndPoint, options: new LLHttpOptions { SocketEngine = LLHttpSocketEngine.Epoll });
        var result = await ExchangeAsync(connection, "POST", "/echo", Pattern(300_000), requestTrailer: "epoll");
        Assert.Equal(Pattern(300_000), result.Body);
        Assert.Equal("epoll", result.Trailers["x-resp-trailer"]);
    }

    [Fact]
    public async Task A_ping_is_answered_and_the_connection_goes_on()
    {
        await using var server = await KestrelH2Server.StartAsync();
        using var connection = await LLHttp2Connection.ConnectAsync(server.EndPoint);
        await connection.PingAsync().AsTask().WaitAsync(Bound);
        await connection.PingAsync().AsTask().WaitAsync(Bound);
        Assert.Equal(200, (await ExchangeAsync(connection, "GET", "/after")).Status);
    }

    [Fact]
    public async Task H2_over_tls_negotiates_alpn()
    {
        await using var server = await KestrelH2Server.StartAsync(tls: true);
        using var connection = await LLHttp2Connection.ConnectAsync(server.EndPoint, server.TrustingClientOptions());
        // Kestrel holds :scheme to the connection's (RFC 9113 §8.3.1): "http" over TLS is a stream PROTOCOL_ERROR.
        var result = await ExchangeAsync(connection, "POST", "/echo", Pattern(200_000), scheme: "https");
        Assert.Equal(Pattern(200_000), result.Body);
    }

    [Fact]
    public async Task Caller_abort_resets_the_stream_and_the_connection_goes_on()
    {
        await using var server = await KestrelH2Server.StartAsync();
        using var connection = await LLHttp2Connection.ConnectAsync(server.EndPoint);
        Assert.True(connection.TryOpenStream(out var stream));
        stream.StartRequest("GET"u8, "http"u8, "localhost"u8, "/hold"u8);
        stream.SendRequest();
        var head = stream.ReadResponseHeadAsync().AsTask();
        await UntilAsync(() => server.Held == 1);
        stream.Abort();
        var e = await Assert.ThrowsAsync<LLHttpException>(() => head.WaitAsync(Bound));
        Assert.Equal(LLHttpError.ConnectionAborted, e.Error);
        stream.Dispose();
        server.Release();
        Assert.Equal(200, (await ExchangeAsync(connection, "GET", "/after")).Status);
    }
}
