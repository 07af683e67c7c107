using Xunit;
using static LLHttp.Tests.TestKit;

namespace LLHttp.Tests;

public class ResponseHeadTests
{
    [Theory]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 200, 1, "OK", true)]
    [InlineData("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", 404, 1, "Not Found", true)]
    [InlineData("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", 200, 1, "", true)] // reason phrase and its SP missing
    [InlineData("HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n", 200, 1, "", true)] // empty reason phrase
    [InlineData("HTTP/1.1 599 a\tb \xFF\r\nContent-Length: 0\r\n\r\n", 599, 1, "a\tb \xFF", true)] // HTAB and obs-text allowed
    [InlineData("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", 200, 0, "OK", false)] // RFC 9112 §9.3: 1.0 closes by default
    [InlineData("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", 200, 0, "OK", true)]
    public async Task Status_line_variants(string response, int status, int minor, string reason, bool reusable)
    {
        var result = await RunAllSplitsAsync(response);
        Assert.Equal(status, result.Heads[^1].Status);
        Assert.Equal(minor, result.Heads[^1].MinorVersion);
        Assert.Equal(reason, result.Heads[^1].Reason);
        Assert.Equal(reusable, result.Reusable);
    }

    [Theory]
    [InlineData("HTTP/1.1 20 OK\r\n\r\n")]
    [InlineData("HTTP/1.1 2000 OK\r\n\r\n")]
    [InlineData("HTTP/1.1 20x OK\r\n\r\n")]
    [InlineData("HTTP/1.1 099 Low\r\n\r\n")]
    [InlineData("HTTP/1.1 600 High\r\n\r\n")]
    [InlineData("HTTP/1.1  200 OK\r\n\r\n")]
    [InlineData("HTTP/1.1 200OK\r\n\r\n")]
    [InlineData("HTTP/2.0 200 OK\r\n\r\n")]
    [InlineData("HTTP/1.2 200 OK\r\n\r\n")]
    [InlineData("http/1.1 200 OK\r\n\r\n")]
    [InlineData("ICY 200 OK\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\n\r\n")] // bare LF
    [InlineData("HTTP/1.1 200 O\rK\r\n\r\n")] // bare CR
    [InlineData("HTTP/1.1 200 O\0K\r\n\r\n")]
    [InlineData("\r\nHTTP/1.1 200 OK\r\n\r\n")] // leading empty line
    public Task Malformed_status_line_is_rejected(string response)
        => AssertErrorAllSplitsAsync(response, LLHttpError.MalformedStatusLine);

    [Theory]
    [InlineData("HTTP/1.1 200 OK\r\nA: 1\r\n  folded\r\nContent-Length: 0\r\n\r\n")] // RFC 9112 §5.2 obs-fold
    [InlineData("HTTP/1.1 200 OK\r\n\tA: 1\r\nContent-Length: 0\r\n\r\n")] // whitespace before the first field
    [InlineData("HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n")] // RFC 9112 §5.1 whitespace before colon
    [InlineData("HTTP/1.1 200 OK\r\nA\t: 1\r\nContent-Length: 0\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nNoColon\r\nContent-Length: 0\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\n: empty-name\r\nContent-Length: 0\r\n\r\n")]
    [InlineData("HTTP/1.1 200 OK\r\nA(b): 1\r\nContent-Length: 0\r\n\r\n")] // not a tchar
    [InlineData("HTTP/1.1 200 OK\r\nA: x\0y\r\nContent-Length: 0\r\n\r\n")] // NUL
    [InlineData("HTTP/1.1 200 OK\r\nA: x\ry\r\nContent-Length: 0\r\n\r\n")] // bare CR inside
    [InlineData("HTTP/1.1 200 OK\r\nA: xy\r\r\nContent-Length: 0\r\n\r\n")] // CR CR LF
    [InlineData("HTTP/1.1 200 OK\r\nA: x\ny\r\nContent-Length: 0\r\n\r\n")] // bare LF ends a line
    [InlineData("HTTP/1.1 200 OK\r\nA: x\r\nContent-Length: 0\r\n\n")] // bare LF ends the head
    [InlineData("HTTP/1.1 200 OK\r\nA: x\x7Fy\r\nContent-Length: 0\r\n\r\n")] // DEL
    [InlineData("HTTP/1.1 200 OK\r\nA: x\x01y\r\nContent-Length: 0\r\n\r\n")]
    public Task Malformed_header_is_rejected(string response)
        => AssertErrorAllSplitsAsync(response, LLHttpError.MalformedHeader);

    [Fact]
    public async Task Headers_are_exposed_trimmed_in_order()
    {
        var result = await RunAllSplitsAsync(
            "HTTP/1.1 200 OK\r\nServer:  kestrel \r\nX-Empty:\r\nx-tab:\tv 1\t\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 3\r\n\r\nabc");
        Assert.Equal(["Server=kestrel", "X-Empty=", "x-tab=v 1", "Set-Cookie=a=1", "Set-Cookie=b=2", "Content-Length=3"], result.Heads[0].Headers);
        Assert.Equal("abc", result.Body);
    }

    [Fact]
    public async Task Header_accessors_and_connection_nomination()
    {
        using var connection = Connect(new ScriptedTransport(
            "HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\nconnection: ,close,  x-other \r\nContent-Length: 0\r\n\r\n"));
        connection.StartRequest("GET"u8, "/"u8, "h"u8);
        await connection.SendRequestAsync();
        var head = await connection.ReadResponseHeadAsync();
        var headers = head.Headers;

        Assert.Equal(4, headers.Count);
        Assert.True(headers.TryGetValue("x-hop"u8, out var value));
        Assert.True(value.SequenceEqual("1"u8));
        Assert.False(headers.TryGetValue("X-Missing"u8, out _));
        Assert.True(headers.IsNominatedByConnection("x-hop"u8));
        Assert.True(headers.IsNominatedByConnection("X-OTHER"u8));
        Assert.True(headers.IsNominatedByConnection("close"u8));
        Assert.False(headers.IsNominatedByConnection("X-Hop2"u8));
        Assert.False(headers.IsNominatedByConnection("Content-Length"u8));
        Assert.True(head.ConnectionClose);
        Assert.False(head.KeepAlive); // close wins over keep-alive
        Assert.False(connection.IsReusable);
    }

    [Fact]
    public async Task Head_larger_than_limit_is_rejected()
    {
        var options = new LLHttpOptions { InitialReceiveBufferSize = 8, MaxResponseHeadersLength = 128 };
        string fits = "HTTP/1.1 200 OK\r\nA: " + new string('a', 128 - 43) + "\r\nContent-Length: 0\r\n\r\n";
        Assert.Equal(128, fits.Length);
        var ok = await RunAsync(AllSplits(fits).Last(), options: options);
        Assert.Equal(200, ok.Heads[0].Status);

        string tooLarge = fits.Replace("A: a", "A: aa");
        foreach (var split in AllSplits(tooLarge))
        {
            var e = await Assert.ThrowsAsync<LLHttpException>(() => RunAsync(split, options: options));
            Assert.Equal(LLHttpError.ResponseHeadTooLarge, e.Error);
        }

        // A head that never ends is cut off at the limit, not buffered forever.
        var endless = await Assert.ThrowsAsync<LLHttpException>(
            () => RunAsync([System.Text.Encoding.ASCII.GetBytes("HTTP/1.1 200 OK\r\nA: " + new string('a', 1000))], options: options));
        Assert.Equal(LLHttpError.ResponseHeadTooLarge, endless.Error);
    }

    [Fact]
    public async Task Too_many_headers_are_rejected()
    {
        var options = new LLHttpOptions { InitialReceiveBufferSize = 8, MaxResponseHeaderCount = 3 };
        var ok = await RunAsync(AllSplits("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nContent-Length: 0\r\n\r\n").First(), options: options);
        Assert.Equal(3, ok.Heads[0].Headers.Length);

        var e = await Assert.ThrowsAsync<LLHttpException>(
            () => RunAsync(AllSplits("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\nContent-Length: 0\r\n\r\n").First(), options: options));
        Assert.Equal(LLHttpError.TooManyHeaders, e.Error);
    }

    [Fact]
    public async Task A_head_with_more_fields_than_the_first_table_holds_grows_it_up_to_the_limit()
    {
        // The field table starts at 16 and doubles (16, 32, then the limit of 40): every field keeps its name and value.
        var options = new LLHttpOptions { InitialReceiveBufferSize = 8, MaxResponseHeaderCount = 40 };
        var fields = Enumerable.Range(0, 39).Select(i => $"F{i}: v{i}").Append("Content-Length: 0").ToArray();
        var head = "HTTP/1.1 200 OK\r\n" + string.Concat(fields.Select(f => f + "\r\n")) + "\r\n";
        var result = await RunAllSplitsAsync(head, options: options);
        Assert.Equal(fields.Select(f => f.Replace(": ", "=")), result.Heads[^1].Headers);

        var e = await Assert.ThrowsAsync<LLHttpException>(
            () => RunAsync(AllSplits(head.Replace("HTTP/1.1 200 OK\r\n", "HTTP/1.1 200 OK\r\nExtra: 1\r\n")).First(), options: options));
        Assert.Equal(LLHttpError.TooManyHeaders, e.Error);
    }

    [Fact]
    public async Task Interim_responses_are_surfaced_then_final_is_read()
    {
        var result = await RunAllSplitsAsync(
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        Assert.Equal([100, 103, 200], result.Heads.Select(h => h.Status));
        Assert.Equal(["Link=</s.css>; rel=preload"], result.Heads[1].Headers);
        Assert.Equal("ok", result.Body);
        Assert.True(result.Reusable);
    }

    [Fact]
    public Task Switching_protocols_is_not_supported()
        => AssertErrorAllSplitsAsync("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", LLHttpError.UnsupportedUpgrade);

    [Fact]
    public async Task Endless_interim_responses_are_bounded()
    {
        string response = string.Concat(Enumerable.Repeat("HTTP/1.1 100 Continue\r\n\r\n", 20)) + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        var e = await Assert.ThrowsAsync<LLHttpException>(() => RunAsync(AllSplits(response).First()));
        Assert.Equal(LLHttpError.TooManyInformationalResponses, e.Error);
    }

    [Theory]
    [InlineData("", LLHttpError.ConnectionClosedBeforeResponse)]
    [InlineData("HTTP/1.1 200 OK\r\nContent-Le", LLHttpError.ResponseHeadIncomplete)]
    [InlineData("HTTP/1.1 100 Continue\r\n\r\n", LLHttpError.ResponseHeadIncomplete)]
    public async Task Close_before_complete_head(string response, LLHttpError error)
    {
        var e = await Assert.ThrowsAsync<LLHttpException>(() => RunAsync([System.Text.Encoding.ASCII.GetBytes(response)]));
        Assert.Equal(error, e.Error);
    }
}
