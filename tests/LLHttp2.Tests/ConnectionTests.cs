using LLHttp2.Connection;
using LLHttp2.Frames;
using static LLHttp2.Tests.ConnectionKit;
using static LLHttp2.Tests.TestKit;

namespace LLHttp2.Tests;

/// <summary>RFC 9113 §3.4, §6.5, §6.7, §6.8: the preface, the SETTINGS exchange, PING and GOAWAY of the server connection.</summary>
public class Rfc9113_3_4_And_6_ConnectionControl
{
    [Fact]
    public void Server_settings_come_first_then_the_ack_of_the_client_settings()
    {
        var outcome = RunAllSplits(Concat(Http2Preface.Client.ToArray(), Frame(Http2FrameType.Settings, 0, 0, [0, 4, 0, 1, 0, 0])));
        Assert.Equal([ServerSettings, "SETTINGS ACK"], outcome.Frames);
        Assert.Equal(Http2ConnectionState.Open, outcome.State);
    }

    [Fact]
    public void Server_settings_are_written_before_any_client_byte()
    {
        var outcome = Run([], after: (c, o) => c.Start(o));
        Assert.Equal([ServerSettings], outcome.Frames);
        Assert.Equal(Http2ConnectionState.AwaitingPreface, outcome.State);
    }

    [Fact]
    public void A_wrong_preface_is_a_connection_protocol_error()
    {
        var outcome = RunAllSplits("GET / HTTP/1.1\r\nHost: a\r\n\r\n"u8.ToArray());
        Assert.Equal([ServerSettings, "GOAWAY 0 ProtocolError"], outcome.Frames);
        Assert.Equal(Http2ConnectionState.Closed, outcome.State);
    }

    [Fact]
    public void A_first_frame_other_than_settings_is_a_connection_protocol_error()
    {
        var outcome = RunAllSplits(Concat(Http2Preface.Client.ToArray(), Ping(1)));
        Assert.Equal([ServerSettings, "GOAWAY 0 ProtocolError"], outcome.Frames);
    }

    [Fact]
    public void Our_settings_ack_is_tracked_and_the_timeout_is_the_callers()
    {
        Assert.Equal(TimeSpan.FromSeconds(10), Http2ServerConnectionOptions.DefaultSettingsAckTimeout);
        bool? before = null, after = null;
        RunAllSplits(Concat(Preface, SettingsAck), after: (c, _) => after = c.IsAwaitingSettingsAck);
        RunAllSplits(Preface, after: (c, _) => before = c.IsAwaitingSettingsAck);
        Assert.True(before);
        Assert.False(after);

        var timedOut = RunAllSplits(Preface, after: (c, o) => c.OnSettingsTimeout(o));
        Assert.Equal([ServerSettings, "SETTINGS ACK", "GOAWAY 0 SettingsTimeout"], timedOut.Frames);
        var acked = RunAllSplits(Concat(Preface, SettingsAck), after: (c, o) => c.OnSettingsTimeout(o));
        Assert.Equal([ServerSettings, "SETTINGS ACK"], acked.Frames);
    }

    [Theory]
    [InlineData(2)] // §6.5.2: SETTINGS_ENABLE_PUSH 2.
    [InlineData(8)] // RFC 8441 §3: SETTINGS_ENABLE_CONNECT_PROTOCOL 2.
    public void Invalid_settings_are_a_connection_error(byte id)
    {
        var outcome = RunAllSplits(Concat(Preface, Frame(Http2FrameType.Settings, 0, 0, [0, id, 0, 0, 0, 2])));
        Assert.Equal([ServerSettings, "SETTINGS ACK", "GOAWAY 0 ProtocolError"], outcome.Frames);
    }

    [Fact]
    public void The_peer_frame_size_and_window_settings_apply_to_what_we_send()
    {
        // SETTINGS_INITIAL_WINDOW_SIZE 3: a stream may get 3 bytes of DATA.
        int sent = -1;
        var outcome = RunAllSplits(
            Concat(Http2Preface.Client.ToArray(), Frame(Http2FrameType.Settings, 0, 0, [0, 4, 0, 0, 0, 3]), Get(1)),
            after: (c, o) =>
            {
                c.SendHeaders(1, [0x88], endStream: false, o);
                sent = c.SendData(1, "hello"u8, endStream: true, o);
            });
        Assert.Equal(3, sent);
        Assert.Equal([ServerSettings, "SETTINGS ACK", "Headers 1", "DATA 1 hel"], outcome.Frames);
    }

    [Fact]
    public void Ping_is_answered_with_its_data_and_a_ping_ack_is_ignored()
    {
        var outcome = RunAllSplits(Concat(Preface, Ping(7), Ping(8, ack: true)));
        Assert.Equal([ServerSettings, "SETTINGS ACK", "PING ACK 7"], outcome.Frames);
    }

    [Fact]
    public void Ping_on_a_stream_is_a_connection_protocol_error()
    {
        var outcome = RunAllSplits(Concat(Preface, Frame(Http2FrameType.Ping, 0, 1, new byte[8])));
        Assert.Equal([ServerSettings, "SETTINGS ACK", "GOAWAY 0 ProtocolError"], outcome.Frames);
    }

    [Fact]
    public void Graceful_goaway_drains_streams_up_to_its_last_id_and_refuses_newer_ones()
    {
        var outcome = RunAllSplits(Concat(Preface, Get(1, endStream: false)), after: (c, o) =>
        {
            c.BeginGracefulShutdown(o);
            var more = new ReadOnlySequence<byte>(Concat(Get(3), Data(1, "x", endStream: true)));
            c.Process(ref more, o);
            Assert.False(c.IsDrained);
            c.SendHeaders(1, [0x88], endStream: true, o);
            Assert.True(c.IsDrained);
        });
        Assert.Equal([ServerSettings, "SETTINGS ACK", "GOAWAY 1 NoError", "RST_STREAM 3 RefusedStream", "Headers 1 end"], outcome.Frames);
        Assert.Equal(Http2ConnectionState.Draining, outcome.State);
        Assert.Contains("data 1 x end", outcome.Events);
        Assert.DoesNotContain(outcome.Events, e => e.StartsWith("field 3", StringComparison.Ordinal));
    }

    [Fact]
    public void The_peer_goaway_is_reported()
    {
        var outcome = RunAllSplits(Concat(Preface, Frame(Http2FrameType.GoAway, 0, 0, [0, 0, 0, 0, 0, 0, 0, 0])));
        Assert.Equal(["goaway 0 NoError"], outcome.Events);
    }

    [Fact]
    public void A_connection_error_goaway_names_the_last_stream_processed()
    {
        var outcome = RunAllSplits(Concat(Preface, Get(5), Frame(Http2FrameType.Ping, 0, 0, new byte[7])));
        Assert.Equal([ServerSettings, "SETTINGS ACK", "GOAWAY 5 FrameSizeError"], outcome.Frames);
    }

    [Fact]
    public void Priority_is_parsed_and_ignored_even_on_an_idle_stream()
    {
        var outcome = RunAllSplits(Concat(Preface, Frame(Http2FrameType.Priority, 0, 9, [0, 0, 0, 3, 16]), Get(1)));
        Assert.Equal([ServerSettings, "SETTINGS ACK"], outcome.Frames);
        Assert.Contains("headers 1 end", outcome.Events);
    }

    [Fact]
    public void Push_promise_from_a_client_is_a_connection_protocol_error()
    {
        var outcome = RunAllSplits(Concat(Preface, Get(1, endStream: false), Frame(Http2FrameType.PushPromise, Http2FrameFlags.EndHeaders, 1, [0, 0, 0, 2])));
        Assert.Equal("GOAWAY 1 ProtocolError", outcome.Frames[^1]);
    }
}

/// <summary>RFC 9113 §5.1.1, §5.1.2, §5.4.2, §6.4, §6.9: stream identifiers, concurrency, resets and windows.</summary>
public class Rfc9113_5_1_ConnectionStreams
{
    [Fact]
    public void A_request_its_body_and_end_reach_the_application()
    {
        var outcome = RunAllSplits(Concat(Preface, Get(1, endStream: false, ("content-length", "5")), Data(1, "he"), Data(1, "llo", endStream: true)));
        Assert.Equal(
            ["field 1 :method: GET", "field 1 :scheme: https", "field 1 :path: /", "field 1 :authority: a.example", "field 1 content-length: 5",
             "headers 1", "data 1 he", "data 1 llo end"],
            outcome.Events);
        Assert.Equal(1, outcome.ActiveStreams);
    }

    [Fact]
    public void An_even_stream_is_a_connection_protocol_error()
    {
        var outcome = RunAllSplits(Concat(Preface, Get(2)));
        Assert.Equal([ServerSettings, "SETTINGS ACK", "GOAWAY 0 ProtocolError"], outcome.Frames);
    }

    [Fact]
    public void A_lower_new_stream_is_a_connection_protocol_error()
    {
        var outcome = RunAllSplits(Concat(Preface, Get(5), Get(3)));
        Assert.Equal([ServerSettings, "SETTINGS ACK", "GOAWAY 5 ProtocolError"], outcome.Frames);
    }

    [Fact]
    public void Lower_idle_streams_are_implicitly_closed()
    {
        // Stream 5 opened; 3 was never used and is closed now: DATA on it is a connection error STREAM_CLOSED.
        var outcome = RunAllSplits(Concat(Preface, Get(5, endStream: false), Data(3, "x")));
        Assert.Equal([ServerSettings, "SETTINGS ACK", "GOAWAY 5 StreamClosed"], outcome.Frames);
    }

    [Fact]
    public void Data_on_an_idle_stream_is_a_connection_protocol_error()
    {
        var outcome = RunAllSplits(Concat(Preface, Data(1, "x")));
        Assert.Equal([ServerSettings, "SETTINGS ACK", "GOAWAY 0 ProtocolError"], outcome.Frames);
    }

    [Fact]
    public void Streams_beyond_max_concurrent_streams_are_refused()
    {
        var options = new Http2ServerConnectionOptions { MaxConcurrentStreams = 2 };
        var outcome = RunAllSplits(Concat(Preface, Get(1), Get(3), Get(5), Get(7)), options, after: (c, o) =>
        {
            c.SendHeaders(1, [0x88], endStream: true, o);
            var more = new ReadOnlySequence<byte>(Get(9));
            c.Process(ref more, o);
        });
        Assert.Equal(
            ["SETTINGS 3=2 4=65535 6=32768 2=0 8=1", "SETTINGS ACK", "RST_STREAM 5 RefusedStream", "RST_STREAM 7 RefusedStream", "Headers 1 end"],
            outcome.Frames);
        Assert.Equal(2, outcome.ActiveStreams);
        Assert.Contains("headers 9 end", outcome.Events);
        Assert.DoesNotContain(outcome.Events, e => e.Contains(" 5 ", StringComparison.Ordinal));
    }

    [Fact]
    public void Frames_in_flight_on_a_refused_stream_are_ignored()
    {
        var options = new Http2ServerConnectionOptions { MaxConcurrentStreams = 1 };
        var outcome = RunAllSplits(Concat(Preface, Get(1), Get(3, endStream: false), Data(3, "x", endStream: true), Ping(1)), options);
        Assert.Equal(["SETTINGS 3=1 4=65535 6=32768 2=0 8=1", "SETTINGS ACK", "RST_STREAM 3 RefusedStream", "PING ACK 1"], outcome.Frames);
    }

    [Fact]
    public void The_last_client_stream_id_starts_a_graceful_goaway()
    {
        var outcome = RunAllSplits(Concat(Preface, Get(int.MaxValue)));
        Assert.Equal([ServerSettings, "SETTINGS ACK", $"GOAWAY {int.MaxValue} NoError"], outcome.Frames);
        Assert.Equal(Http2ConnectionState.Draining, outcome.State);
    }

    [Fact]
    public void A_peer_reset_closes_the_stream_and_later_data_is_a_stream_error()
    {
        var outcome = RunAllSplits(Concat(Preface, Get(1, endStream: false), Rst(1, Http2ErrorCode.Cancel), Data(1, "x")));
        Assert.Equal([ServerSettings, "SETTINGS ACK", "RST_STREAM 1 StreamClosed"], outcome.Frames);
        Assert.Equal("reset 1 Cancel by peer", outcome.Events[^1]);
        Assert.Equal(0, outcome.ActiveStreams);
    }

    [Fact]
    public void Data_after_end_stream_is_a_stream_error_stream_closed()
    {
        var outcome = RunAllSplits(Concat(Preface, Get(1), Data(1, "x")));
        Assert.Equal([ServerSettings, "SETTINGS ACK", "RST_STREAM 1 StreamClosed"], outcome.Frames);
        Assert.Equal("reset 1 StreamClosed", outcome.Events[^1]);
    }

    [Fact]
    public void A_response_that_ends_first_leaves_the_stream_half_closed_local_until_the_body_ends()
    {
        var outcome = RunAllSplits(Concat(Preface, Get(1, endStream: false), Get(3, endStream: false)), after: (c, o) =>
        {
            c.SendHeaders(1, [0x88], endStream: true, o);
            c.SendHeaders(3, [0x88], endStream: true, o);
            Assert.Equal(2, c.ActiveStreams);
            var more = new ReadOnlySequence<byte>(Concat(Data(1, "x", endStream: true), Request(3, true, ("x-a", "1")), Data(3, "y")));
            c.Process(ref more, o);
        });
        Assert.Equal(["data 1 x end", "field 3 x-a: 1", "trailers 3 end"], outcome.Events[^3..]);
        Assert.Equal("GOAWAY 3 StreamClosed", outcome.Frames[^1]);
        Assert.Equal(0, outcome.ActiveStreams);
    }

    [Fact]
    public void Window_update_moves_the_send_windows()
    {
        int first = -1, second = -1;
        var outcome = RunAllSplits(
            Concat(Http2Preface.Client.ToArray(), Frame(Http2FrameType.Settings, 0, 0, [0, 4, 0, 0, 0, 1]), Get(1), WindowUpdate(1, 2)),
            after: (c, o) =>
            {
                c.SendHeaders(1, [0x88], endStream: false, o);
                first = c.SendData(1, "abcd"u8, endStream: false, o);
                second = c.SendData(1, "d"u8, endStream: false, o);
            });
        Assert.Equal(3, first);
        Assert.Equal(0, second);
        Assert.Equal("DATA 1 abc", outcome.Frames[^1]);
    }

    [Fact]
    public void Window_update_overflow_on_a_stream_is_a_stream_flow_control_error()
    {
        var outcome = RunAllSplits(Concat(Preface, Get(1), WindowUpdate(1, int.MaxValue)));
        Assert.Equal([ServerSettings, "SETTINGS ACK", "RST_STREAM 1 FlowControlError"], outcome.Frames);
    }

    [Fact]
    public void Data_beyond_the_window_is_a_flow_control_error_and_consumed_data_is_given_back()
    {
        var options = new Http2ServerConnectionOptions { InitialStreamWindowSize = 4 };
        var outcome = RunAllSplits(Concat(Preface, Get(1, endStream: false), Data(1, "ab"), Data(1, "cde")), options);
        Assert.Equal(["SETTINGS 3=100 4=4 6=32768 2=0 8=1", "SETTINGS ACK", "RST_STREAM 1 FlowControlError"], outcome.Frames);

        var consumed = RunAllSplits(Concat(Preface, Get(1, endStream: false), Data(1, "ab")), options, after: (c, o) => c.ConsumeData(1, 2, o));
        Assert.Equal("WINDOW_UPDATE 1 2", consumed.Frames[^1]);
    }
}
