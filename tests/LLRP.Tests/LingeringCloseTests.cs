using LLRP.Tests.Infrastructure;

namespace LLRP.Tests;

/// <summary>
/// The lingering close (ConnectionClose): a connection the proxy closes while its client may still be sending (here a
/// 413 for a Content-Length over maxRequestBodySize, with the body on its way) gets its FIN right after the response,
/// and what the client still sends is read and discarded, so the client is not reset before it reads the response;
/// lingeringMaxBytes and lingeringTime bound the discarding. The epoll transport only: Kestrel's socket transport
/// (socketEngine=runtime) cannot half-close, and closes at once. Behind Kestrel's HTTP/1.1 layer (--frontEnd kestrel)
/// Kestrel drains the unread body itself before the connection ends; the 413 test holds that front end to the same
/// outcome.
/// </summary>
public sealed class LingeringCloseTests
{
    private const int Chunk = 64 * 1024;

    // More than the two sockets' buffers hold on loopback (Linux autotunes each up to 4-6 MiB), so the client is still
    // sending when the proxy closes, and the close's reset cannot come only after the last send.
    private const int BodyPastTheBuffers = 16 * 1024 * 1024;

    public static TheoryData<string> EpollVariants()
    {
        var data = new TheoryData<string>();
        foreach (var v in Variants.All.Where(v => !(v.Options ?? []).Contains("runtime")))
        {
            data.Add(v.Name);
        }
        data.Add(KestrelFrontEnd);
        return data;
    }

    // llhttp behind Kestrel's HTTP/1.1 layer (--frontEnd kestrel): the comparison row ends its connections lingeringly too.
    private const string KestrelFrontEnd = "llhttp-kestrel-front-end";

    private static Task<ProxyUnderTest> StartAsync(string variant, params string[] options) => variant == KestrelFrontEnd
        ? ProxyUnderTest.StartAsync(Variants.Get("llhttp"), [.. options, "--frontEnd", "kestrel"], unreachableDownstream: false)
        : ProxyUnderTest.StartAsync(Variants.Get(variant), options, unreachableDownstream: false);

    private static readonly string[] SmallBodies = ["--maxRequestBodySize", "1000"];

    [Theory]
    [MemberData(nameof(EpollVariants))]
    public async Task A_body_sent_after_its_413_is_discarded_so_the_response_is_not_reset(string variant)
    {
        await using var proxy = await StartAsync(variant, SmallBodies);
        await using var client = await proxy.ConnectAsync();

        // A client that sends its whole body before it reads: the 413 comes after the head, and the proxy closes while
        // the body keeps coming. Closed at once, the proxy's socket answers the body with a reset, which fails these
        // sends and destroys the 413 in the client's receive buffer; with the linger the body is read and discarded.
        await client.SendAsync("POST /too-large HTTP/1.1\r\nHost: linger.example\r\nContent-Length: 100000000\r\n\r\n");
        var chunk = new byte[Chunk];
        for (var sent = 0; sent < BodyPastTheBuffers && !client.SendFailed; sent += Chunk)
        {
            await client.SendAsync(chunk);
        }

        Assert.False(client.SendFailed, "a send of the body failed: the proxy closed without lingering");
        Assert.Equal(413, (await client.ReadResponseAsync("POST"))?.Status);
        // Its FIN (after its close_notify over TLS) came after the response, its reading side still open.
        Assert.Equal(Ending.Closed, await client.WaitForEndAsync());
        client.ShutdownSend();
    }

    [Fact]
    public async Task The_linger_ends_after_lingeringMaxBytes()
    {
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get("llhttp"), [.. SmallBodies, "--lingeringMaxBytes", $"{Chunk}"],
            unreachableDownstream: false);
        await using var client = await proxy.ConnectAsync();
        await client.SendAsync("POST /too-large HTTP/1.1\r\nHost: linger.example\r\nContent-Length: 100000000\r\n\r\n");
        Assert.Equal(413, (await client.ReadResponseAsync("POST"))?.Status);

        // Past the bound the proxy closes with input unread, and the client's sends fail (its socket is reset).
        var chunk = new byte[Chunk];
        using var cap = new CancellationTokenSource(Wire.Cap);
        while (!client.SendFailed && !cap.IsCancellationRequested)
        {
            await client.SendAsync(chunk);
        }
        Assert.True(client.SendFailed, "the proxy kept discarding past lingeringMaxBytes");
    }

    [Fact]
    public async Task The_linger_ends_after_lingeringTime_however_steadily_the_client_sends()
    {
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get("llhttp"), [.. SmallBodies, "--lingeringTime", "1"],
            unreachableDownstream: false);
        await using var client = await proxy.ConnectAsync();
        await client.SendAsync("POST /too-large HTTP/1.1\r\nHost: linger.example\r\nContent-Length: 100000000\r\n\r\n");
        Assert.Equal(413, (await client.ReadResponseAsync("POST"))?.Status);

        // A byte every 100 ms keeps lingeringTimeout (5 s) from ending it: only lingeringTime does, well within the cap.
        using var cap = new CancellationTokenSource(Wire.Cap);
        while (!client.SendFailed && !cap.IsCancellationRequested)
        {
            await client.SendAsync("x");
            await Task.Delay(100, CancellationToken.None);
        }
        Assert.True(client.SendFailed, "the proxy kept discarding past lingeringTime");
    }
}
