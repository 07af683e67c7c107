using LLHttp2.Frames;
using LLHttp2.Streams;

namespace LLHttp2.Tests;

/// <summary>RFC 9113 §5.1: each frame received in each state, with the exact outcome.</summary>
public class Rfc9113_5_1_StreamStates
{
    /// <summary>A stream driven into a state the way a connection gets it there.</summary>
    private static Http2StreamStateMachine In(string state)
    {
        var stream = new Http2StreamStateMachine(3);
        switch (state)
        {
            case "Idle":
                break;
            case "ReservedLocal":
                stream.OnPushPromiseSent();
                break;
            case "ReservedRemote":
                stream.OnPushPromiseReceived();
                break;
            case "Open":
                stream.OnReceived(Http2FrameType.Headers, false);
                break;
            case "HalfClosedLocal":
                stream.OnReceived(Http2FrameType.Headers, false);
                stream.OnSent(Http2FrameType.Data, true);
                break;
            case "HalfClosedRemote":
                stream.OnReceived(Http2FrameType.Headers, true);
                break;
            case "Closed/EndStream":
                stream.OnReceived(Http2FrameType.Headers, true);
                stream.OnSent(Http2FrameType.Headers, true);
                break;
            case "Closed/ResetSent":
                stream.OnReceived(Http2FrameType.Headers, false);
                stream.OnSent(Http2FrameType.RstStream, false);
                break;
            case "Closed/ResetReceived":
                stream.OnReceived(Http2FrameType.Headers, false);
                stream.OnReceived(Http2FrameType.RstStream, false);
                break;
            default:
                throw new ArgumentException(state);
        }

        Assert.Equal(state.Split('/')[0], stream.State.ToString());
        return stream;
    }

    private static string Receive(string state, Http2FrameType type, bool endStream)
    {
        var stream = In(state);
        try
        {
            var verdict = stream.OnReceived(type, endStream);
            return verdict == Http2FrameVerdict.Ignore ? "ignore" : stream.State == Http2StreamState.Closed ? $"Closed/{stream.Closure}" : stream.State.ToString();
        }
        catch (Http2Exception e)
        {
            Assert.Equal(3, e.StreamId);
            return $"{(e.IsConnectionError ? "connection" : "stream")} {e.Code}";
        }
    }

    [Theory]
    // idle: only HEADERS (and PRIORITY) may open it
    [InlineData("Idle", Http2FrameType.Headers, false, "Open")]
    [InlineData("Idle", Http2FrameType.Headers, true, "HalfClosedRemote")]
    [InlineData("Idle", Http2FrameType.Priority, false, "Idle")]
    [InlineData("Idle", Http2FrameType.Data, false, "connection ProtocolError")]
    [InlineData("Idle", Http2FrameType.RstStream, false, "connection ProtocolError")]
    [InlineData("Idle", Http2FrameType.WindowUpdate, false, "connection ProtocolError")]
    [InlineData("Idle", Http2FrameType.PushPromise, false, "connection ProtocolError")]
    // reserved (local): RST_STREAM, WINDOW_UPDATE, PRIORITY
    [InlineData("ReservedLocal", Http2FrameType.RstStream, false, "Closed/ResetReceived")]
    [InlineData("ReservedLocal", Http2FrameType.WindowUpdate, false, "ReservedLocal")]
    [InlineData("ReservedLocal", Http2FrameType.Priority, false, "ReservedLocal")]
    [InlineData("ReservedLocal", Http2FrameType.Headers, false, "connection ProtocolError")]
    [InlineData("ReservedLocal", Http2FrameType.Data, false, "connection ProtocolError")]
    // reserved (remote): HEADERS, RST_STREAM, PRIORITY
    [InlineData("ReservedRemote", Http2FrameType.Headers, false, "HalfClosedLocal")]
    [InlineData("ReservedRemote", Http2FrameType.Headers, true, "Closed/EndStream")]
    [InlineData("ReservedRemote", Http2FrameType.RstStream, false, "Closed/ResetReceived")]
    [InlineData("ReservedRemote", Http2FrameType.Priority, false, "ReservedRemote")]
    [InlineData("ReservedRemote", Http2FrameType.Data, false, "connection ProtocolError")]
    [InlineData("ReservedRemote", Http2FrameType.WindowUpdate, false, "connection ProtocolError")]
    // open: anything; END_STREAM half-closes
    [InlineData("Open", Http2FrameType.Data, false, "Open")]
    [InlineData("Open", Http2FrameType.Data, true, "HalfClosedRemote")]
    [InlineData("Open", Http2FrameType.Headers, true, "HalfClosedRemote")]
    [InlineData("Open", Http2FrameType.Headers, false, "Open")]
    [InlineData("Open", Http2FrameType.WindowUpdate, true, "Open")] // bit 0 means nothing on WINDOW_UPDATE
    [InlineData("Open", Http2FrameType.RstStream, false, "Closed/ResetReceived")]
    [InlineData("Open", Http2FrameType.Continuation, false, "Open")]
    // half-closed (local): anything; END_STREAM closes
    [InlineData("HalfClosedLocal", Http2FrameType.Data, false, "HalfClosedLocal")]
    [InlineData("HalfClosedLocal", Http2FrameType.Data, true, "Closed/EndStream")]
    [InlineData("HalfClosedLocal", Http2FrameType.Headers, true, "Closed/EndStream")]
    [InlineData("HalfClosedLocal", Http2FrameType.WindowUpdate, false, "HalfClosedLocal")]
    [InlineData("HalfClosedLocal", Http2FrameType.RstStream, false, "Closed/ResetReceived")]
    // half-closed (remote): WINDOW_UPDATE, PRIORITY, RST_STREAM; anything else a stream error STREAM_CLOSED
    [InlineData("HalfClosedRemote", Http2FrameType.WindowUpdate, false, "HalfClosedRemote")]
    [InlineData("HalfClosedRemote", Http2FrameType.Priority, false, "HalfClosedRemote")]
    [InlineData("HalfClosedRemote", Http2FrameType.RstStream, false, "Closed/ResetReceived")]
    [InlineData("HalfClosedRemote", Http2FrameType.Data, false, "stream StreamClosed")]
    [InlineData("HalfClosedRemote", Http2FrameType.Data, true, "stream StreamClosed")]
    [InlineData("HalfClosedRemote", Http2FrameType.Headers, true, "stream StreamClosed")]
    [InlineData("HalfClosedRemote", Http2FrameType.PushPromise, false, "stream StreamClosed")]
    // closed after both END_STREAMs: late WINDOW_UPDATE and RST_STREAM ignored, anything else a connection error
    [InlineData("Closed/EndStream", Http2FrameType.WindowUpdate, false, "ignore")]
    [InlineData("Closed/EndStream", Http2FrameType.RstStream, false, "ignore")]
    [InlineData("Closed/EndStream", Http2FrameType.Priority, false, "Closed/EndStream")]
    [InlineData("Closed/EndStream", Http2FrameType.Data, false, "connection StreamClosed")]
    [InlineData("Closed/EndStream", Http2FrameType.Headers, true, "connection StreamClosed")]
    // closed by our RST_STREAM: whatever the peer sent before it knew is ignored
    [InlineData("Closed/ResetSent", Http2FrameType.Data, false, "ignore")]
    [InlineData("Closed/ResetSent", Http2FrameType.Headers, false, "ignore")]
    [InlineData("Closed/ResetSent", Http2FrameType.WindowUpdate, false, "ignore")]
    [InlineData("Closed/ResetSent", Http2FrameType.RstStream, false, "ignore")]
    // closed by the peer's RST_STREAM: anything but PRIORITY a stream error STREAM_CLOSED
    [InlineData("Closed/ResetReceived", Http2FrameType.Data, false, "stream StreamClosed")]
    [InlineData("Closed/ResetReceived", Http2FrameType.WindowUpdate, false, "stream StreamClosed")]
    [InlineData("Closed/ResetReceived", Http2FrameType.Headers, false, "stream StreamClosed")]
    [InlineData("Closed/ResetReceived", Http2FrameType.Priority, false, "Closed/ResetReceived")]
    public void Received(string state, Http2FrameType type, bool endStream, string expected)
        => Assert.Equal(expected, Receive(state, type, endStream));

    private static string Send(string state, Http2FrameType type, bool endStream)
    {
        var stream = In(state);
        try
        {
            stream.OnSent(type, endStream);
            return stream.State == Http2StreamState.Closed ? $"Closed/{stream.Closure}" : stream.State.ToString();
        }
        catch (InvalidOperationException)
        {
            return "refused";
        }
    }

    [Theory]
    [InlineData("Idle", Http2FrameType.Headers, false, "Open")]
    [InlineData("Idle", Http2FrameType.Headers, true, "HalfClosedLocal")]
    [InlineData("Idle", Http2FrameType.Data, false, "refused")]
    [InlineData("Idle", Http2FrameType.RstStream, false, "refused")]
    [InlineData("ReservedLocal", Http2FrameType.Headers, false, "HalfClosedRemote")]
    [InlineData("ReservedLocal", Http2FrameType.Headers, true, "Closed/EndStream")]
    [InlineData("ReservedLocal", Http2FrameType.Data, false, "refused")]
    [InlineData("ReservedLocal", Http2FrameType.RstStream, false, "Closed/ResetSent")]
    [InlineData("ReservedRemote", Http2FrameType.WindowUpdate, false, "ReservedRemote")]
    [InlineData("ReservedRemote", Http2FrameType.Headers, false, "refused")]
    [InlineData("ReservedRemote", Http2FrameType.RstStream, false, "Closed/ResetSent")]
    [InlineData("Open", Http2FrameType.Data, false, "Open")]
    [InlineData("Open", Http2FrameType.Data, true, "HalfClosedLocal")]
    [InlineData("Open", Http2FrameType.RstStream, false, "Closed/ResetSent")]
    [InlineData("HalfClosedLocal", Http2FrameType.Data, false, "refused")]
    [InlineData("HalfClosedLocal", Http2FrameType.WindowUpdate, false, "HalfClosedLocal")]
    [InlineData("HalfClosedLocal", Http2FrameType.RstStream, false, "Closed/ResetSent")]
    [InlineData("HalfClosedRemote", Http2FrameType.Data, false, "HalfClosedRemote")]
    [InlineData("HalfClosedRemote", Http2FrameType.Headers, true, "Closed/EndStream")]
    [InlineData("HalfClosedRemote", Http2FrameType.RstStream, false, "Closed/ResetSent")]
    [InlineData("Closed/EndStream", Http2FrameType.Data, false, "refused")]
    [InlineData("Closed/EndStream", Http2FrameType.RstStream, false, "Closed/EndStream")] // a reset answering a late frame
    [InlineData("Closed/ResetReceived", Http2FrameType.Priority, false, "Closed/ResetReceived")]
    public void Sent(string state, Http2FrameType type, bool endStream, string expected)
        => Assert.Equal(expected, Send(state, type, endStream));

    [Fact]
    public void A_promised_stream_must_be_idle()
    {
        var stream = In("Open");
        var e = Assert.Throws<Http2Exception>(() => stream.OnPushPromiseReceived());
        Assert.Equal(Http2ErrorCode.ProtocolError, e.Code);
        Assert.True(e.IsConnectionError);
        Assert.Throws<InvalidOperationException>(() => In("Open").OnPushPromiseSent());
        Assert.Throws<ArgumentException>(() => new Http2StreamStateMachine(0));
    }

    [Fact]
    public void A_request_and_response_walk_the_states()
    {
        var stream = new Http2StreamStateMachine(1);
        Assert.Equal(Http2FrameVerdict.Process, stream.OnReceived(Http2FrameType.Headers, false));
        stream.OnReceived(Http2FrameType.Continuation, false);
        stream.OnReceived(Http2FrameType.Data, true);
        Assert.Equal(Http2StreamState.HalfClosedRemote, stream.State);
        stream.OnSent(Http2FrameType.Headers, false);
        stream.OnReceived(Http2FrameType.WindowUpdate, false);
        stream.OnSent(Http2FrameType.Data, true);
        Assert.Equal((Http2StreamState.Closed, Http2StreamClosure.EndStream), (stream.State, stream.Closure));
        Assert.Equal(Http2FrameVerdict.Ignore, stream.OnReceived(Http2FrameType.WindowUpdate, false));
    }
}
