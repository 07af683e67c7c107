using System.Security.Cryptography;
using LLRP.Tests.Infrastructure;
using Microsoft.AspNetCore.Builder;

namespace LLRP.Tests;

/// <summary>
/// Uploads through the HttpMessageInvoker variants to src/Downstream, which answers while the body still arrives:
/// /echo streams the body back as it reads it, /early/413 refuses it without reading it. An early final response
/// reaches the client with its own status in both framings, because the variants ask the origin for 100 (Continue)
/// before a chunked body or a Content-Length of 1 MiB or more. An echo larger than the socket buffers hits the named known difference
/// "SocketsHttpHandler sends the whole request body before it reads the response" (docs/known-differences.md): the
/// answer is then the downstream's timeout, 504, never 408, and never a wrong body. Statuses are asserted, never
/// durations; downstreamResponseTimeout is short only to keep the known-difference rows short.
/// </summary>
public sealed class InvokerDuplexTests(InvokerDuplexFarm farm) : IClassFixture<InvokerDuplexFarm>
{
    private const int MiB = 1024 * 1024;
    private const int Piece = 64 * 1024;

    // Hang guard only: a large upload through a shared machine may take a while.
    private static readonly TimeSpan s_cap = TimeSpan.FromSeconds(120);

    public static TheoryData<string, int, bool> Uploads()
    {
        var data = new TheoryData<string, int, bool>();
        foreach (var variant in InvokerDuplexFarm.Variants)
        {
            foreach (var size in (int[])[1, 10, 25])
            {
                data.Add(variant, size, false);
                data.Add(variant, size, true);
            }
        }
        return data;
    }

    public static TheoryData<string, int, bool> EarlyRefusals()
    {
        var data = new TheoryData<string, int, bool>();
        foreach (var variant in InvokerDuplexFarm.Variants)
        {
            // 40 MiB is beyond Kestrel's 30 MB MaxRequestBodySize, which /early keeps: after its answer Kestrel does not
            // read so much, it closes, so a proxy that sent the whole body before it read the answer would see a reset
            // (502) instead of the 413.
            foreach (var size in (int[])[1, 25, 40])
            {
                data.Add(variant, size, false);
                data.Add(variant, size, true);
            }
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Uploads))]
    public async Task Echoed_upload_comes_back_intact_or_as_the_known_difference_504(string variant, int mebibytes, bool chunked)
    {
        var body = Body(mebibytes * MiB, seed: mebibytes * 2 + (chunked ? 1 : 0));
        await using var client = await RawClient.ConnectAsync(await farm.ProxyAsync(variant));

        var sending = SendAsync(client, "/echo", body, chunked);
        // Read while sending, as a client of a streaming origin must.
        var response = await client.ReadResponseAsync("POST", s_cap);
        await sending;

        Assert.NotNull(response);
        // Within what the origin and the kernel buffer, SocketsHttpHandler's send completes before it reads (a chunked
        // body waits for the origin's 100 (Continue) first, then goes the same way) and the echo comes back. Beyond the
        // buffers the handler's send and the origin's answer wait for each other (the known difference): the exchange
        // ends at downstreamResponseTimeout as the downstream's failure. 1 MiB usually fits, but the kernel's buffer
        // autotuning does not promise it (a busy run of the suite has seen the 504 there too), and a machine with
        // larger buffers may complete 25 MiB: so either answer may come at any size, and a 200 must carry the intact
        // echo on a connection that still serves the next request.
        Assert.True(response.Status is 504 or 200, $"{variant}: expected 504 (known difference) or the intact echo, got {response}");
        if (response.Status == 200)
        {
            AssertIntactEcho(response, body);
            await AssertNextRequestIsAnsweredAsync(client, variant);
        }
    }

    [Theory]
    [MemberData(nameof(EarlyRefusals))]
    public async Task Early_413_reaches_the_client_as_413(string variant, int mebibytes, bool chunked)
    {
        // A chunked body, and a Content-Length of 1 MiB or more, is forwarded with "Expect: 100-continue": the 413 comes
        // back before the body is sent, whatever the size, even beyond the 30 MB Kestrel would read and discard.
        var body = Body(mebibytes * MiB, seed: 100 + mebibytes);
        await using var client = await RawClient.ConnectAsync(await farm.ProxyAsync(variant));

        var sending = SendAsync(client, "/early/413", body, chunked);
        var response = await client.ReadResponseAsync("POST", s_cap);
        await sending;

        Assert.NotNull(response);
        Assert.True(response.Status == 413, $"{variant}: expected the origin's 413, got {response}");
        Assert.True(response.Complete, $"{variant}: the early 413 ended early: {response}");
        Assert.StartsWith("413: answered before reading the request body", response.BodyText, StringComparison.Ordinal);

        // Nothing out of frame: the unsent rest of the body was discarded, so the connection either carries the next
        // request as a request, or it was closed (RFC 9112 §9.6). Body bytes must never be read as a request head.
        if (!client.SendFailed)
        {
            await AssertNextRequestIsAnsweredAsync(client, variant, orClosed: true);
        }
    }

    [Theory]
    [MemberData(nameof(VariantRows))]
    public async Task Early_413_answers_a_client_that_expects_100_continue_without_asking_for_its_body(string variant)
    {
        await using var client = await RawClient.ConnectAsync(await farm.ProxyAsync(variant));

        // RFC 9110 §10.1.1: the client waits for 100 (Continue); the origin's final answer comes instead.
        await client.SendAsync($"POST /early/413 HTTP/1.1\r\nHost: upload.example\r\nExpect: 100-continue\r\nContent-Length: {25 * MiB}\r\n\r\n");
        var response = await client.ReadResponseAsync("POST", s_cap);

        Assert.NotNull(response);
        Assert.True(response.Status == 413, $"{variant}: expected the origin's 413, got {response}");
        Assert.DoesNotContain(response.Interim, r => r.Status == 100);
        // The client was never told to send its body, so the proxy cannot tell what comes next: it closes.
        Assert.Equal(Ending.Closed, await client.WaitForEndAsync(s_cap));
    }

    public static TheoryData<string> VariantRows()
    {
        var data = new TheoryData<string>();
        foreach (var variant in InvokerDuplexFarm.Variants)
        {
            data.Add(variant);
        }
        return data;
    }

    /// <summary>
    /// The connection carries a next request and its answer, or, with <paramref name="orClosed"/>, was closed without a
    /// byte after the previous response.
    /// </summary>
    private static async Task AssertNextRequestIsAnsweredAsync(RawClient client, string variant, bool orClosed = false)
    {
        await client.SendAsync("GET / HTTP/1.1\r\nHost: upload.example\r\n\r\n");
        var next = client.SendFailed ? null : await client.ReadResponseAsync(cap: s_cap);
        if (next is null && orClosed)
        {
            Assert.Equal(Ending.Closed, await client.WaitForEndAsync(s_cap));
            return;
        }
        Assert.True(next is { Status: 200, Complete: true }, $"{variant}: the next request on the connection got {next}");
    }

    private static void AssertIntactEcho(RawResponse response, byte[] body)
    {
        Assert.True(response.Status == 200, $"expected the echo, got {response}");
        Assert.True(response.Complete, $"the echo ended early: {response}");
        Assert.Equal(body.Length, response.Body.Length);
        Assert.Equal(Convert.ToHexStringLower(SHA256.HashData(body)), Convert.ToHexStringLower(SHA256.HashData(response.Body)));
    }

    /// <summary>Sends the head and the body in pieces, on its own task, so the caller reads the response meanwhile.</summary>
    private static Task SendAsync(RawClient client, string path, byte[] body, bool chunked) => Task.Run(async () =>
    {
        var framing = chunked ? "Transfer-Encoding: chunked" : $"Content-Length: {body.Length}";
        await client.SendAsync($"POST {path} HTTP/1.1\r\nHost: upload.example\r\n{framing}\r\n\r\n");
        for (var offset = 0; offset < body.Length && !client.SendFailed; offset += Piece)
        {
            var piece = body.AsSpan(offset, Math.Min(Piece, body.Length - offset)).ToArray();
            await client.SendAsync(chunked ? [.. Wire.Bytes($"{piece.Length:x}\r\n"), .. piece, .. "\r\n"u8] : piece);
        }
        if (chunked)
        {
            await client.SendAsync("0\r\n\r\n");
        }
    });

    private static byte[] Body(int size, int seed)
    {
        var body = new byte[size];
        new Random(seed).NextBytes(body);
        return body;
    }
}

/// <summary>
/// Class fixture: one src/Downstream and, started on first use, one proxy per HttpMessageInvoker variant in front of
/// it, with a downstreamResponseTimeout short enough that the known-difference rows end quickly.
/// </summary>
public sealed class InvokerDuplexFarm : IAsyncLifetime
{
    public static readonly string[] Variants = ["httpclient", "httpclient-httpcontext", "yarp"];

    // Seconds: long enough for a 25 MiB echo on a loaded machine to make progress between pieces, short enough for
    // the rows that wait for it.
    private const string DownstreamResponseTimeout = "3";

    // Above the 40 MiB uploads, so that the proxy's own limit (30 MB by default) does not answer them first.
    private const string MaxRequestBodySize = "67108864";

    private readonly Dictionary<string, Task<WebApplication>> _proxies = [];
    private readonly object _lock = new();
    private DownstreamUnderTest? _downstream;

    public async Task InitializeAsync() => _downstream = await DownstreamUnderTest.StartAsync();

    public async Task<Uri> ProxyAsync(string variant)
    {
        Task<WebApplication> task;
        lock (_lock)
        {
            if (!_proxies.TryGetValue(variant, out task!))
            {
                task = StartAsync(variant);
                _proxies[variant] = task;
            }
        }
        return new Uri(LLRP.Hosting.ProxyHost.Addresses(await task).First());
    }

    private async Task<WebApplication> StartAsync(string variant)
    {
        var app = LLRP.Hosting.ProxyHost.Build(
        [
            "--urls", "http://127.0.0.1:0",
            "--downstream", _downstream!.Url.GetLeftPart(UriPartial.Authority),
            "--client", variant,
            "--downstreamResponseTimeout", DownstreamResponseTimeout,
            "--maxRequestBodySize", MaxRequestBodySize,
        ]);
        await app.StartAsync(Wire.Deadline(TimeSpan.FromSeconds(30)));
        return app;
    }

    public async Task DisposeAsync()
    {
        foreach (var task in _proxies.Values)
        {
            var app = await task;
            await app.StopAsync(Wire.Deadline());
            await app.DisposeAsync();
        }
        if (_downstream is not null)
        {
            await _downstream.DisposeAsync();
        }
    }
}
