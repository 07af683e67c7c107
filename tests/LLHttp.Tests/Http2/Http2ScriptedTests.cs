using LLHttp.Http2;
using LLHttp2.Frames;
using Xunit;
using static LLHttp.Tests.Http2.H2Kit;
using static LLHttp.Tests.Http2.ScriptedH2Server;

namespace LLHttp.Tests.Http2;

/// <summary>The HTTP/2 client against a scripted server: refusals, hostile frames and silence. Every wait is bounded.</summary>
public class Http2ScriptedTests
{
    /// <summary>Connects while the server accepts: the connect waits for the server's SETTINGS.</summary>
    private static async Task<LLHttp2Connection> ConnectAsync(ScriptedH2Server server, LLHttpOptions? options = null, bool acknowledge = true)
    {
        var connecting = LLHttp2Connection.ConnectAsync(server.EndPoint, options: options).AsTask();
        await server.AcceptAsync(acknowledge);
        return await connecting.WaitAsync(Bound);
    }

    /// <summary>The operation fails with <paramref name="error"/> within the bound.</summary>
    private static async Task<LLHttpException> FailsAsync(LLHttpError error, Func<Task> operation)
    {
        // A call may throw at once (the connection failed already) or fail its task later: both count.
        var e = await Assert.ThrowsAsync<LLHttpException>(() => operation().WaitAsync(Bound));
        Assert.Equal(error, e.Error);
        return e;
    }

    /// <summary>Two GET streams (1 and 3) whose HEADERS the server has read.</summary>
    private static async Task<(LLHttp2Stream First, LLHttp2Stream Second)> TwoStreamsAsync(ScriptedH2Server server, LLHttp2Connection connection)
    {
        var first = Get(connection);
        var second = Get(connection);
        Assert.Equal(1, (await server.ReadFrameAsync(Http2FrameType.Headers)).StreamId);
        Assert.Equal(3, (await server.ReadFrameAsync(Http2FrameType.Headers)).StreamId);
        return (first, second);
    }

    private static LLHttp2Stream Get(LLHttp2Connection connection, string path = "/")
    {
        Assert.True(connection.TryOpenStream(out var stream));
        stream.StartRequest("GET"u8, "http"u8, "origin"u8, System.Text.Encoding.ASCII.GetBytes(path));
        stream.SendRequest();
        return stream;
    }

    [Fact]
    public async Task Streams_above_the_last_id_of_a_goaway_are_refused_and_retryable()
    {
        await using var server = new ScriptedH2Server();
        using var connection = await ConnectAsync(server);
        var (first, second) = await TwoStreamsAsync(server, connection);
        using var disposeFirst = first;
        using var disposeSecond = second;
        await server.SendAsync([.. GoAway(1, 0), .. Ok(1), .. Data(1, "one", endStream: true)]);

        var refused = await FailsAsync(LLHttpError.StreamRefused, () => second.ReadResponseHeadAsync().AsTask());
        Assert.True(refused.IsRetryable);

        var head = await first.ReadResponseHeadAsync().AsTask().WaitAsync(Bound);
        Assert.Equal(200, head.StatusCode);
        var buffer = new byte[16];
        Assert.Equal(3, await first.ReadBodyAsync(buffer).AsTask().WaitAsync(Bound));
        Assert.Equal(0, await first.ReadBodyAsync(buffer).AsTask().WaitAsync(Bound));
        Assert.False(connection.IsUsable);
        Assert.False(connection.TryOpenStream(out _));
    }

    [Fact]
    public async Task Refused_stream_reset_is_retryable_other_resets_are_not()
    {
        await using var server = new ScriptedH2Server();
        using var connection = await ConnectAsync(server);
        var (refused, cancelled) = await TwoStreamsAsync(server, connection);
        using var disposeRefused = refused;
        using var disposeCancelled = cancelled;
        await server.SendAsync([.. RstStream(1, 7), .. RstStream(3, 8)]);

        var e = await FailsAsync(LLHttpError.StreamRefused, () => refused.ReadResponseHeadAsync().AsTask());
        Assert.True(e.IsRetryable);
        e = await FailsAsync(LLHttpError.StreamReset, () => cancelled.ReadResponseHeadAsync().AsTask());
        Assert.False(e.IsRetryable);
        Assert.True(connection.IsUsable);
    }

    public static TheoryData<string, byte[]> HostileFrames => new()
    {
        { "DATA on stream 0", Frame(Http2FrameType.Data, 0, 0, [1, 2, 3]) },
        { "SETTINGS of 5 bytes", Frame(Http2FrameType.Settings, 0, 0, [0, 4, 0, 0, 0]) },
        { "frame above the max frame size", Frame(Http2FrameType.Data, 0, 1, new byte[20_000]) },
        { "HEADERS on a stream never opened", Frame(Http2FrameType.Headers, Http2FrameFlags.EndHeaders, 9, [0x88]) },
        { "PUSH_PROMISE", Frame(Http2FrameType.PushPromise, Http2FrameFlags.EndHeaders, 1, [0, 0, 0, 2, 0x88]) },
        { "HPACK index out of range", Frame(Http2FrameType.Headers, Http2FrameFlags.EndHeaders, 1, [0xFF, 0x7F]) },
        { "WINDOW_UPDATE of 0 on the connection", Frame(Http2FrameType.WindowUpdate, 0, 0, [0, 0, 0, 0]) },
    };

    [Theory]
    [MemberData(nameof(HostileFrames))]
    public async Task A_connection_error_fails_every_stream_and_closes(string what, byte[] frame)
    {
        _ = what;
        await using var server = new ScriptedH2Server();
        using var connection = await ConnectAsync(server);
        var (first, second) = await TwoStreamsAsync(server, connection);
        using var disposeFirst = first;
        using var disposeSecond = second;
        await server.SendAsync(frame);

        foreach (var stream in new[] { first, second })
        {
            await FailsAsync(LLHttpError.Http2ConnectionError, () => stream.ReadResponseHeadAsync().AsTask());
        }

        Assert.False(connection.IsUsable);
        var goAway = await server.ReadFrameAsync(Http2FrameType.GoAway);
        Assert.NotEqual(0u, System.Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(goAway.Payload.AsSpan(4)));
        Assert.True(await server.ClosedByClientAsync());
        await connection.Completion.WaitAsync(Bound);
    }

    [Fact]
    public async Task A_close_in_the_middle_of_a_body_fails_the_read()
    {
        await using var server = new ScriptedH2Server();
        using var connection = await ConnectAsync(server);
        using var stream = Get(connection);
        await server.ReadFrameAsync(Http2FrameType.Headers);
        await server.SendAsync([.. Ok(1), .. Data(1, "part", endStream: false)]);
        Assert.Equal(200, (await stream.ReadResponseHeadAsync().AsTask().WaitAsync(Bound)).StatusCode);
        var buffer = new byte[64];
        Assert.Equal(4, await stream.ReadBodyAsync(buffer).AsTask().WaitAsync(Bound));
        server.Close();
        var e = await Assert.ThrowsAsync<LLHttpException>(() => stream.ReadBodyAsync(buffer).AsTask().WaitAsync(Bound));
        // A FIN, or a reset when the client's WINDOW_UPDATE was still unread in the server's socket.
        Assert.Contains(e.Error, new[] { LLHttpError.Http2ConnectionError, LLHttpError.ReceiveFailed });
        await connection.Completion.WaitAsync(Bound);
    }

    [Fact]
    public async Task Settings_never_acknowledged_fail_the_connection()
    {
        await using var server = new ScriptedH2Server();
        var options = new LLHttpOptions { Http2SettingsAckTimeout = TimeSpan.FromMilliseconds(200) };
        using var connection = await ConnectAsync(server, options, acknowledge: false);
        using var stream = Get(connection);
        await FailsAsync(LLHttpError.Http2SettingsTimeout, () => stream.ReadResponseHeadAsync().AsTask());
        var goAway = await server.ReadFrameAsync(Http2FrameType.GoAway);
        Assert.Equal(4u, System.Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(goAway.Payload.AsSpan(4))); // SETTINGS_TIMEOUT
    }

    [Fact]
    public async Task An_unanswered_ping_fails_the_connection_and_its_streams()
    {
        await using var server = new ScriptedH2Server();
        var options = new LLHttpOptions { Http2PingTimeout = TimeSpan.FromMilliseconds(200) };
        using var connection = await ConnectAsync(server, options);
        using var stream = Get(connection);
        await FailsAsync(LLHttpError.Http2PingTimeout, () => connection.PingAsync().AsTask());
        await FailsAsync(LLHttpError.Http2PingTimeout, () => stream.ReadResponseHeadAsync().AsTask());
        Assert.False(connection.IsUsable);
        Assert.Equal(Http2FrameType.Ping, (await server.ReadFrameAsync(Http2FrameType.Ping)).Type);
        Assert.True(await server.ClosedByClientAsync());
    }

    [Fact]
    public async Task A_silent_server_times_out_the_head_and_the_stream_is_reset()
    {
        await using var server = new ScriptedH2Server();
        var options = new LLHttpOptions { ResponseHeadTimeout = TimeSpan.FromMilliseconds(200) };
        using var connection = await ConnectAsync(server, options);
        using var stream = Get(connection);
        await server.ReadFrameAsync(Http2FrameType.Headers);
        await FailsAsync(LLHttpError.ResponseHeadTimeout, () => stream.ReadResponseHeadAsync().AsTask());
        var reset = await server.ReadFrameAsync(Http2FrameType.RstStream);
        Assert.Equal(1, reset.StreamId);
        Assert.Equal(8u, System.Buffers.Binary.BinaryPrimitives.ReadUInt32BigEndian(reset.Payload)); // CANCEL
        Assert.True(connection.IsUsable);
    }

    [Fact]
    public async Task A_closed_window_times_out_the_body_write()
    {
        await using var server = new ScriptedH2Server();
        var options = new LLHttpOptions { BodyIdleTimeout = TimeSpan.FromMilliseconds(200) };
        using var connection = await ConnectAsync(server, options);
        Assert.True(connection.TryOpenStream(out var stream));
        using (stream)
        {
            stream.StartRequest("POST"u8, "http"u8, "origin"u8, "/"u8);
            stream.StartRequestBody();
            // 64 KiB - 1 fits the initial window; the rest waits for a WINDOW_UPDATE that never comes.
            await FailsAsync(LLHttpError.BodyIdleTimeout, () => stream.WriteBodyAsync(new byte[100_000]).AsTask());
        }
    }

    [Fact]
    public async Task Caller_cancellation_is_an_operation_canceled_exception()
    {
        await using var server = new ScriptedH2Server();
        using var connection = await ConnectAsync(server);
        using var stream = Get(connection);
        using var cts = new CancellationTokenSource();
        var head = stream.ReadResponseHeadAsync(cts.Token).AsTask();
        cts.Cancel();
        var e = await Assert.ThrowsAnyAsync<OperationCanceledException>(() => head.WaitAsync(Bound));
        Assert.Equal(cts.Token, e.CancellationToken);
    }

    [Fact]
    public async Task Informational_heads_come_first_then_trailers_after_the_body()
    {
        await using var server = new ScriptedH2Server();
        using var connection = await ConnectAsync(server);
        using var stream = Get(connection);
        await server.ReadFrameAsync(Http2FrameType.Headers);
        // 103 (literal :status without indexing), 200, body, trailers "x-t: v".
        await server.SendAsync([
            .. Frame(Http2FrameType.Headers, Http2FrameFlags.EndHeaders, 1, [0x08, 0x03, (byte)'1', (byte)'0', (byte)'3']),
            .. Ok(1),
            .. Data(1, "body", endStream: false),
            .. Frame(Http2FrameType.Headers, Http2FrameFlags.EndHeaders | Http2FrameFlags.EndStream, 1, [0x00, 0x03, (byte)'x', (byte)'-', (byte)'t', 0x01, (byte)'v']),
        ]);
        var head = await stream.ReadResponseHeadAsync().AsTask().WaitAsync(Bound);
        Assert.True(head.IsInformational);
        Assert.Equal(103, head.StatusCode);
        head = await stream.ReadResponseHeadAsync().AsTask().WaitAsync(Bound);
        Assert.Equal(200, head.StatusCode);
        var buffer = new byte[2];
        var body = new List<byte>();
        int n;
        while ((n = await stream.ReadBodyAsync(buffer).AsTask().WaitAsync(Bound)) != 0)
        {
            body.AddRange(buffer[..n]);
        }

        Assert.Equal("body"u8.ToArray(), body.ToArray());
        Assert.Equal("v", ToDictionary(stream.Trailers)["x-t"]);
    }

    [Fact]
    public async Task Invalid_request_fields_are_refused_before_the_wire()
    {
        await using var server = new ScriptedH2Server();
        using var connection = await ConnectAsync(server);
        Assert.True(connection.TryOpenStream(out var stream));
        using (stream)
        {
            stream.StartRequest("GET"u8, "http"u8, "origin"u8, "/"u8);
            Assert.Throws<ArgumentException>(() => stream.AddHeader("Upper"u8, "x"u8));
            Assert.Throws<ArgumentException>(() => stream.AddHeader("connection"u8, "close"u8));
            Assert.Throws<ArgumentException>(() => stream.AddHeader("x-bad"u8, "a\r\nb"u8));
            Assert.Throws<ArgumentException>(() => stream.AddHeader(":path"u8, "/"u8));
        }
    }
}
