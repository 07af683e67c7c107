using LLHttp2.Connection;
using LLHttp2.Frames;
using static LLHttp2.Tests.ConnectionKit;
using static LLHttp2.Tests.TestKit;

namespace LLHttp2.Tests;

/// <summary>
/// The flood limits, each with a small configured bound so every split point stays cheap to run, the exact frame
/// and code the connection answers with, and the named default (Http2ServerConnectionOptions cites where it comes from).
/// </summary>
public class Rfc9113_10_5_FloodLimits
{
    [Fact]
    public void Defaults_are_the_named_constants()
    {
        var options = new Http2ServerConnectionOptions();
        Assert.Equal(100, options.MaxConcurrentStreams);
        Assert.Equal(8, options.MaxContinuationFrames);
        Assert.Equal(1000, options.MaxPendingControlFrames);
        Assert.Equal(32, options.MaxSettingsPerFrame);
        Assert.Equal(100, options.MaxResetsWithoutCompletion);
        Assert.Equal(16, options.MaxConsecutiveEmptyData);
        Assert.Equal(1000, options.MaxWindowUpdatesWithoutData);
        Assert.Equal(TimeSpan.FromSeconds(10), options.SettingsAckTimeout);
    }

    [Fact]
    public void Rapid_reset_is_goaway_enhance_your_calm()
    {
        // CVE-2023-44487: open, reset, open, reset, ... with no stream completing.
        var options = new Http2ServerConnectionOptions { MaxResetsWithoutCompletion = 2 };
        var input = Concat(Preface, Get(1, false), Rst(1, Http2ErrorCode.Cancel), Get(3, false), Rst(3, Http2ErrorCode.Cancel), Get(5, false), Rst(5, Http2ErrorCode.Cancel), Ping(1));
        var outcome = RunAllSplits(input, options);
        Assert.Equal([ServerSettings, "SETTINGS ACK", "GOAWAY 5 EnhanceYourCalm"], outcome.Frames);
        Assert.Equal(Http2ConnectionState.Closed, outcome.State);
    }

    [Fact]
    public void A_completed_stream_earns_a_reset_back()
    {
        var options = new Http2ServerConnectionOptions { MaxResetsWithoutCompletion = 1 };
        var outcome = RunAllSplits(Concat(Preface, Get(1, false), Rst(1, Http2ErrorCode.Cancel), Get(3)), options, after: (c, o) =>
        {
            c.SendHeaders(3, [0x88], endStream: true, o);
            var more = new ReadOnlySequence<byte>(Concat(Get(5, false), Rst(5, Http2ErrorCode.Cancel), Ping(2)));
            c.Process(ref more, o);
        });
        Assert.Equal([ServerSettings, "SETTINGS ACK", "Headers 3 end", "PING ACK 2"], outcome.Frames);
    }

    [Fact]
    public void Continuation_flood_is_goaway_enhance_your_calm_by_count()
    {
        // CVE-2024-27316 class: empty CONTINUATION frames add no bytes, so only their count bounds them.
        var options = new Http2ServerConnectionOptions { MaxContinuationFrames = 3 };
        var block = Block((":method", "GET"), (":scheme", "https"), (":path", "/"));
        var empty = Frame(Http2FrameType.Continuation, 0, 1);
        var ok = RunAllSplits(Concat(Preface, Frame(Http2FrameType.Headers, Http2FrameFlags.EndStream, 1, block), empty, empty, Frame(Http2FrameType.Continuation, Http2FrameFlags.EndHeaders, 1)), options);
        Assert.Equal("headers 1 end", ok.Events[^1]);
        var flood = RunAllSplits(Concat(Preface, Frame(Http2FrameType.Headers, Http2FrameFlags.EndStream, 1, block), empty, empty, empty, empty), options);
        Assert.Equal([ServerSettings, "SETTINGS ACK", "GOAWAY 0 EnhanceYourCalm"], flood.Frames);
    }

    [Fact]
    public void Continuation_flood_is_goaway_enhance_your_calm_by_bytes()
    {
        var options = new Http2ServerConnectionOptions { MaxHeaderListSize = 64 };
        var outcome = RunAllSplits(Concat(Preface, Frame(Http2FrameType.Headers, 0, 1, new byte[40]), Frame(Http2FrameType.Continuation, 0, 1, new byte[40])), options);
        Assert.Equal(["SETTINGS 3=100 4=65535 6=64 2=0 8=1", "SETTINGS ACK", "GOAWAY 0 EnhanceYourCalm"], outcome.Frames);
    }

    [Fact]
    public void Ping_flood_while_output_is_not_drained_is_goaway_enhance_your_calm()
    {
        // CVE-2019-9512: the SETTINGS ACK counts as the first frame to answer, then two PING ACKs; the third PING is one too many.
        var options = new Http2ServerConnectionOptions { MaxPendingControlFrames = 3 };
        var outcome = RunAllSplits(Concat(Preface, Ping(1), Ping(2), Ping(3)), options);
        Assert.Equal([ServerSettings, "SETTINGS ACK", "PING ACK 1", "PING ACK 2", "GOAWAY 0 EnhanceYourCalm"], outcome.Frames);
    }

    [Fact]
    public void Draining_the_output_resets_the_count()
    {
        var options = new Http2ServerConnectionOptions { MaxPendingControlFrames = 3 };
        var outcome = RunAllSplits(Concat(Preface, Ping(1), Ping(2)), options, after: (c, o) =>
        {
            c.OnOutputFlushed();
            var more = new ReadOnlySequence<byte>(Concat(Ping(3), Ping(4)));
            c.Process(ref more, o);
        });
        Assert.Equal([ServerSettings, "SETTINGS ACK", "PING ACK 1", "PING ACK 2", "PING ACK 3", "PING ACK 4"], outcome.Frames);
    }

    [Fact]
    public void Settings_flood_is_goaway_enhance_your_calm()
    {
        // CVE-2019-9515.
        var options = new Http2ServerConnectionOptions { MaxPendingControlFrames = 2 };
        var settings = Frame(Http2FrameType.Settings, 0, 0);
        var outcome = RunAllSplits(Concat(Preface, settings, settings), options);
        Assert.Equal([ServerSettings, "SETTINGS ACK", "SETTINGS ACK", "GOAWAY 0 EnhanceYourCalm"], outcome.Frames);
    }

    [Fact]
    public void Too_many_settings_in_one_frame_is_goaway_enhance_your_calm()
    {
        var options = new Http2ServerConnectionOptions { MaxSettingsPerFrame = 2 };
        var pair = new byte[] { 0, 0x20, 0, 0, 0, 0 }; // an unknown identifier, ignored but counted
        var outcome = RunAllSplits(Concat(Http2Preface.Client.ToArray(), Frame(Http2FrameType.Settings, 0, 0, Concat(pair, pair, pair))), options);
        Assert.Equal([ServerSettings, "GOAWAY 0 EnhanceYourCalm"], outcome.Frames);
    }

    [Fact]
    public void Reset_flood_is_goaway_enhance_your_calm()
    {
        // CVE-2019-9514: requests that make us answer with RST_STREAM count as frames to answer.
        var options = new Http2ServerConnectionOptions { MaxPendingControlFrames = 3 };
        var bad = (":method", "GET");
        var outcome = RunAllSplits(Concat(Preface, Request(1, true, bad), Request(3, true, bad), Request(5, true, bad)), options);
        Assert.Equal([ServerSettings, "SETTINGS ACK", "RST_STREAM 1 ProtocolError", "RST_STREAM 3 ProtocolError", "GOAWAY 5 EnhanceYourCalm"], outcome.Frames);
    }

    [Fact]
    public void Empty_data_flood_is_goaway_enhance_your_calm()
    {
        // CVE-2019-9518: DATA without payload and without END_STREAM.
        var options = new Http2ServerConnectionOptions { MaxConsecutiveEmptyData = 2 };
        var empty = Data(1, "");
        var ok = RunAllSplits(Concat(Preface, Get(1, false), empty, empty, Data(1, "x"), empty, empty, Data(1, "", endStream: true)), options);
        Assert.Equal("data 1  end", ok.Events[^1]);
        var flood = RunAllSplits(Concat(Preface, Get(1, false), empty, empty, empty), options);
        Assert.Equal([ServerSettings, "SETTINGS ACK", "GOAWAY 1 EnhanceYourCalm"], flood.Frames);
    }

    [Fact]
    public void Window_update_flood_is_goaway_enhance_your_calm()
    {
        var options = new Http2ServerConnectionOptions { MaxWindowUpdatesWithoutData = 2 };
        var ok = RunAllSplits(Concat(Preface, Get(1), WindowUpdate(0, 1), WindowUpdate(1, 1)), options, after: (c, o) =>
        {
            c.SendHeaders(1, [0x88], endStream: false, o);
            c.SendData(1, "x"u8, endStream: false, o);
            var more = new ReadOnlySequence<byte>(Concat(WindowUpdate(0, 1), WindowUpdate(1, 1), Ping(1)));
            c.Process(ref more, o);
        });
        Assert.Equal("PING ACK 1", ok.Frames[^1]);
        var flood = RunAllSplits(Concat(Preface, Get(1), WindowUpdate(0, 1), WindowUpdate(1, 1), WindowUpdate(1, 1)), options);
        Assert.Equal([ServerSettings, "SETTINGS ACK", "GOAWAY 1 EnhanceYourCalm"], flood.Frames);
    }
}
