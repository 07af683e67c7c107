using System.Text;
using Xunit;
using static LLHttp.Tests.TestKit;

namespace LLHttp.Tests;

public class RequestTests
{
    private const string Ok = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";

    [Fact]
    public async Task Get_head_is_written_exactly_in_one_send()
    {
        var transport = new ScriptedTransport(Ok);
        using var connection = Connect(transport);
        connection.StartRequest("GET"u8, "/a/b?c=d&e"u8, "example.com:8080"u8);
        connection.WriteHeader("Accept"u8, "*/*"u8);
        connection.WriteHeader("X-Empty"u8, ""u8);
        connection.WriteHeader("X-Obs"u8, "caf\u00e9\ttab"u8);
        await connection.SendRequestAsync();

        Assert.Single(transport.Sends);
        Assert.Equal(
            "GET /a/b?c=d&e HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\nX-Empty: \r\nX-Obs: caf\u00c3\u00a9\ttab\r\n\r\n",
            transport.SentText);
    }

    [Fact]
    public async Task Small_body_leaves_with_the_head_in_one_send()
    {
        var transport = new ScriptedTransport(Ok);
        using var connection = Connect(transport);
        connection.StartRequest("POST"u8, "/"u8, "h"u8);
        connection.WriteHeader("Content-Type"u8, "text/plain"u8);
        await connection.SendRequestAsync("hello"u8.ToArray());

        Assert.Single(transport.Sends);
        Assert.Equal("POST / HTTP/1.1\r\nHost: h\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello", transport.SentText);
        await connection.ReadResponseHeadAsync();
        Assert.True(connection.IsReusable);
    }

    [Fact]
    public async Task Large_body_is_sent_after_the_head()
    {
        var transport = new ScriptedTransport(Ok);
        using var connection = Connect(transport);
        connection.StartRequest("PUT"u8, "/"u8, "h"u8);
        byte[] body = new byte[LLHttpOptions.Default.MaxCoalescedBodyLength + 1];
        await connection.SendRequestAsync(body);

        Assert.Equal(2, transport.Sends.Count);
        Assert.Equal($"PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: {body.Length}\r\n\r\n", Encoding.Latin1.GetString(transport.Sends[0]));
        Assert.Equal(body, transport.Sends[1]);
    }

    [Fact]
    public async Task Chunked_body_is_framed_by_the_client()
    {
        var transport = new ScriptedTransport(Ok);
        using var connection = Connect(transport, new LLHttpOptions { MaxCoalescedBodyLength = 8 });
        connection.StartRequest("POST"u8, "/up"u8, "h"u8);
        connection.StartRequestBody(RequestBodyFraming.Chunked);
        Assert.Empty(transport.Sends); // the head waits for the first body bytes
        await connection.WriteBodyAsync("abc"u8.ToArray());
        await connection.WriteBodyAsync(Array.Empty<byte>()); // not a last chunk
        await connection.WriteBodyAsync("0123456789ABCDEFG"u8.ToArray()); // larger than the coalescing limit
        await connection.CompleteRequestAsync();

        Assert.Equal(
            "POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n11\r\n0123456789ABCDEFG\r\n0\r\n\r\n",
            transport.SentText);
        Assert.Equal(4, transport.Sends.Count); // head+chunk, header, data, CRLF+last chunk
        var head = await connection.ReadResponseHeadAsync();
        Assert.Equal(200, head.StatusCode);
        Assert.True(connection.IsReusable);
    }

    [Fact]
    public async Task Content_length_body_is_streamed_and_counted()
    {
        var transport = new ScriptedTransport(Ok);
        using var connection = Connect(transport);
        connection.StartRequest("POST"u8, "/"u8, "h"u8);
        connection.StartRequestBody(RequestBodyFraming.ContentLength, 6);
        await connection.FlushAsync();
        await connection.WriteBodyAsync("abc"u8.ToArray());
        await connection.WriteBodyAsync("def"u8.ToArray());
        await connection.CompleteRequestAsync();
        Assert.Equal("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 6\r\n\r\nabcdef", transport.SentText);
        await connection.ReadResponseHeadAsync();
        Assert.True(connection.IsReusable);
    }

    [Fact]
    public async Task More_bytes_than_content_length_poisons_the_connection()
    {
        var transport = new ScriptedTransport(Ok);
        using var connection = Connect(transport);
        connection.StartRequest("POST"u8, "/"u8, "h"u8);
        connection.StartRequestBody(RequestBodyFraming.ContentLength, 3);
        var e = await Assert.ThrowsAsync<LLHttpException>(async () => await connection.WriteBodyAsync("abcd"u8.ToArray()));
        Assert.Equal(LLHttpError.RequestBodyLengthMismatch, e.Error);
        Assert.False(connection.IsReusable);
        Assert.True(transport.Disposed);
        Assert.Empty(transport.Sends); // nothing of the oversized write left
        var again = Assert.Throws<LLHttpException>(() => connection.StartRequest("GET"u8, "/"u8, "h"u8));
        Assert.Equal(LLHttpError.ConnectionAborted, again.Error);
    }

    [Fact]
    public async Task Fewer_bytes_than_content_length_poisons_the_connection()
    {
        var transport = new ScriptedTransport(Ok);
        using var connection = Connect(transport);
        connection.StartRequest("POST"u8, "/"u8, "h"u8);
        connection.StartRequestBody(RequestBodyFraming.ContentLength, 3);
        await connection.WriteBodyAsync("ab"u8.ToArray());
        var e = await Assert.ThrowsAsync<LLHttpException>(async () => await connection.CompleteRequestAsync());
        Assert.Equal(LLHttpError.RequestBodyLengthMismatch, e.Error);
        Assert.False(connection.IsReusable);
        Assert.True(transport.Disposed);
    }

    [Theory]
    [InlineData("GET", "/a b", "h")]
    [InlineData("GET", "/a\r\nX: y", "h")]
    [InlineData("GET", "", "h")]
    [InlineData("G ET", "/", "h")]
    [InlineData("", "/", "h")]
    [InlineData("GET", "/", "h\r\nX: y")]
    [InlineData("GET", "/", "")]
    public void Request_line_injection_is_refused(string method, string target, string authority)
    {
        using var connection = Connect(new ScriptedTransport());
        Assert.Throws<ArgumentException>(() => connection.StartRequest(
            Encoding.Latin1.GetBytes(method), Encoding.Latin1.GetBytes(target), Encoding.Latin1.GetBytes(authority)));
        Assert.True(connection.IsReusable); // nothing was sent
    }

    [Theory]
    [InlineData("X-A", "a\r\nInjected: 1")]
    [InlineData("X-A", "a\nb")]
    [InlineData("X-A", "a\0b")]
    [InlineData("X A", "1")]
    [InlineData("X-A:", "1")]
    [InlineData("", "1")]
    [InlineData("host", "other")]
    [InlineData("Content-Length", "5")]
    [InlineData("transfer-encoding", "chunked")]
    public void Header_injection_and_framing_headers_are_refused(string name, string value)
    {
        using var connection = Connect(new ScriptedTransport());
        connection.StartRequest("GET"u8, "/"u8, "h"u8);
        Assert.Throws<ArgumentException>(() => connection.WriteHeader(Encoding.Latin1.GetBytes(name), Encoding.Latin1.GetBytes(value)));
    }

    [Fact]
    public void Oversized_request_head_is_refused()
    {
        var transport = new ScriptedTransport();
        using var connection = Connect(transport, new LLHttpOptions { MaxRequestHeadLength = 256 });
        connection.StartRequest("GET"u8, "/"u8, "h"u8);
        connection.WriteHeader("X-Big"u8, Enumerable.Repeat((byte)'a', 240).ToArray());
        var e = Assert.Throws<LLHttpException>(() => connection.SendRequestAsync());
        Assert.Equal(LLHttpError.RequestHeadTooLarge, e.Error);
        Assert.Empty(transport.Sends);
    }

    [Fact]
    public async Task Calls_out_of_order_are_refused()
    {
        using var connection = Connect(new ScriptedTransport(Ok));
        Assert.Throws<InvalidOperationException>(() => connection.WriteHeader("A"u8, "b"u8));
        Assert.Throws<InvalidOperationException>(() => connection.ReadResponseHeadAsync());
        connection.StartRequest("POST"u8, "/"u8, "h"u8);
        Assert.Throws<InvalidOperationException>(() => connection.StartRequest("GET"u8, "/"u8, "h"u8));
        connection.StartRequestBody(RequestBodyFraming.Chunked);
        Assert.Throws<InvalidOperationException>(() => connection.ReadResponseHeadAsync()); // head still buffered
        await connection.FlushAsync();
        await connection.ReadResponseHeadAsync(); // the downstream may answer before the body is complete
        Assert.False(connection.IsReusable); // request body not finished
        await connection.CompleteRequestAsync();
        Assert.True(connection.IsReusable);
    }
}
