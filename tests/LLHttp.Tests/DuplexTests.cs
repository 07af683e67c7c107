using System.Text;
using Xunit;

namespace LLHttp.Tests;

/// <summary>
/// Full duplex: the response is read while the request body is still open (an origin answering as it reads, or early,
/// RFC 9110 §15 / RFC 9112 §9.3). The connection is reusable only once both sides completed, in either order, and a
/// failed body send leaves the response readable. Every response runs over every split of its bytes.
/// </summary>
public sealed class DuplexTests
{
    private const string EarlyResponse = "HTTP/1.1 413 Content Too Large\r\nContent-Length: 3\r\n\r\nbig";

    [Fact]
    public async Task Early_response_is_read_before_the_body_ends_and_the_connection_is_not_reused()
    {
        foreach (var split in TestKit.AllSplits(EarlyResponse))
        {
            var transport = new ScriptedTransport(split);
            using var connection = TestKit.Connect(transport);
            connection.StartRequest("POST"u8, "/upload"u8, "origin"u8);
            connection.StartRequestBody(RequestBodyFraming.ContentLength, 10);
            await connection.WriteBodyAsync("hello"u8.ToArray());

            var head = await connection.ReadResponseHeadAsync();
            Assert.Equal(413, head.StatusCode);
            Assert.Equal("big", await ReadBodyAsync(connection));
            // Half the body was never sent: the connection is out of frame.
            Assert.False(connection.IsReusable);
        }
    }

    [Fact]
    public async Task Response_completing_before_the_request_leaves_the_connection_reusable_once_the_request_completes()
    {
        foreach (var split in TestKit.AllSplits("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        {
            var transport = new ScriptedTransport(split);
            using var connection = TestKit.Connect(transport);
            connection.StartRequest("POST"u8, "/upload"u8, "origin"u8);
            connection.StartRequestBody(RequestBodyFraming.Chunked);
            await connection.WriteBodyAsync("hello"u8.ToArray());

            var head = await connection.ReadResponseHeadAsync();
            Assert.Equal(200, head.StatusCode);
            Assert.Equal("ok", await ReadBodyAsync(connection));
            Assert.False(connection.IsReusable);

            await connection.CompleteRequestAsync();
            Assert.True(connection.IsReusable);
            Assert.EndsWith("5\r\nhello\r\n0\r\n\r\n", transport.SentText, StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task Failed_body_send_leaves_the_response_readable_and_the_request_failed()
    {
        foreach (var split in TestKit.AllSplits(EarlyResponse))
        {
            // The head and the first piece leave; then the origin, having answered, resets its reading side.
            var transport = new ScriptedTransport(split) { SucceedingSends = 1 };
            using var connection = TestKit.Connect(transport);
            connection.StartRequest("POST"u8, "/upload"u8, "origin"u8);
            connection.StartRequestBody(RequestBodyFraming.ContentLength, 10);
            await connection.WriteBodyAsync("hello"u8.ToArray());

            var failed = await Assert.ThrowsAsync<LLHttpException>(async () => await connection.WriteBodyAsync("world"u8.ToArray()));
            Assert.Equal(LLHttpError.SendFailed, failed.Error);
            Assert.False(transport.Disposed);

            var head = await connection.ReadResponseHeadAsync();
            Assert.Equal(413, head.StatusCode);
            Assert.Equal("big", await ReadBodyAsync(connection));
            Assert.False(connection.IsReusable);
            var again = await Assert.ThrowsAsync<LLHttpException>(async () => await connection.CompleteRequestAsync());
            Assert.Equal(LLHttpError.SendFailed, again.Error);
        }
    }

    private static async Task<string> ReadBodyAsync(LLHttpConnection connection)
    {
        var body = new StringBuilder();
        var buffer = new byte[4];
        int n;
        while ((n = await connection.ReadBodyAsync(buffer)) != 0)
        {
            body.Append(Encoding.Latin1.GetString(buffer, 0, n));
        }
        return body.ToString();
    }
}
