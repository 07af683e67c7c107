using System.Text;
using LLHttp2.Connection;
using LLHttp2.Frames;
using static LLHttp2.Tests.ClientKit;
using static LLHttp2.Tests.TestKit;

namespace LLHttp2.Tests;

/// <summary>RFC 9113 §3.4, §6.5, §6.7, §6.8 from the client side: the preface, the SETTINGS exchange, PING and GOAWAY.</summary>
public class Rfc9113_Client_ConnectionControl
{
    [Fact]
    public void The_preface_and_our_settings_come_first_then_the_ack_of_the_server_settings()
    {
        var idle = Run([]);
        Assert.Equal([ClientSettings], idle.Frames);
        Assert.Equal(Http2ConnectionState.AwaitingSettings, idle.State);

        var outcome = RunAllSplits(Settings((Http2SettingId.MaxConcurrentStreams, 7)));
        Assert.Equal([ClientSettings, "SETTINGS ACK"], outcome.Frames);
        Assert.Equal(Http2ConnectionState.Open, outcome.State);
    }

    [Fact]
    public void A_first_frame_other_than_settings_is_a_connection_protocol_error()
    {
        var outcome = RunAllSplits(ConnectionKit.Ping(1));
        Assert.Equal([ClientSettings, "GOAWAY 0 ProtocolError"], outcome.Frames);
        Assert.Equal(Http2ConnectionState.Closed, outcome.State);
        Assert.Equal([ClientSettings, "GOAWAY 0 ProtocolError"], RunAllSplits(ConnectionKit.SettingsAck).Frames);
    }

    [Fact]
    public void Requests_may_go_before_the_server_settings_arrive()
    {
        var outcome = RunAllSplits(Concat(ServerPreface, Ok(1, endStream: true)), before: (c, o) => Get(c, o));
        Assert.Equal([ClientSettings, "Headers 1 end", "SETTINGS ACK"], outcome.Frames);
        Assert.Equal(["field 1 :status: 200", "headers 1 200 end"], outcome.Events);
        Assert.Equal(0, outcome.ActiveStreams);
    }

    [Fact]
    public void Our_settings_ack_is_tracked_and_the_timeout_is_the_callers()
    {
        Assert.Equal(TimeSpan.FromSeconds(10), Http2ClientConnectionOptions.DefaultSettingsAckTimeout);
        bool? before = null, after = null;
        RunAllSplits(ServerPreface, after: (c, _) => before = c.IsAwaitingSettingsAck);
        RunAllSplits(Concat(ServerPreface, ConnectionKit.SettingsAck), after: (c, _) => after = c.IsAwaitingSettingsAck);
        Assert.True(before);
        Assert.False(after);

        var timedOut = RunAllSplits(ServerPreface, after: (c, o) => c.OnSettingsTimeout(o));
        Assert.Equal([ClientSettings, "SETTINGS ACK", "GOAWAY 0 SettingsTimeout"], timedOut.Frames);
        var acked = RunAllSplits(Concat(ServerPreface, ConnectionKit.SettingsAck), after: (c, o) => c.OnSettingsTimeout(o));
        Assert.Equal([ClientSettings, "SETTINGS ACK"], acked.Frames);
    }

    [Theory]
    [InlineData(Http2SettingId.EnablePush, 2u, Http2ErrorCode.ProtocolError)]
    [InlineData(Http2SettingId.MaxFrameSize, 100u, Http2ErrorCode.ProtocolError)]
    [InlineData(Http2SettingId.InitialWindowSize, 0x8000_0000u, Http2ErrorCode.FlowControlError)]
    public void Invalid_settings_are_a_connection_error(Http2SettingId id, uint value, Http2ErrorCode code)
    {
        var outcome = RunAllSplits(Concat(ServerPreface, Settings((id, value))));
        Assert.Equal([ClientSettings, "SETTINGS ACK", $"GOAWAY 0 {code}"], outcome.Frames);
    }

    [Fact]
    public void The_server_settings_are_exposed_and_its_stream_limit_bounds_new_streams()
    {
        var outcome = RunAllSplits(
            Settings((Http2SettingId.MaxConcurrentStreams, 2), (Http2SettingId.HeaderTableSize, 0), (Http2SettingId.MaxFrameSize, 20000)),
            after: (c, o) =>
            {
                Assert.Equal(2u, c.PeerMaxConcurrentStreams);
                Assert.Equal(0u, c.PeerSettings.HeaderTableSize);
                Assert.Equal(20000u, c.PeerSettings.MaxFrameSize);
                Assert.Equal(2, c.AvailableStreams);
                Assert.Equal(1, Get(c, o));
                Assert.Equal(3, Get(c, o));
                Assert.False(c.CanOpenStream);
                Assert.False(c.TryOpenStream(out _));
                var more = new ReadOnlySequence<byte>(Ok(1, endStream: true));
                c.Process(ref more, o);
                Assert.Equal(5, Get(c, o));
            });
        Assert.Equal([ClientSettings, "SETTINGS ACK", "Headers 1 end", "Headers 3 end", "Headers 5 end"], outcome.Frames);
        Assert.Equal(2, outcome.ActiveStreams);
    }

    [Fact]
    public void A_lowered_header_table_size_starts_our_next_block_with_a_size_update()
    {
        var output = new ArrayBufferWriter<byte>();
        var client = new Http2ClientConnection(new ClientRecordingHandler());
        client.Start(output);
        var input = new ReadOnlySequence<byte>(Settings((Http2SettingId.HeaderTableSize, 0)));
        client.Process(ref input, output);
        int start = output.WrittenCount;
        Get(client, output);
        var headers = output.WrittenSpan[start..];
        Assert.Equal((byte)Http2FrameType.Headers, headers[3]);
        Assert.Equal(0x20, headers[Http2FrameHeader.Size]); // RFC 7541 §6.3: size update to 0
    }

    [Fact]
    public void Ping_is_answered_and_our_ping_ack_is_reported_once()
    {
        var outcome = RunAllSplits(
            Concat(ServerPreface, ConnectionKit.Ping(7), ConnectionKit.Ping(9, ack: true), ConnectionKit.Ping(5, ack: true), ConnectionKit.Ping(5, ack: true)),
            before: (c, o) =>
            {
                c.SendPing(5, o);
                Assert.True(c.IsAwaitingPingAck);
            },
            after: (c, _) => Assert.False(c.IsAwaitingPingAck));
        Assert.Equal([ClientSettings, "PING 5", "SETTINGS ACK", "PING ACK 7"], outcome.Frames);
        Assert.Equal(["ping ack 5"], outcome.Events);
    }

    [Fact]
    public void Goaway_refuses_the_streams_above_its_last_id_and_new_ones()
    {
        var outcome = RunAllSplits(
            Concat(ServerPreface, GoAway(3, Http2ErrorCode.NoError), Ok(3, endStream: true), ConnectionKit.Data(5, "late")),
            before: (c, o) =>
            {
                Get(c, o);
                Get(c, o);
                Get(c, o);
            },
            after: (c, o) =>
            {
                Assert.True(c.IsGoAwayReceived);
                Assert.Equal(3, c.PeerGoAwayLastStreamId);
                Assert.False(c.TryOpenStream(out _));
            });
        Assert.Equal(["goaway 3 NoError", "reset 5 RefusedStream by peer", "field 3 :status: 200", "headers 3 200 end"], outcome.Events);
        Assert.Equal(1, outcome.ActiveStreams);
        Assert.Equal(Http2ConnectionState.Open, outcome.State);
    }

    [Fact]
    public void Graceful_shutdown_is_goaway_no_error_and_lets_open_streams_finish()
    {
        var outcome = RunAllSplits(Concat(ServerPreface, Ok(1), ConnectionKit.Data(1, "done", endStream: true)), before: (c, o) =>
        {
            Get(c, o);
            c.BeginGracefulShutdown(o);
            Assert.False(c.CanOpenStream);
            Assert.False(c.IsDrained);
        },
        after: (c, _) => Assert.True(c.IsDrained));
        Assert.Equal([ClientSettings, "Headers 1 end", "GOAWAY 0 NoError", "SETTINGS ACK"], outcome.Frames);
        Assert.Equal(Http2ConnectionState.Draining, outcome.State);
        Assert.Equal("data 1 done end", outcome.Events[^1]);
    }

    [Fact]
    public void Priority_is_ignored()
    {
        var outcome = RunAllSplits(Concat(ServerPreface, Frame(Http2FrameType.Priority, 0, 1, [0, 0, 0, 0, 16]), Frame(Http2FrameType.Priority, 0, 9, [0, 0, 0, 0, 16])), before: (c, o) => Get(c, o));
        Assert.Equal([ClientSettings, "Headers 1 end", "SETTINGS ACK"], outcome.Frames);
        Assert.Equal(Http2ConnectionState.Open, outcome.State);
    }
}

/// <summary>RFC 9113 §5, §6.9, §8 from the client side: requests, responses, flow control, resets.</summary>
public class Rfc9113_Client_Streams
{
    [Fact]
    public void Streams_are_odd_and_increasing_and_headers_go_before_the_next_stream_opens()
    {
        var client = new Http2ClientConnection(new ClientRecordingHandler());
        var output = new ArrayBufferWriter<byte>();
        Assert.True(client.TryOpenStream(out int first));
        Assert.Equal(1, first);
        Assert.Throws<InvalidOperationException>(() => client.TryOpenStream(out _));
        var fields = client.BeginRequestHeaders(first, "GET"u8, "https"u8, "a.example"u8, "/"u8);
        client.SendRequestHeaders(ref fields, endStream: true, output);
        Assert.True(client.TryOpenStream(out int second));
        Assert.Equal(3, second);
        Assert.Equal(3, client.HighestStreamId);
    }

    [Fact]
    public void Identifiers_run_out_at_2_to_the_31_minus_1()
    {
        // §5.1.1: stream identifiers cannot be reused; a client out of them needs a new connection. 2^30 streams are
        // too many for a test, so the counter is moved to the last one.
        var client = new Http2ClientConnection(new ClientRecordingHandler());
        var output = new ArrayBufferWriter<byte>();
        typeof(Http2ClientConnection).GetField("_nextStreamId", System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Instance)!.SetValue(client, (long)int.MaxValue - 2);
        Assert.Equal(2, client.AvailableStreams);
        Assert.Equal(int.MaxValue - 2, Get(client, output));
        Assert.Equal(int.MaxValue, Get(client, output));
        Assert.Equal(0, client.AvailableStreams);
        Assert.False(client.TryOpenStream(out _));
    }

    [Fact]
    public void Request_blocks_carry_the_pseudo_headers_first_in_order_as_our_server_reads_them()
    {
        var client = new Http2ClientConnection(new ClientRecordingHandler());
        var output = new ArrayBufferWriter<byte>();
        client.Start(output);
        Get(client, output);
        Assert.True(client.TryOpenStream(out int tunnel));
        var fields = client.BeginRequestHeaders(tunnel, "CONNECT"u8, default, "b.example:443"u8, default);
        client.SendRequestHeaders(ref fields, endStream: false, output);
        Get(client, output, method: "HEAD");

        var outcome = ConnectionKit.Run([output.WrittenSpan.ToArray()]);
        Assert.Equal(
            [
                "field 1 :method: GET", "field 1 :scheme: https", "field 1 :authority: a.example", "field 1 :path: /", "field 1 accept: */*", "headers 1 end",
                "field 3 :method: CONNECT", "field 3 :authority: b.example:443", "headers 3",
                "field 5 :method: HEAD", "field 5 :scheme: https", "field 5 :authority: a.example", "field 5 :path: /", "field 5 accept: */*", "headers 5 end",
            ],
            outcome.Events);
    }

    [Fact]
    public void Request_fields_are_checked_and_blocks_are_one_at_a_time()
    {
        var client = new Http2ClientConnection(new ClientRecordingHandler());
        Assert.True(client.TryOpenStream(out int id));
        var fields = client.BeginRequestHeaders(id, "GET"u8, "https"u8, "a.example"u8, "/"u8);
        try
        {
            fields.Add("Accept"u8, "x"u8);
            Assert.Fail("an uppercase name was encoded");
        }
        catch (ArgumentException)
        {
        }

        foreach (var name in new[] { "connection", "transfer-encoding", ":path" })
        {
            bool thrown = false;
            try
            {
                fields.Add(Encoding.Latin1.GetBytes(name), "x"u8);
            }
            catch (ArgumentException)
            {
                thrown = true;
            }

            Assert.True(thrown, name);
        }

        Assert.Throws<InvalidOperationException>(() => client.BeginTrailers(id));
    }

    [Fact]
    public void A_request_with_body_and_trailers_and_the_response_with_data_and_trailers()
    {
        var outcome = RunAllSplits(
            Concat(
                ServerPreface,
                Response(1, false, (":status", "103"), ("link", "</a>")),
                Ok(1, false, ("content-length", "5")),
                Frame(Http2FrameType.Data, Http2FrameFlags.Padded, 1, [3, (byte)'h', (byte)'i', 0, 0, 0]),
                ConnectionKit.Data(1, "abc"),
                Response(1, true, ("x-checksum", "9"))),
            before: (c, o) =>
            {
                int id = Get(c, o, endStream: false, method: "POST");
                Assert.Equal(4, c.SendData(id, "body"u8, endStream: false, o));
                var trailers = c.BeginTrailers(id);
                trailers.Add("x-sum"u8, "4"u8);
                c.SendTrailers(ref trailers, o);
            });
        Assert.Equal([ClientSettings, "Headers 1", "DATA 1 body", "Headers 1 end", "SETTINGS ACK"], outcome.Frames);
        Assert.Equal(
            [
                "field 1 :status: 103", "field 1 link: </a>", "headers 1 103",
                "field 1 :status: 200", "field 1 content-length: 5", "headers 1 200",
                "data 1 hi", "data 1 abc",
                "field 1 x-checksum: 9", "trailers 1 end",
            ],
            outcome.Events);
        Assert.Equal(0, outcome.ActiveStreams);
    }

    [Fact]
    public void A_response_block_across_continuation_frames()
    {
        var block = ConnectionKit.Block((":status", "200"), ("server", "scripted"), ("x-long", new string('v', 40)));
        var outcome = RunAllSplits(
            Concat(ServerPreface, Frame(Http2FrameType.Headers, 0, 1, block[..10]), Frame(Http2FrameType.Continuation, 0, 1, block[10..20]), Frame(Http2FrameType.Continuation, Http2FrameFlags.EndHeaders, 1, block[20..]), ConnectionKit.Data(1, "", endStream: true)),
            before: (c, o) => Get(c, o));
        Assert.Equal(["field 1 :status: 200", "field 1 server: scripted", $"field 1 x-long: {new string('v', 40)}", "headers 1 200", "data 1  end"], outcome.Events);
    }

    [Fact]
    public void A_long_request_head_is_split_at_the_server_frame_size()
    {
        var outcome = RunAllSplits(ServerPreface, before: (c, o) =>
        {
            Assert.True(c.TryOpenStream(out int id));
            var fields = c.BeginRequestHeaders(id, "GET"u8, "https"u8, "a.example"u8, "/"u8);
            fields.Add("x-big"u8, Encoding.Latin1.GetBytes(new string('q', 20000)), Hpack.HpackIndexing.WithoutIndexing);
            c.SendRequestHeaders(ref fields, endStream: true, o);
        });
        Assert.Equal([ClientSettings, "Headers 1 end", "Continuation 1", "SETTINGS ACK"], outcome.Frames);
    }

    [Fact]
    public void Data_respects_the_server_windows_and_frame_size()
    {
        int[] sent = new int[4];
        var outcome = RunAllSplits(
            Concat(Settings((Http2SettingId.InitialWindowSize, 3)), ConnectionKit.WindowUpdate(1, 2)),
            before: (c, o) => Get(c, o, endStream: false),
            after: (c, o) =>
            {
                Assert.Equal(5, c.GetSendWindow(1));
                sent[0] = c.SendData(1, "hello world"u8, endStream: true, o);
                sent[1] = c.SendData(1, " world"u8, endStream: true, o);
                var more = new ReadOnlySequence<byte>(ConnectionKit.WindowUpdate(1, 100));
                c.Process(ref more, o);
                sent[2] = c.SendData(1, " world"u8, endStream: true, o);
            });
        Assert.Equal([5, 0, 6, 0], sent);
        Assert.Equal([ClientSettings, "Headers 1", "SETTINGS ACK", "DATA 1 hello", "DATA 1  world end"], outcome.Frames);

        var big = new byte[20000];
        var output = new ArrayBufferWriter<byte>();
        var client = new Http2ClientConnection(new ClientRecordingHandler());
        int id = Get(client, output, endStream: false);
        Assert.Equal(16384, client.SendData(id, big, endStream: true, output));
        Assert.Equal(65535 - 16384, client.GetSendWindow(id));
    }

    [Fact]
    public void Consumed_data_is_given_back_once_half_a_window_is_owed()
    {
        // 48,000 bytes: a few split points instead of every one, which would take minutes.
        var body = new string('d', 16000);
        var input = Concat(ServerPreface, Ok(1), ConnectionKit.Data(1, body), ConnectionKit.Data(1, body), ConnectionKit.Data(1, body));
        foreach (int at in new[] { input.Length, 1, 40, 16040, input.Length - 1 })
        {
            var outcome = Run(at == input.Length ? [input] : [input[..at], input[at..]], before: (c, o) => Get(c, o), after: (c, o) =>
            {
                c.ConsumeData(1, 16000, o);
                c.ConsumeData(1, 16000, o);
                c.ConsumeData(1, 16000, o);
            });
            Assert.Equal([ClientSettings, "Headers 1 end", "SETTINGS ACK", "WINDOW_UPDATE 0 48000", "WINDOW_UPDATE 1 48000"], outcome.Frames);
        }
    }

    [Fact]
    public void Reset_stream_is_cancel_and_what_the_server_sent_meanwhile_is_ignored()
    {
        var outcome = RunAllSplits(
            Concat(ServerPreface, Ok(1), ConnectionKit.Data(1, "late", endStream: true), ConnectionKit.Rst(1, Http2ErrorCode.Cancel)),
            before: (c, o) =>
            {
                int id = Get(c, o);
                c.ResetStream(id, o);
                Assert.True(c.TryOpenStream(out int unsent));
                c.ResetStream(unsent, o);
            });
        Assert.Equal([ClientSettings, "Headers 1 end", "RST_STREAM 1 Cancel", "SETTINGS ACK"], outcome.Frames);
        Assert.Empty(outcome.Events);
        Assert.Equal(0, outcome.ActiveStreams);
    }

    [Fact]
    public void Headers_after_the_server_reset_a_stream_are_a_stream_closed_error()
    {
        var outcome = RunAllSplits(Concat(ServerPreface, ConnectionKit.Rst(1, Http2ErrorCode.InternalError), Ok(1, endStream: true), ConnectionKit.Ping(1)), before: (c, o) => Get(c, o));
        Assert.Equal([ClientSettings, "Headers 1 end", "SETTINGS ACK", "RST_STREAM 1 StreamClosed", "PING ACK 1"], outcome.Frames);
        Assert.Equal(["reset 1 InternalError by peer"], outcome.Events);
    }

    [Fact]
    public void Refused_stream_from_the_server_is_reported_for_a_retry()
    {
        var outcome = RunAllSplits(Concat(ServerPreface, ConnectionKit.Rst(1, Http2ErrorCode.RefusedStream), ConnectionKit.Rst(3, Http2ErrorCode.InternalError)), before: (c, o) =>
        {
            Get(c, o);
            Get(c, o);
        });
        Assert.Equal(["reset 1 RefusedStream by peer", "reset 3 InternalError by peer"], outcome.Events);
        Assert.Equal(0, outcome.ActiveStreams);
    }

    [Theory]
    [InlineData("HEAD", "200")]
    [InlineData("GET", "304")]
    public void Content_length_of_a_head_or_304_response_describes_no_data(string method, string status)
    {
        var outcome = RunAllSplits(Concat(ServerPreface, Response(1, true, (":status", status), ("content-length", "10"))), before: (c, o) => Get(c, o, method: method));
        Assert.Equal($"headers 1 {status} end", outcome.Events[^1]);
    }

    [Theory]
    [InlineData("4", true)] // fewer bytes than content-length at END_STREAM
    [InlineData("2", false)] // more bytes than content-length at any point
    public void Data_not_matching_content_length_is_a_stream_protocol_error(string length, bool endWithData)
    {
        var outcome = RunAllSplits(
            Concat(ServerPreface, Ok(1, false, ("content-length", length)), ConnectionKit.Data(1, "abc", endStream: endWithData), ConnectionKit.Ping(1)),
            before: (c, o) => Get(c, o));
        Assert.Equal([ClientSettings, "Headers 1 end", "SETTINGS ACK", "RST_STREAM 1 ProtocolError", "PING ACK 1"], outcome.Frames);
        Assert.Equal("reset 1 ProtocolError", outcome.Events[^1]);
    }

    [Fact]
    public void Data_before_the_response_headers_is_a_stream_protocol_error()
    {
        var outcome = RunAllSplits(Concat(ServerPreface, Response(1, false, (":status", "100")), ConnectionKit.Data(1, "x")), before: (c, o) => Get(c, o));
        Assert.Equal([ClientSettings, "Headers 1 end", "SETTINGS ACK", "RST_STREAM 1 ProtocolError"], outcome.Frames);
    }

    [Fact]
    public void Frames_after_the_response_ended_follow_the_stream_states()
    {
        // The request is still open (no END_STREAM), the response ended: half-closed (remote), DATA is STREAM_CLOSED.
        var halfClosed = RunAllSplits(Concat(ServerPreface, Ok(1, endStream: true), ConnectionKit.Data(1, "x")), before: (c, o) => Get(c, o, endStream: false));
        Assert.Equal([ClientSettings, "Headers 1", "SETTINGS ACK", "RST_STREAM 1 StreamClosed"], halfClosed.Frames);

        // Both ended: the stream is closed, DATA is a connection STREAM_CLOSED.
        var closed = RunAllSplits(Concat(ServerPreface, Ok(1, endStream: true), ConnectionKit.Data(1, "x")), before: (c, o) => Get(c, o));
        Assert.Equal([ClientSettings, "Headers 1 end", "SETTINGS ACK", "GOAWAY 0 StreamClosed"], closed.Frames);
    }
}
