using Xunit;
using static LLHttp.Tests.TestKit;

namespace LLHttp.Tests;

/// <summary>RFC 9112 §6.3 message body length, rule by rule.</summary>
public class BodyFramingTests
{
    [Theory]
    [InlineData("GET", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789", ResponseBodyFraming.ContentLength, "0123456789", true)]
    [InlineData("GET", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", ResponseBodyFraming.ContentLength, "", true)]
    [InlineData("GET", "HTTP/1.1 200 OK\r\nContent-Length: 00003\r\n\r\nabc", ResponseBodyFraming.ContentLength, "abc", true)]
    [InlineData("GET", "HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n\r\nabc", ResponseBodyFraming.ContentLength, "abc", true)] // RFC 9110 §8.6 identical list
    [InlineData("GET", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", ResponseBodyFraming.ContentLength, "abc", true)]
    [InlineData("HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", ResponseBodyFraming.None, "", true)] // rule 1
    [InlineData("HEAD", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", ResponseBodyFraming.None, "", true)]
    [InlineData("GET", "HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n", ResponseBodyFraming.None, "", true)]
    [InlineData("GET", "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n", ResponseBodyFraming.None, "", true)]
    [InlineData("GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", ResponseBodyFraming.Chunked, "abc", true)]
    [InlineData("GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", ResponseBodyFraming.Chunked, "abc", true)]
    [InlineData("GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: CHUNKED\r\n\r\n3\r\nabc\r\n0\r\n\r\n", ResponseBodyFraming.Chunked, "abc", true)]
    // Rule 3: TE overrides CL and the connection must close afterwards (smuggling defence).
    [InlineData("GET", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", ResponseBodyFraming.Chunked, "abc", false)]
    // Rule 8: read until close; not reusable.
    [InlineData("GET", "HTTP/1.1 200 OK\r\n\r\nuntil close", ResponseBodyFraming.CloseDelimited, "until close", false)]
    [InlineData("GET", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\nuntil close", ResponseBodyFraming.CloseDelimited, "until close", false)]
    [InlineData("GET", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", ResponseBodyFraming.ContentLength, "ok", false)]
    [InlineData("GET", "HTTP/1.1 200 OK\r\nConnection: x, Close\r\nContent-Length: 2\r\n\r\nok", ResponseBodyFraming.ContentLength, "ok", false)]
    [InlineData("GET", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", ResponseBodyFraming.ContentLength, "ok", false)]
    public async Task Framing_follows_rfc9112_6_3(string method, string response, ResponseBodyFraming framing, string body, bool reusable)
    {
        var result = await RunAllSplitsAsync(response, method);
        Assert.Equal(framing, result.Framing);
        Assert.Equal(body, result.Body);
        Assert.Equal(reusable, result.Reusable);
    }

    [Theory]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd")]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 3, 4\r\n\r\nabcd")]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: +3\r\n\r\nabc")]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 3a\r\n\r\nabc")]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 0x3\r\n\r\nabc")]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 3 3\r\n\r\nabc")]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775808\r\n\r\n")] // long.MaxValue + 1
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n")]
    public Task Invalid_content_length_is_rejected(string response)
        => AssertErrorAllSplitsAsync(response, LLHttpError.InvalidContentLength);

    [Theory]
    [InlineData("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked;x=1\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nTransfer-Encoding:\r\n\r\n")]
    [InlineData("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")] // RFC 9112 §6.1 faulty framing
    public Task Invalid_transfer_encoding_is_rejected(string response)
        => AssertErrorAllSplitsAsync(response, LLHttpError.InvalidTransferEncoding);

    [Fact]
    public async Task Large_content_length_body_reads_straight_into_caller_buffer()
    {
        string payload = new('x', 100_000);
        var result = await RunAsync(
            [System.Text.Encoding.ASCII.GetBytes("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + payload[..10]), System.Text.Encoding.ASCII.GetBytes(payload[10..])]);
        Assert.Equal(payload, result.Body);
        Assert.True(result.Reusable);
    }

    [Theory]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n012345678")]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab")]
    [InlineData("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n0\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n0\r\nTrailer: x\r\n")]
    public Task Body_cut_short_is_truncation_not_end(string response)
        => AssertErrorAllSplitsAsync(response, LLHttpError.ResponseBodyTruncated);
}
