using Google.Protobuf;
using Grpc.Core;
using Grpc.Net.Client;
using LLRP.Tests.Grpc;
using LLRP.Tests.Infrastructure;

namespace LLRP.Tests;

/// <summary>
/// gRPC through the proxy: Grpc.Net.Client to the proxy and the proxy to a Grpc.AspNetCore origin
/// (<see cref="GrpcOrigin"/>), HTTP/2 on both sides, through each HttpClient-based variant, over TLS (ALPN h2 on both
/// hops: --downstreamProtocol h2) and in cleartext (h2c on both hops). Every call shape with its messages intact, the
/// status and message of a failed call (a trailers-only response), a deadline, and a cancelled call resetting its
/// stream at the origin. gRPC's status travels in trailers: without them no call succeeds.
/// </summary>
public sealed class GrpcTests
{
    private const int MiB = 1024 * 1024;

    public static TheoryData<string, bool> VariantsOverTlsAndCleartext()
    {
        var data = new TheoryData<string, bool>();
        foreach (var client in new[] { "httpclient", "httpclient-httpcontext", "yarp" })
        {
            data.Add(client, true);
            data.Add(client, false);
        }
        return data;
    }

    private static GrpcChannel Channel(Http2DownstreamProxy proxy) => GrpcChannel.ForAddress(proxy.Url, new GrpcChannelOptions
    {
        HttpHandler = TestCertificates.Handler(),
        MaxReceiveMessageSize = 4 * MiB,
        MaxSendMessageSize = 4 * MiB,
    });

    private static ByteString Payload(int size) => ByteString.CopyFrom(Wire.Body(size));

    private static CallOptions Capped => new(deadline: DateTime.UtcNow + Wire.Cap);

    [Theory]
    [MemberData(nameof(VariantsOverTlsAndCleartext))]
    public async Task Unary_calls_carry_small_and_1_MiB_messages_intact(string client, bool tls)
    {
        await using var proxy = await Http2DownstreamProxy.StartAsync(client, tls);
        using var channel = Channel(proxy);
        var echo = new Echo.EchoClient(channel);

        var small = await echo.UnaryAsync(new Message { Payload = Payload(10), Sequence = 7 }, Capped);
        var large = await echo.UnaryAsync(new Message { Payload = Payload(MiB), Sequence = 8 }, Capped);

        Assert.Equal(Payload(10), small.Payload);
        Assert.Equal(7, small.Sequence);
        Assert.Equal(Payload(MiB), large.Payload);
        Assert.Equal(8, large.Sequence);
    }

    [Theory]
    [MemberData(nameof(VariantsOverTlsAndCleartext))]
    public async Task A_server_stream_of_100_messages_arrives_whole_and_in_order(string client, bool tls)
    {
        await using var proxy = await Http2DownstreamProxy.StartAsync(client, tls);
        using var channel = Channel(proxy);
        var echo = new Echo.EchoClient(channel);

        using var call = echo.ServerStream(new StreamRequest { Payload = Payload(1000), Count = 100 }, Capped);
        var received = new List<Message>();
        await foreach (var message in call.ResponseStream.ReadAllAsync())
        {
            received.Add(message);
        }

        Assert.Equal(Enumerable.Range(0, 100), received.Select(m => m.Sequence));
        Assert.All(received, m => Assert.Equal(Payload(1000), m.Payload));
        Assert.Equal(StatusCode.OK, call.GetStatus().StatusCode);
    }

    [Theory]
    [MemberData(nameof(VariantsOverTlsAndCleartext))]
    public async Task A_client_stream_of_100_messages_reaches_the_origin_whole_and_in_order(string client, bool tls)
    {
        await using var proxy = await Http2DownstreamProxy.StartAsync(client, tls);
        using var channel = Channel(proxy);
        var echo = new Echo.EchoClient(channel);

        using var call = echo.ClientStream(Capped);
        var sent = new List<byte>();
        for (var i = 0; i < 100; i++)
        {
            var payload = ByteString.CopyFrom(Wire.Bytes($"message {i};"));
            sent.AddRange(payload);
            await call.RequestStream.WriteAsync(new Message { Payload = payload, Sequence = i });
        }
        await call.RequestStream.CompleteAsync();
        var answer = await call;

        Assert.Equal(100, answer.Sequence);
        Assert.Equal(sent, answer.Payload.ToByteArray());
    }

    [Theory]
    [MemberData(nameof(VariantsOverTlsAndCleartext))]
    public async Task A_bidirectional_stream_answers_each_message_before_the_next_is_sent(string client, bool tls)
    {
        await using var proxy = await Http2DownstreamProxy.StartAsync(client, tls);
        using var channel = Channel(proxy);
        var echo = new Echo.EchoClient(channel);

        // Ping-pong: a message held anywhere on the way (a buffer waiting to fill, a body sent only at its end) stalls the
        // call until its deadline. One deadline for the hundred round trips, six caps long: quiet, they take 0.1 s; a
        // loaded CI run once took more than one cap.
        using var call = echo.Bidi(new CallOptions(deadline: DateTime.UtcNow + (Wire.Cap * 6)));
        for (var i = 0; i < 100; i++)
        {
            await call.RequestStream.WriteAsync(new Message { Payload = Payload(100 + i), Sequence = i });
            Assert.True(await call.ResponseStream.MoveNext(), $"no answer to message {i}");
            Assert.Equal(i, call.ResponseStream.Current.Sequence);
            Assert.Equal(Payload(100 + i), call.ResponseStream.Current.Payload);
        }
        await call.RequestStream.CompleteAsync();

        Assert.False(await call.ResponseStream.MoveNext());
        Assert.Equal(StatusCode.OK, call.GetStatus().StatusCode);
    }

    [Theory]
    [MemberData(nameof(VariantsOverTlsAndCleartext))]
    public async Task A_failed_call_keeps_its_status_and_message(string client, bool tls)
    {
        await using var proxy = await Http2DownstreamProxy.StartAsync(client, tls);
        using var channel = Channel(proxy);
        var echo = new Echo.EchoClient(channel);

        // The origin fails before any message: a trailers-only response (HEADERS with END_STREAM, grpc-status in it).
        var notFound = await Assert.ThrowsAsync<RpcException>(() =>
            echo.FailAsync(new FailRequest { Code = (int)StatusCode.NotFound, Detail = "no such thing: é and ✓" }, Capped).ResponseAsync);
        var denied = await Assert.ThrowsAsync<RpcException>(() =>
            echo.FailAsync(new FailRequest { Code = (int)StatusCode.PermissionDenied, Detail = "denied" }, Capped).ResponseAsync);

        Assert.Equal(StatusCode.NotFound, notFound.StatusCode);
        Assert.Equal("no such thing: é and ✓", notFound.Status.Detail);
        Assert.Equal(StatusCode.PermissionDenied, denied.StatusCode);
        Assert.Equal("denied", denied.Status.Detail);
    }

    [Theory]
    [MemberData(nameof(VariantsOverTlsAndCleartext))]
    public async Task A_deadline_reaches_the_origin_and_ends_the_call_with_DeadlineExceeded(string client, bool tls)
    {
        await using var proxy = await Http2DownstreamProxy.StartAsync(client, tls);
        using var channel = Channel(proxy);
        var echo = new Echo.EchoClient(channel);
        // Both hops' connections (and handshakes) first: the deadline must meet a call that reached the origin, not one
        // still connecting on a loaded machine.
        await echo.UnaryAsync(new Message(), Capped);

        var e = await Assert.ThrowsAsync<RpcException>(() =>
            echo.HangAsync(new Message(), new CallOptions(deadline: DateTime.UtcNow.AddSeconds(2))).ResponseAsync);

        Assert.Equal(StatusCode.DeadlineExceeded, e.StatusCode);
        // The origin got grpc-timeout (its call had a deadline) and its call ended: by the deadline or the reset.
        Assert.True(proxy.Origin.Record.Deadlines.TryPeek(out var deadline), "the call never reached the origin");
        Assert.NotEqual(DateTime.MaxValue, deadline);
        await proxy.Origin.Record.HangCancelled.Task.WaitAsync(Wire.Cap);
    }

    [Theory]
    [MemberData(nameof(VariantsOverTlsAndCleartext))]
    public async Task A_cancelled_call_resets_its_stream_at_the_origin(string client, bool tls)
    {
        await using var proxy = await Http2DownstreamProxy.StartAsync(client, tls);
        using var channel = Channel(proxy);
        var echo = new Echo.EchoClient(channel);
        using var cancel = new CancellationTokenSource();

        // No deadline: only the client's cancellation, carried by the proxy as a reset of the downstream stream, can end
        // the origin's call.
        var call = echo.HangAsync(new Message(), new CallOptions(cancellationToken: cancel.Token));
        await proxy.Origin.Record.HangStarted.Task.WaitAsync(Wire.Cap);
        await cancel.CancelAsync();

        var e = await Assert.ThrowsAsync<RpcException>(() => call.ResponseAsync);
        Assert.Equal(StatusCode.Cancelled, e.StatusCode);
        await proxy.Origin.Record.HangCancelled.Task.WaitAsync(Wire.Cap);
        Assert.True(proxy.Origin.Record.Deadlines.TryPeek(out var deadline));
        Assert.Equal(DateTime.MaxValue, deadline);
    }

    [Theory]
    [MemberData(nameof(VariantsOverTlsAndCleartext))]
    public async Task Response_headers_sent_before_any_message_reach_the_client_at_once(string client, bool tls)
    {
        await using var proxy = await Http2DownstreamProxy.StartAsync(client, tls);
        using var channel = Channel(proxy);
        var echo = new Echo.EchoClient(channel);
        using var cancel = new CancellationTokenSource();

        // The origin sends HEADERS and then nothing: a proxy that holds the head until the first body bytes stalls here.
        using var call = echo.HeadersThenHang(new Message(), new CallOptions(cancellationToken: cancel.Token));
        var headers = await call.ResponseHeadersAsync.WaitAsync(Wire.Cap);
        await cancel.CancelAsync();

        Assert.Equal("yes", headers.GetValue("x-early"));
        await proxy.Origin.Record.HangCancelled.Task.WaitAsync(Wire.Cap);
    }

    [Fact]
    public async Task Llhttp_refuses_an_http2_downstream_instead_of_pretending()
    {
        var result = await ProgramRun.RunAsync(["--downstream", "https://127.0.0.1:9", "--downstreamProtocol", "h2", "--client", "llhttp"]);

        Assert.True(result.ExitCode == 2, result.ToString());
        Assert.Equal(["LLRP: --downstreamProtocol h2 needs --client httpclient, httpclient-httpcontext or yarp: llhttp has no HTTP/2 client yet."], result.Errors);
    }
}
