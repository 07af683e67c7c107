using LLHttp2.Connection;
using LLHttp2.Frames;
using static LLHttp2.Tests.ConnectionKit;
using static LLHttp2.Tests.TestKit;

namespace LLHttp2.Tests;

/// <summary>
/// RFC 9113 §8.1, §8.2, §8.3: a malformed request is a stream error PROTOCOL_ERROR (RST_STREAM, §8.1.1), never a
/// connection error, and the connection goes on (the PING after it is answered).
/// </summary>
public class Rfc9113_8_RequestChecks
{
    private static readonly (string, string)[] Method = [(":method", "GET")];
    private static readonly (string, string)[] Scheme = [(":scheme", "https")];
    private static readonly (string, string)[] Path = [(":path", "/")];

    public static TheoryData<string, (string, string)[]> Malformed => new()
    {
        { "no :method", [.. Scheme, .. Path] },
        { "no :scheme", [.. Method, .. Path] },
        { "no :path", [.. Method, .. Scheme] },
        { "empty :path", [.. Method, .. Scheme, (":path", "")] },
        { "duplicate :path", [.. Method, .. Scheme, .. Path, .. Path] },
        { "unknown pseudo-header", [.. Method, .. Scheme, .. Path, (":tunnel", "websocket")] },
        { ":protocol on GET (RFC 8441 §4)", [.. Method, .. Scheme, .. Path, (":authority", "a"), (":protocol", "websocket")] },
        { ":protocol before a :method other than CONNECT", [(":protocol", "websocket"), .. Method, .. Scheme, .. Path, (":authority", "a")] },
        { "extended CONNECT without :path", [(":method", "CONNECT"), (":protocol", "websocket"), .. Scheme, (":authority", "a")] },
        { "extended CONNECT without :scheme", [(":method", "CONNECT"), (":protocol", "websocket"), .. Path, (":authority", "a")] },
        { "extended CONNECT without :authority", [(":method", "CONNECT"), (":protocol", "websocket"), .. Scheme, .. Path] },
        { "extended CONNECT with an empty :path", [(":method", "CONNECT"), (":protocol", "websocket"), .. Scheme, (":path", ""), (":authority", "a")] },
        { "duplicate :protocol", [(":method", "CONNECT"), (":protocol", "websocket"), (":protocol", "websocket"), .. Scheme, .. Path, (":authority", "a")] },
        { "response pseudo-header", [.. Method, .. Scheme, .. Path, (":status", "200")] },
        { "pseudo-header after a regular field", [.. Method, .. Scheme, ("accept", "*/*"), .. Path] },
        { "uppercase name", [.. Method, .. Scheme, .. Path, ("Accept", "*/*")] },
        { "connection", [.. Method, .. Scheme, .. Path, ("connection", "close")] },
        { "keep-alive", [.. Method, .. Scheme, .. Path, ("keep-alive", "timeout=5")] },
        { "proxy-connection", [.. Method, .. Scheme, .. Path, ("proxy-connection", "keep-alive")] },
        { "transfer-encoding", [.. Method, .. Scheme, .. Path, ("transfer-encoding", "chunked")] },
        { "upgrade", [.. Method, .. Scheme, .. Path, ("upgrade", "h2c")] },
        { "te gzip", [.. Method, .. Scheme, .. Path, ("te", "gzip")] },
        { "LF in a value", [.. Method, .. Scheme, .. Path, ("x-a", "1\n2")] },
        { "content-length not digits", [.. Method, .. Scheme, .. Path, ("content-length", "1x")] },
        { "conflicting content-length", [.. Method, .. Scheme, .. Path, ("content-length", "1"), ("content-length", "2")] },
        { "CONNECT with :path", [(":method", "CONNECT"), (":authority", "a:443"), .. Path] },
        { "CONNECT without :authority", [(":method", "CONNECT")] },
    };

    [Theory]
    [MemberData(nameof(Malformed))]
    public void A_malformed_request_is_a_stream_protocol_error(string rule, (string, string)[] fields)
    {
        var outcome = RunAllSplits(Concat(Preface, Request(1, true, fields), Ping(1)));
        Assert.True(outcome.Frames.SequenceEqual([ServerSettings, "SETTINGS ACK", "RST_STREAM 1 ProtocolError", "PING ACK 1"]), $"{rule}: {outcome}");
        Assert.Equal("reset 1 ProtocolError", outcome.Events[^1]);
        Assert.DoesNotContain(outcome.Events, e => e.StartsWith("headers", StringComparison.Ordinal));
        Assert.Equal(Http2ConnectionState.Open, outcome.State);
    }

    [Fact]
    public void Valid_forms_pass_te_trailers_and_connect()
    {
        var outcome = RunAllSplits(Concat(
            Preface,
            Get(1, true, ("te", "trailers"), ("content-length", "0"), ("content-length", "0")),
            Request(3, true, (":method", "CONNECT"), (":authority", "a:443")),
            Request(5, true, (":method", "OPTIONS"), (":scheme", "https"), (":path", "*"))));
        Assert.Equal([ServerSettings, "SETTINGS ACK"], outcome.Frames);
        Assert.Equal(["headers 1 end", "headers 3 end", "headers 5 end"], outcome.Events.Where(e => e.StartsWith("headers", StringComparison.Ordinal)));
    }

    [Fact]
    public void An_extended_connect_with_scheme_path_and_authority_opens_a_stream_that_stays_open()
    {
        // RFC 8441 §4: the tunnel's bytes follow as DATA, so the HEADERS carry no END_STREAM.
        var outcome = RunAllSplits(Concat(
            Preface,
            Request(1, false, (":method", "CONNECT"), (":protocol", "websocket"), (":scheme", "https"), (":path", "/chat"), (":authority", "a.example"), ("sec-websocket-version", "13")),
            Data(1, "frame")));
        Assert.Equal([ServerSettings, "SETTINGS ACK"], outcome.Frames);
        Assert.Equal(
            ["field 1 :method: CONNECT", "field 1 :protocol: websocket", "field 1 :scheme: https", "field 1 :path: /chat", "field 1 :authority: a.example",
                "field 1 sec-websocket-version: 13", "headers 1", "data 1 frame"],
            outcome.Events);
        Assert.Equal(1, outcome.ActiveStreams);
    }

    [Fact]
    public void Without_SETTINGS_ENABLE_CONNECT_PROTOCOL_protocol_is_an_unknown_pseudo_header()
    {
        // RFC 8441 §3: the setting is not sent, and :protocol is then malformed like any unknown pseudo-header (§4).
        var options = new Http2ServerConnectionOptions { EnableConnectProtocol = false };
        var outcome = RunAllSplits(
            Concat(Preface, Request(1, true, (":method", "CONNECT"), (":protocol", "websocket"), (":scheme", "https"), (":path", "/"), (":authority", "a"))),
            options);
        Assert.Equal(["SETTINGS 3=100 4=65535 6=32768 2=0", "SETTINGS ACK", "RST_STREAM 1 ProtocolError"], outcome.Frames);
    }

    [Fact]
    public void A_field_block_across_continuation_frames_is_decoded_once_whole()
    {
        var block = Block((":method", "GET"), (":scheme", "https"), (":path", "/a"), ("x-long", new string('v', 40)));
        var input = Concat(
            Preface,
            Frame(Http2FrameType.Headers, Http2FrameFlags.EndStream, 1, block[..10]),
            Frame(Http2FrameType.Continuation, 0, 1, block[10..20]),
            Frame(Http2FrameType.Continuation, Http2FrameFlags.EndHeaders, 1, block[20..]));
        var outcome = RunAllSplits(input);
        Assert.Equal(["field 1 :method: GET", "field 1 :scheme: https", "field 1 :path: /a", $"field 1 x-long: {new string('v', 40)}", "headers 1 end"], outcome.Events);
    }

    [Fact]
    public void The_hpack_state_follows_a_refused_block()
    {
        // The refused block adds an entry to the dynamic table; the next request refers to it (index 62).
        var encoder = new Hpack.HpackEncoder { UseHuffman = false };
        var writer = new ArrayBufferWriter<byte>();
        foreach (var (n, v) in new[] { (":method", "GET"), (":scheme", "https"), (":path", "/"), ("x-tag", "one"), ("Bad", "1") })
        {
            encoder.Encode(System.Text.Encoding.Latin1.GetBytes(n), System.Text.Encoding.Latin1.GetBytes(v), writer);
        }

        var refused = writer.WrittenSpan.ToArray();
        var next = Concat(Block((":method", "GET"), (":scheme", "https"), (":path", "/")), [0x80 | 63]);
        var outcome = RunAllSplits(Concat(Preface, Frame(Http2FrameType.Headers, Http2FrameFlags.EndHeaders | Http2FrameFlags.EndStream, 1, refused), Frame(Http2FrameType.Headers, Http2FrameFlags.EndHeaders | Http2FrameFlags.EndStream, 3, next)));
        Assert.Equal([ServerSettings, "SETTINGS ACK", "RST_STREAM 1 ProtocolError"], outcome.Frames);
        Assert.Contains("field 3 x-tag: one", outcome.Events);
        Assert.Equal("headers 3 end", outcome.Events[^1]);
    }
}

/// <summary>RFC 9113 §8.1, §8.1.1: trailers and content-length against the DATA received.</summary>
public class Rfc9113_8_1_BodyAndTrailers
{
    [Fact]
    public void Trailers_end_the_stream()
    {
        var outcome = RunAllSplits(Concat(Preface, Get(1, endStream: false), Data(1, "abc"), Request(1, true, ("x-checksum", "1"))));
        Assert.Equal(["data 1 abc", "field 1 x-checksum: 1", "trailers 1 end"], outcome.Events[^3..]);
        Assert.Equal([ServerSettings, "SETTINGS ACK"], outcome.Frames);
    }

    [Fact]
    public void Trailers_without_end_stream_are_a_stream_protocol_error()
    {
        var outcome = RunAllSplits(Concat(Preface, Get(1, endStream: false), Request(1, false, ("x-checksum", "1"))));
        Assert.Equal([ServerSettings, "SETTINGS ACK", "RST_STREAM 1 ProtocolError"], outcome.Frames);
    }

    [Fact]
    public void Pseudo_headers_in_trailers_are_a_stream_protocol_error()
    {
        var outcome = RunAllSplits(Concat(Preface, Get(1, endStream: false), Request(1, true, (":path", "/x"))));
        Assert.Equal([ServerSettings, "SETTINGS ACK", "RST_STREAM 1 ProtocolError"], outcome.Frames);
        Assert.Equal("reset 1 ProtocolError", outcome.Events[^1]);
    }

    [Fact]
    public void Headers_after_end_stream_are_a_stream_error_stream_closed()
    {
        var outcome = RunAllSplits(Concat(Preface, Get(1), Request(1, true, ("x-a", "1")), Ping(2)));
        Assert.Equal([ServerSettings, "SETTINGS ACK", "RST_STREAM 1 StreamClosed", "PING ACK 2"], outcome.Frames);
    }

    [Theory]
    [InlineData("abc", "more data than content-length")]
    [InlineData("a", "less data than content-length at END_STREAM")]
    public void Content_length_mismatch_is_a_stream_protocol_error(string body, string what)
    {
        var outcome = RunAllSplits(Concat(Preface, Get(1, endStream: false, ("content-length", "2")), Data(1, body, endStream: true), Ping(3)));
        Assert.True(outcome.Frames.SequenceEqual([ServerSettings, "SETTINGS ACK", "RST_STREAM 1 ProtocolError", "PING ACK 3"]), $"{what}: {outcome}");
        Assert.DoesNotContain(outcome.Events, e => e.StartsWith("data", StringComparison.Ordinal));
    }

    [Fact]
    public void Content_length_with_end_stream_on_headers_is_a_stream_protocol_error()
    {
        var outcome = RunAllSplits(Concat(Preface, Get(1, endStream: true, ("content-length", "2"))));
        Assert.Equal([ServerSettings, "SETTINGS ACK", "RST_STREAM 1 ProtocolError"], outcome.Frames);
    }

    [Fact]
    public void Content_length_checked_again_at_the_trailers()
    {
        var outcome = RunAllSplits(Concat(Preface, Get(1, endStream: false, ("content-length", "4")), Data(1, "abc"), Request(1, true, ("x-a", "1"))));
        Assert.Equal([ServerSettings, "SETTINGS ACK", "RST_STREAM 1 ProtocolError"], outcome.Frames);
    }

    [Fact]
    public void The_connection_window_of_dropped_data_is_given_back()
    {
        // 40,000 bytes on a stream reset by the content-length check: over half of the connection's 65,535 window
        // is owed at once, so a WINDOW_UPDATE on stream 0 follows the RST_STREAM.
        var options = new Http2ServerConnectionOptions { InitialStreamWindowSize = 65535 };
        var body = new string('x', 16000);
        var outcome = Run([Concat(Preface, Get(1, false, ("content-length", "1")), Data(1, body), Data(1, body), Data(3, body))], options);
        Assert.Equal([ServerSettings, "SETTINGS ACK", "RST_STREAM 1 ProtocolError", "GOAWAY 1 ProtocolError"], outcome.Frames);
        var ignored = Run([Concat(Preface, Get(1, false, ("content-length", "1")), Data(1, body), Data(1, body), Data(1, body))], options);
        Assert.Equal([ServerSettings, "SETTINGS ACK", "RST_STREAM 1 ProtocolError", "WINDOW_UPDATE 0 48000"], ignored.Frames);
    }
}
