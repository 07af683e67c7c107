using System.Text;
using LLHttp.Syntax;
using Xunit;
using static LLHttp.Tests.TestKit;

namespace LLHttp.Tests;

/// <summary>RFC 9112 §7.1 chunked transfer coding.</summary>
public class ChunkedTests
{
    private const string Head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";

    [Theory]
    [InlineData("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", "hello world")]
    [InlineData("A\r\n0123456789\r\n0\r\n\r\n", "0123456789")] // uppercase hex
    [InlineData("a\r\n0123456789\r\n0\r\n\r\n", "0123456789")]
    [InlineData("0000005\r\nhello\r\n000\r\n\r\n", "hello")] // leading zeros
    [InlineData("5;name=value\r\nhello\r\n0;last\r\n\r\n", "hello")] // extensions
    [InlineData("5 ;name=\"quoted ; value\"\r\nhello\r\n0\r\n\r\n", "hello")] // BWS before ';'
    [InlineData("5\t; a = b ;c=\"\\\"\"\r\nhello\r\n0\r\n\r\n", "hello")] // RFC 9112 §7.1.1: BWS around ';' and '=', quoted-pair
    [InlineData("5\r\nhello\r\n0\r\nTrailer-A: 1\r\nTrailer-B: 2\r\n\r\n", "hello")] // trailers dropped
    [InlineData("0\r\n\r\n", "")]
    [InlineData("1\r\n\r\r\n1\r\n\n\r\n0\r\n\r\n", "\r\n")] // CR and LF as chunk data
    public async Task Decodes_under_every_split(string body, string expected)
    {
        var result = await RunAllSplitsAsync(Head + body);
        Assert.Equal(expected, result.Body);
        Assert.True(result.Reusable);
    }

    [Theory]
    [InlineData("\r\nhello\r\n0\r\n\r\n")] // no size
    [InlineData("g\r\nhello\r\n0\r\n\r\n")]
    [InlineData("-5\r\nhello\r\n0\r\n\r\n")]
    [InlineData("5\nhello\r\n0\r\n\r\n")] // bare LF after size
    [InlineData("5\rhello\r\n0\r\n\r\n")] // bare CR after size
    [InlineData("5\r\nhelloX\r\n0\r\n\r\n")] // data longer than size
    [InlineData("5\r\nhello\n0\r\n\r\n")] // bare LF after data
    [InlineData("5\r\nhello0\r\n\r\n")] // missing CRLF after data
    [InlineData("5 x\r\nhello\r\n0\r\n\r\n")] // garbage before ';'
    [InlineData("5 \r\nhello\r\n0\r\n\r\n")] // RFC 9112 §7.1.1: BWS only before ';', never before CRLF
    [InlineData("5\t\r\nhello\r\n0\r\n\r\n")]
    [InlineData("5;a=b \r\nhello\r\n0\r\n\r\n")]
    [InlineData("5;a \r\nhello\r\n0\r\n\r\n")]
    [InlineData("5;=b\r\nhello\r\n0\r\n\r\n")] // chunk-ext-name = token
    [InlineData("5;a=\r\nhello\r\n0\r\n\r\n")] // chunk-ext-val = token / quoted-string
    [InlineData("5;a=\"b\r\nhello\r\n0\r\n\r\n")] // unterminated quoted-string
    [InlineData("0\r\nNoColon\r\n\r\n")] // RFC 9112 §7.1.2: field-line = field-name ":" ...
    [InlineData("5;a\0b\r\nhello\r\n0\r\n\r\n")] // NUL in extension
    [InlineData("5;a\nb\r\nhello\r\n0\r\n\r\n")]
    [InlineData("10000000000000000\r\n")] // 2^64: overflow
    [InlineData("8000000000000000\r\n")] // 2^63: overflows long
    [InlineData("0\r\nTrailer: a\0b\r\n\r\n")]
    [InlineData("0\r\nTrailer: a\nb\r\n\r\n")]
    [InlineData("0\r\n folded\r\n\r\n")]
    [InlineData("0\r\n\rX")] // bad final CRLF
    public Task Malformed_chunked_is_rejected(string body)
        => AssertErrorAllSplitsAsync(Head + body, LLHttpError.InvalidChunkedEncoding);

    [Fact]
    public void Largest_chunk_size_that_fits_a_long_is_accepted()
    {
        var decoder = default(ChunkedDecoder);
        decoder.Reset(100, 100);
        var status = decoder.Decode("7fffffffffffffff\r\nab"u8, new byte[10], out int consumed, out int written);
        Assert.Equal(ChunkedStatus.InProgress, status);
        Assert.Equal(20, consumed);
        Assert.Equal(2, written);
        Assert.Equal(long.MaxValue - 2, decoder.DataRemaining);
    }

    [Fact]
    public async Task Extensions_are_bounded()
    {
        var options = new LLHttpOptions { InitialReceiveBufferSize = 8, MaxChunkExtensionsLength = 16 };
        var ok = await RunAsync([Encoding.ASCII.GetBytes(Head + "1;" + new string('e', 15) + "\r\na\r\n0\r\n\r\n")], options: options);
        Assert.Equal("a", ok.Body);

        // The budget is per body, so many small extensions add up.
        var e = await Assert.ThrowsAsync<LLHttpException>(
            () => RunAsync([Encoding.ASCII.GetBytes(Head + "1;eeeeeeee\r\na\r\n1;eeeeeeee\r\nb\r\n0\r\n\r\n")], options: options));
        Assert.Equal(LLHttpError.InvalidChunkedEncoding, e.Error);
    }

    [Fact]
    public async Task Trailers_are_bounded()
    {
        var options = new LLHttpOptions { InitialReceiveBufferSize = 8, MaxResponseHeadersLength = 64 };
        var e = await Assert.ThrowsAsync<LLHttpException>(
            () => RunAsync([Encoding.ASCII.GetBytes(Head + "0\r\nT: " + new string('t', 100) + "\r\n\r\n")], options: options));
        Assert.Equal(LLHttpError.InvalidChunkedEncoding, e.Error);
    }

    [Fact]
    public async Task Output_smaller_than_chunk_is_filled_across_calls()
    {
        using var connection = Connect(new ScriptedTransport(Head + "B\r\nhello world\r\n0\r\n\r\n"));
        connection.StartRequest("GET"u8, "/"u8, "h"u8);
        await connection.SendRequestAsync();
        await connection.ReadResponseHeadAsync();
        var one = new byte[1];
        var sb = new StringBuilder();
        for (int i = 0; i < 100; i++)
        {
            int n = await connection.ReadBodyAsync(one);
            if (n == 0)
            {
                break;
            }

            Assert.Equal(1, n);
            sb.Append((char)one[0]);
        }

        Assert.Equal("hello world", sb.ToString());
        Assert.True(connection.IsReusable);
    }
}
