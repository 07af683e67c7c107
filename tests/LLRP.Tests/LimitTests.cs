using LLRP.Tests.Infrastructure;

namespace LLRP.Tests;

/// <summary>Limits: RFC 9110 §15.5.14/15, RFC 6585 §5. Small limits via options.</summary>
public sealed class LimitTests(LimitedProxies farm) : IClassFixture<LimitedProxies>
{
    public static TheoryData<string> Variant => Variants.Each();

    private static string Fields(int count, int valueLength = 10) =>
        string.Concat(Enumerable.Range(0, count).Select(i => $"X-F{i}: {Wire.BodyText(valueLength)}\r\n"));

    [Theory, MemberData(nameof(Variant))]
    public async Task Accepts_request_line_under_limit(string variant)
    {
        var p = await farm.GetAsync(variant);
        var target = "/" + Wire.BodyText(LimitedProxies.MaxRequestLineSize - 100);
        await Verdict.ForwardedAsync(p, $"GET {target} HTTP/1.1\r\nHost: example.com\r\n\r\n");
    }

    // RFC 9110 §15.5.15: 414 URI Too Long.
    [Theory, MemberData(nameof(Variant))]
    public async Task Rejects_request_line_over_limit_with_414(string variant)
    {
        var p = await farm.GetAsync(variant);
        var target = "/" + Wire.BodyText(LimitedProxies.MaxRequestLineSize + 100);
        await Verdict.RejectedAsync(p, $"GET {target} HTTP/1.1\r\nHost: example.com\r\n\r\n", [414]);
    }

    [Theory, MemberData(nameof(Variant))]
    public async Task Accepts_headers_under_limits(string variant)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.ForwardedAsync(p, $"GET / HTTP/1.1\r\nHost: example.com\r\n{Fields(LimitedProxies.MaxRequestHeaderCount - 5, 100)}\r\n");
    }

    // RFC 6585 §5: 431 Request Header Fields Too Large — total size and count.
    public static TheoryData<string, string> TooLarge => Variants.Cross(new[]
    {
        $"X-Big: {Wire.BodyText(LimitedProxies.MaxRequestHeadersTotalSize + 100)}\r\n",
        Fields(10, LimitedProxies.MaxRequestHeadersTotalSize / 8),
        Fields(LimitedProxies.MaxRequestHeaderCount + 5, 2),
        Fields(LimitedProxies.MaxRequestHeaderCount * 3, 2),
    });

    [Theory, MemberData(nameof(TooLarge))]
    public async Task Rejects_too_large_or_too_many_headers_with_431(string variant, string fields)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, $"GET / HTTP/1.1\r\nHost: example.com\r\n{fields}\r\n", [431]);
    }

    [Theory, MemberData(nameof(Variant))]
    public async Task Accepts_body_at_limit(string variant)
    {
        var p = await farm.GetAsync(variant);
        var size = LimitedProxies.MaxRequestBodySize;
        await Verdict.ForwardedAsync(p, $"POST / HTTP/1.1\r\nHost: example.com\r\nContent-Length: {size}\r\n\r\n{Wire.BodyText(size)}");
    }

    // RFC 9110 §15.5.14: 413 Content Too Large when Content-Length exceeds maxRequestBodySize.
    public static TheoryData<string, string> TooLong => Variants.Cross(new[]
    {
        $"Content-Length: {LimitedProxies.MaxRequestBodySize + 1}\r\n\r\n{Wire.BodyText(LimitedProxies.MaxRequestBodySize + 1)}",
        "Content-Length: 999999999999\r\n\r\n",
    });

    [Theory, MemberData(nameof(TooLong))]
    public async Task Rejects_content_length_over_limit_with_413(string variant, string rest)
    {
        var p = await farm.GetAsync(variant);
        await Verdict.RejectedAsync(p, $"POST / HTTP/1.1\r\nHost: example.com\r\n{rest}", [413], method: "POST");
    }

    // maxResponseHeadersTotalSize: a larger downstream head is a 502.
    [Theory, MemberData(nameof(Variant))]
    public async Task Answers_502_for_too_large_downstream_head(string variant)
    {
        var p = await farm.GetAsync(variant);
        p.Downstream.Responder = _ => DownstreamReply.Ok(extraHeaders: $"X-Huge: {Wire.BodyText(LimitedProxies.MaxResponseHeadersTotalSize * 2)}\r\n");
        await using var c = await p.ConnectAsync();
        await c.SendAsync("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n");
        var r = await c.ReadResponseAsync();
        Assert.True(r?.Status == 502, $"expected 502, got {r?.ToString() ?? "a closed connection"}");
    }
}
