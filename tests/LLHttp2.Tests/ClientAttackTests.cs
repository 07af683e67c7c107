using LLHttp2.Connection;
using LLHttp2.Frames;
using static LLHttp2.Tests.ClientKit;
using static LLHttp2.Tests.TestKit;

namespace LLHttp2.Tests;

/// <summary>
/// A hostile downstream against the client connection: the same flood limits as the server side's, each with a small
/// configured bound so every split point stays cheap, and the malformed responses of RFC 9113 §8, each with the exact
/// GOAWAY or RST_STREAM code.
/// </summary>
public class Rfc9113_Client_HostileServer
{
    private static readonly (string, string) Status = (":status", "200");

    [Fact]
    public void Defaults_are_the_named_constants_shared_with_the_server_side()
    {
        var options = new Http2ClientConnectionOptions();
        Assert.Equal(100, options.MaxConcurrentStreams);
        Assert.Equal(8, options.MaxContinuationFrames);
        Assert.Equal(1000, options.MaxPendingControlFrames);
        Assert.Equal(32, options.MaxSettingsPerFrame);
        Assert.Equal(16, options.MaxConsecutiveEmptyData);
        Assert.Equal(1000, options.MaxWindowUpdatesWithoutData);
        Assert.Equal(32 * 1024, options.MaxHeaderListSize);
        Assert.Equal(4096, options.MaxEncoderTableSize);
        Assert.Equal(TimeSpan.FromSeconds(10), options.SettingsAckTimeout);
    }

    [Fact]
    public void Settings_flood_is_goaway_enhance_your_calm()
    {
        var options = new Http2ClientConnectionOptions { MaxPendingControlFrames = 2 };
        var outcome = RunAllSplits(Concat(ServerPreface, ServerPreface, ServerPreface), options);
        Assert.Equal([ClientSettings, "SETTINGS ACK", "SETTINGS ACK", "GOAWAY 0 EnhanceYourCalm"], outcome.Frames);
        Assert.Equal(Http2ConnectionState.Closed, outcome.State);
    }

    [Fact]
    public void Too_many_settings_in_one_frame_is_goaway_enhance_your_calm()
    {
        var options = new Http2ClientConnectionOptions { MaxSettingsPerFrame = 2 };
        var unknown = (Id: (Http2SettingId)0x20, Value: 0u);
        var outcome = RunAllSplits(Settings(unknown, unknown, unknown), options);
        Assert.Equal([ClientSettings, "GOAWAY 0 EnhanceYourCalm"], outcome.Frames);
    }

    [Fact]
    public void Ping_flood_while_output_is_not_drained_is_goaway_enhance_your_calm()
    {
        var options = new Http2ClientConnectionOptions { MaxPendingControlFrames = 3 };
        var outcome = RunAllSplits(Concat(ServerPreface, ConnectionKit.Ping(1), ConnectionKit.Ping(2), ConnectionKit.Ping(3)), options);
        Assert.Equal([ClientSettings, "SETTINGS ACK", "PING ACK 1", "PING ACK 2", "GOAWAY 0 EnhanceYourCalm"], outcome.Frames);
    }

    [Fact]
    public void Reset_flood_is_goaway_enhance_your_calm()
    {
        // CVE-2019-9514's shape from a server: responses that make us answer with RST_STREAM count as frames to answer.
        var options = new Http2ClientConnectionOptions { MaxPendingControlFrames = 3 };
        var bad = (":status", "2000");
        var outcome = RunAllSplits(Concat(ServerPreface, Response(1, true, bad), Response(3, true, bad), Response(5, true, bad)), options, before: (c, o) =>
        {
            Get(c, o);
            Get(c, o);
            Get(c, o);
        });
        Assert.Equal([ClientSettings, "Headers 1 end", "Headers 3 end", "Headers 5 end", "SETTINGS ACK", "RST_STREAM 1 ProtocolError", "RST_STREAM 3 ProtocolError", "GOAWAY 0 EnhanceYourCalm"], outcome.Frames);
    }

    [Fact]
    public void Empty_data_flood_is_goaway_enhance_your_calm()
    {
        var options = new Http2ClientConnectionOptions { MaxConsecutiveEmptyData = 2 };
        var empty = ConnectionKit.Data(1, "");
        var outcome = RunAllSplits(Concat(ServerPreface, Ok(1), empty, empty, empty), options, before: (c, o) => Get(c, o));
        Assert.Equal([ClientSettings, "Headers 1 end", "SETTINGS ACK", "GOAWAY 0 EnhanceYourCalm"], outcome.Frames);
    }

    [Fact]
    public void Window_update_flood_is_goaway_enhance_your_calm()
    {
        var options = new Http2ClientConnectionOptions { MaxWindowUpdatesWithoutData = 2 };
        var outcome = RunAllSplits(Concat(ServerPreface, ConnectionKit.WindowUpdate(0, 1), ConnectionKit.WindowUpdate(1, 1), ConnectionKit.WindowUpdate(1, 1)), options, before: (c, o) => Get(c, o, endStream: false));
        Assert.Equal([ClientSettings, "Headers 1", "SETTINGS ACK", "GOAWAY 0 EnhanceYourCalm"], outcome.Frames);
    }

    [Fact]
    public void Hpack_bomb_is_goaway_compression_error_at_the_field_that_passes_the_bound()
    {
        // One 200-byte entry added to the table, then referenced again and again: each reference counts 232 bytes.
        var options = new Http2ClientConnectionOptions { MaxHeaderListSize = 1024 };
        var encoder = new Hpack.HpackEncoder { UseHuffman = false };
        var block = new ArrayBufferWriter<byte>();
        encoder.Encode(":status"u8, "200"u8, block);
        encoder.Encode("x-bomb"u8, new byte[200], block);
        var bomb = Concat(block.WrittenSpan.ToArray(), [0xBE, 0xBE, 0xBE, 0xBE, 0xBE]);
        var outcome = RunAllSplits(Concat(ServerPreface, Frame(Http2FrameType.Headers, Http2FrameFlags.EndHeaders, 1, bomb)), options, before: (c, o) => Get(c, o));
        Assert.Equal(["SETTINGS 2=0 4=65535 6=1024", "Headers 1 end", "SETTINGS ACK", "GOAWAY 0 CompressionError"], outcome.Frames);
        Assert.DoesNotContain("headers 1 200", outcome.Events);
    }

    [Fact]
    public void An_oversized_field_block_is_goaway_enhance_your_calm()
    {
        var options = new Http2ClientConnectionOptions { MaxHeaderListSize = 64 };
        var outcome = RunAllSplits(Concat(ServerPreface, Frame(Http2FrameType.Headers, 0, 1, new byte[40]), Frame(Http2FrameType.Continuation, 0, 1, new byte[40])), options, before: (c, o) => Get(c, o));
        Assert.Equal(["SETTINGS 2=0 4=65535 6=64", "Headers 1 end", "SETTINGS ACK", "GOAWAY 0 EnhanceYourCalm"], outcome.Frames);
    }

    [Fact]
    public void Continuation_without_end_is_goaway_enhance_your_calm_by_count_or_protocol_error_when_interrupted()
    {
        var options = new Http2ClientConnectionOptions { MaxContinuationFrames = 3 };
        var empty = Frame(Http2FrameType.Continuation, 0, 1);
        var start = Frame(Http2FrameType.Headers, 0, 1, ConnectionKit.Block(Status));
        var flood = RunAllSplits(Concat(ServerPreface, start, empty, empty, empty, empty), options, before: (c, o) => Get(c, o));
        Assert.Equal([ClientSettings, "Headers 1 end", "SETTINGS ACK", "GOAWAY 0 EnhanceYourCalm"], flood.Frames);

        var interrupted = RunAllSplits(Concat(ServerPreface, start, empty, ConnectionKit.Ping(1)), options, before: (c, o) => Get(c, o));
        Assert.Equal([ClientSettings, "Headers 1 end", "SETTINGS ACK", "GOAWAY 0 ProtocolError"], interrupted.Frames);
    }

    [Fact]
    public void Data_beyond_the_stream_window_is_a_stream_flow_control_error()
    {
        var options = new Http2ClientConnectionOptions { InitialStreamWindowSize = 10 };
        var outcome = RunAllSplits(Concat(ServerPreface, Ok(1), ConnectionKit.Data(1, "0123456789x"), ConnectionKit.Ping(1)), options, before: (c, o) => Get(c, o));
        Assert.Equal(["SETTINGS 2=0 4=10 6=32768", "Headers 1 end", "SETTINGS ACK", "RST_STREAM 1 FlowControlError", "PING ACK 1"], outcome.Frames);
        Assert.Equal("reset 1 FlowControlError", outcome.Events[^1]);
    }

    [Fact]
    public void Data_beyond_the_connection_window_is_goaway_flow_control_error()
    {
        var options = new Http2ClientConnectionOptions { InitialStreamWindowSize = 1 << 20 };
        var chunk = new string('c', 16384);
        var input = Concat(ServerPreface, Ok(1), ConnectionKit.Data(1, chunk), ConnectionKit.Data(1, chunk), ConnectionKit.Data(1, chunk), ConnectionKit.Data(1, chunk), ConnectionKit.Data(1, "xx"));
        foreach (int at in new[] { input.Length, 100, input.Length - 5 })
        {
            var outcome = Run(at == input.Length ? [input] : [input[..at], input[at..]], options, before: (c, o) => Get(c, o));
            Assert.Equal(["SETTINGS 2=0 4=1048576 6=32768", "Headers 1 end", "SETTINGS ACK", "GOAWAY 0 FlowControlError"], outcome.Frames);
        }
    }

    [Fact]
    public void Window_update_overflow_is_a_stream_or_connection_flow_control_error()
    {
        var stream = RunAllSplits(Concat(ServerPreface, ConnectionKit.WindowUpdate(1, int.MaxValue)), before: (c, o) => Get(c, o, endStream: false));
        Assert.Equal([ClientSettings, "Headers 1", "SETTINGS ACK", "RST_STREAM 1 FlowControlError"], stream.Frames);
        var connection = RunAllSplits(Concat(ServerPreface, ConnectionKit.WindowUpdate(0, int.MaxValue)));
        Assert.Equal([ClientSettings, "SETTINGS ACK", "GOAWAY 0 FlowControlError"], connection.Frames);
    }

    [Fact]
    public void Push_promise_is_goaway_protocol_error()
    {
        // We advertise SETTINGS_ENABLE_PUSH 0 (§6.5.2, §8.4).
        var promise = Frame(Http2FrameType.PushPromise, Http2FrameFlags.EndHeaders, 1, Concat([0, 0, 0, 2], ConnectionKit.Block((":method", "GET"))));
        var outcome = RunAllSplits(Concat(ServerPreface, promise), before: (c, o) => Get(c, o));
        Assert.Equal([ClientSettings, "Headers 1 end", "SETTINGS ACK", "GOAWAY 0 ProtocolError"], outcome.Frames);
    }

    [Theory]
    [InlineData(3)] // above the highest stream we opened
    [InlineData(2)] // even: a pushed stream, and push is off
    public void A_response_on_a_stream_we_never_opened_is_goaway_protocol_error(int streamId)
    {
        var outcome = RunAllSplits(Concat(ServerPreface, Ok(streamId, endStream: true)), before: (c, o) => Get(c, o));
        Assert.Equal([ClientSettings, "Headers 1 end", "SETTINGS ACK", "GOAWAY 0 ProtocolError"], outcome.Frames);
        var data = RunAllSplits(Concat(ServerPreface, ConnectionKit.Data(streamId, "x")), before: (c, o) => Get(c, o));
        Assert.Equal([ClientSettings, "Headers 1 end", "SETTINGS ACK", "GOAWAY 0 ProtocolError"], data.Frames);
    }

    [Fact]
    public void A_response_on_a_stream_opened_but_not_sent_is_goaway_protocol_error()
    {
        var outcome = RunAllSplits(Concat(ServerPreface, Ok(1, endStream: true)), before: (c, o) => Assert.True(c.TryOpenStream(out _)));
        Assert.Equal([ClientSettings, "SETTINGS ACK", "GOAWAY 0 ProtocolError"], outcome.Frames);
    }

    public static TheoryData<string, string[]> MalformedResponses => new()
    {
        { "no :status", ["server", "x"] },
        { "duplicate :status", [":status", "200", ":status", "200"] },
        { "non-numeric :status", [":status", "2x0"] },
        { "two-digit :status", [":status", "20"] },
        { "four-digit :status", [":status", "2000"] },
        { "101", [":status", "101"] },
        { "request pseudo-header", [":status", "200", ":path", "/"] },
        { "unknown pseudo-header", [":status", "200", ":x", "y"] },
        { "pseudo-header after a field", ["server", "x", ":status", "200"] },
        { "uppercase name", [":status", "200", "Server", "x"] },
        { "connection", [":status", "200", "connection", "close"] },
        { "keep-alive", [":status", "200", "keep-alive", "1"] },
        { "proxy-connection", [":status", "200", "proxy-connection", "x"] },
        { "transfer-encoding", [":status", "200", "transfer-encoding", "chunked"] },
        { "upgrade", [":status", "200", "upgrade", "h2c"] },
        { "LF in a value", [":status", "200", "x", "a\nb"] },
        { "bad content-length", [":status", "200", "content-length", "-1"] },
        { "conflicting content-length", [":status", "200", "content-length", "1", "content-length", "2"] },
        { "content-length without data", [":status", "200", "content-length", "1"] },
    };

    [Theory]
    [MemberData(nameof(MalformedResponses))]
    public void A_malformed_response_is_a_stream_protocol_error_reported_to_the_handler(string what, string[] fields)
    {
        var pairs = fields.Chunk(2).Select(p => (p[0], p[1])).ToArray();
        var outcome = RunAllSplits(Concat(ServerPreface, Response(1, true, pairs), ConnectionKit.Ping(1)), before: (c, o) => Get(c, o));
        List<string> expected = [ClientSettings, "Headers 1 end", "SETTINGS ACK", "RST_STREAM 1 ProtocolError", "PING ACK 1"];
        Assert.True(expected.SequenceEqual(outcome.Frames), $"{what}: {outcome}");
        Assert.Equal("reset 1 ProtocolError", outcome.Events[^1]);
        Assert.DoesNotContain(outcome.Events, e => e.StartsWith("headers", StringComparison.Ordinal));
        Assert.Equal(Http2ConnectionState.Open, outcome.State);
    }

    [Fact]
    public void Malformed_trailers_are_a_stream_protocol_error()
    {
        var pseudo = RunAllSplits(Concat(ServerPreface, Ok(1), Response(1, true, Status)), before: (c, o) => Get(c, o));
        Assert.Equal("reset 1 ProtocolError", pseudo.Events[^1]);
        var notEnded = RunAllSplits(Concat(ServerPreface, Ok(1), Response(1, false, ("x", "y"))), before: (c, o) => Get(c, o));
        Assert.Equal("reset 1 ProtocolError", notEnded.Events[^1]);
        var informationalEnd = RunAllSplits(Concat(ServerPreface, Response(1, true, (":status", "100"))), before: (c, o) => Get(c, o));
        Assert.Equal("reset 1 ProtocolError", informationalEnd.Events[^1]);
    }
}
