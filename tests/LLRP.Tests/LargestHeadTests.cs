using LLRP.Tests.Infrastructure;

namespace LLRP.Tests;

/// <summary>
/// A request head as large as the options allow (maxRequestLineSize 1 MiB, maxRequestHeadersTotalSize 512 KiB) fits
/// what a client connection holds unread (1 MiB: the epoll transport's MaxUnreadRequestBytes, Kestrel's
/// MaxRequestBufferSize with the runtime's engine), because the request side consumes a head line by line.
/// </summary>
public sealed class LargestHeadTests(LargestHeadProxies farm) : IClassFixture<LargestHeadProxies>
{
    // llhttp on both socket engines. The HttpClient-based variants cannot carry such a target: a System.Uri holds at
    // most 65,519 characters.
    public static TheoryData<string> Variant => new() { "llhttp", "llhttp-runtime-engine" };

    [Theory, MemberData(nameof(Variant))]
    public async Task Forwards_a_head_as_large_as_the_limits_allow(string variant)
    {
        var p = await farm.GetAsync(variant);
        // "GET " + target + " HTTP/1.1\r\n": a request line of exactly maxRequestLineSize bytes.
        var target = "/" + Wire.BodyText(LargestHeadProxies.MaxRequestLineSize - 16);
        // Four fields of 100 KB: 400 KB of the 512 KiB the fields may take; with the line, 1.4 MB in all.
        var fields = string.Concat(Enumerable.Range(0, 4).Select(i => $"X-Big{i}: {Wire.BodyText(100_000)}\r\n"));
        await Verdict.ForwardedAsync(p, $"GET {target} HTTP/1.1\r\nHost: example.com\r\n{fields}\r\n");
    }
}
