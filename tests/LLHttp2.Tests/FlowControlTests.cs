using LLHttp2.FlowControl;

namespace LLHttp2.Tests;

/// <summary>RFC 9113 §6.9: flow-control windows, both directions, of streams and of the connection.</summary>
public class Rfc9113_6_9_FlowControl
{
    private static void AssertFlowControlError(Action action, bool connection)
    {
        var e = Assert.Throws<Http2Exception>(action);
        Assert.Equal(Http2ErrorCode.FlowControlError, e.Code);
        Assert.Equal(connection, e.IsConnectionError);
    }

    [Fact]
    public void Sending_takes_from_the_window_and_WINDOW_UPDATE_gives_back()
    {
        var window = new Http2SendWindow(1, 65535);
        window.Consume(65000);
        Assert.Equal(535, window.Available);
        Assert.Throws<InvalidOperationException>(() => window.Consume(536));
        window.OnWindowUpdate(1000);
        Assert.Equal(1535, window.Available);
        window.Consume(1535);
        Assert.Equal(0, window.Available);
    }

    [Theory]
    [InlineData(1, false)] // §6.9.1: a stream's window above 2^31-1 is a stream error
    [InlineData(0, true)] // the connection's a connection error
    public void A_window_above_2_31_minus_1_is_FLOW_CONTROL_ERROR(int streamId, bool connection)
    {
        var window = new Http2SendWindow(streamId, 65535);
        window.OnWindowUpdate(int.MaxValue - 65535); // exactly 2^31-1
        Assert.Equal(int.MaxValue, window.Available);
        AssertFlowControlError(() => window.OnWindowUpdate(1), connection);
    }

    [Fact]
    public void A_changed_initial_window_moves_stream_windows_below_zero_and_back()
    {
        // §6.9.2: 60,000 in flight, the peer lowers its initial window to 16,384: the window is -43,616.
        var window = new Http2SendWindow(1, 65535);
        window.Consume(60000);
        window.OnInitialWindowSizeChanged(65535, 16384);
        Assert.Equal(16384 - 60000, window.Size);
        Assert.Equal(0, window.Available);
        window.OnWindowUpdate(50000);
        Assert.Equal(6384, window.Available);
        window.OnInitialWindowSizeChanged(16384, 65535);
        Assert.Equal(6384 + 49151, window.Available);
    }

    [Fact]
    public void A_changed_initial_window_above_2_31_minus_1_is_a_connection_FLOW_CONTROL_ERROR()
    {
        var window = new Http2SendWindow(1, 65535);
        window.OnWindowUpdate(int.MaxValue - 65535);
        AssertFlowControlError(() => window.OnInitialWindowSizeChanged(65535, 65536), connection: true);
        Assert.Throws<InvalidOperationException>(() => new Http2SendWindow(0, 65535).OnInitialWindowSizeChanged(65535, 1));
    }

    [Theory]
    [InlineData(3, false)]
    [InlineData(0, true)]
    public void DATA_beyond_the_receive_window_is_FLOW_CONTROL_ERROR(int streamId, bool connection)
    {
        var window = new Http2ReceiveWindow(streamId, 65535);
        window.OnData(65535);
        Assert.Equal(0, window.Size);
        AssertFlowControlError(() => window.OnData(1), connection);
        window.OnData(0); // an empty DATA frame (END_STREAM) always fits
    }

    [Fact]
    public void Released_bytes_are_announced_once_they_reach_half_the_window()
    {
        var window = new Http2ReceiveWindow(1, 65535);
        window.OnData(16384);
        window.OnData(16384);
        window.OnData(16384);
        Assert.Equal(0, window.Release(16384));
        Assert.Equal(0, window.Release(16383));
        Assert.Equal(49152, window.Release(16385)); // 49,152 owed, at least half of 65,535
        Assert.Equal(65535, window.Size);
    }

    [Fact]
    public void The_connection_window_grows_only_by_WINDOW_UPDATE()
    {
        var window = new Http2ReceiveWindow(0, 65535);
        Assert.Equal((1 << 20) - 65535, window.Grow(1 << 20));
        Assert.Equal(1 << 20, window.Size);
        Assert.Throws<ArgumentException>(() => window.Grow(65535));
        Assert.Throws<InvalidOperationException>(() => window.OnInitialWindowSizeChanged(100));
    }

    [Fact]
    public void A_lowered_stream_setting_shrinks_the_receive_window_once_acknowledged()
    {
        var window = new Http2ReceiveWindow(1, 65535);
        window.OnData(40000);
        window.OnInitialWindowSizeChanged(16384);
        Assert.Equal(16384 - 40000, window.Size);
        AssertFlowControlError(() => window.OnData(1), connection: false);
        Assert.Equal(0, window.Release(8000));
        Assert.Equal(32000, window.Release(24000)); // 32,000 owed >= 8,192: the window is 16,384 - 40,000 + 32,000 = 8,384
        Assert.Equal(8384, window.Size);
    }
}
