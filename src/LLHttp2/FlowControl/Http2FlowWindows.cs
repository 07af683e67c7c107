namespace LLHttp2.FlowControl;

/// <summary>
/// RFC 9113 §6.9: what this endpoint may still send on a stream or on the connection (stream 0). WINDOW_UPDATE
/// frames add to it, DATA sent takes from it, and a change of the peer's SETTINGS_INITIAL_WINDOW_SIZE moves every
/// stream's window by the difference (§6.9.2), possibly below zero.
/// </summary>
public struct Http2SendWindow
{
    private long _window;

    public Http2SendWindow(int streamId, int initialSize)
    {
        if (initialSize < 0)
        {
            Http2Throw.Argument(nameof(initialSize), "A window starts at 0..2^31-1");
        }

        StreamId = streamId;
        _window = initialSize;
    }

    /// <summary>0 for the connection's window.</summary>
    public int StreamId { get; }

    /// <summary>The window, negative after the peer lowered SETTINGS_INITIAL_WINDOW_SIZE below what was in flight.</summary>
    public readonly long Size => _window;

    /// <summary>The DATA payload (padding included) that may be sent now.</summary>
    public readonly int Available => (int)Math.Max(0, _window);

    /// <summary>DATA of <paramref name="length"/> flow-controlled bytes sent; more than <see cref="Available"/> is a caller's bug.</summary>
    public void Consume(int length)
    {
        if ((uint)length > (uint)Available)
        {
            ThrowOverdraft(length, Available);
        }

        _window -= length;
    }

    /// <summary>
    /// A WINDOW_UPDATE received (the reader already refused a zero increment). A window above 2^31-1 is a
    /// FLOW_CONTROL_ERROR of the stream, or of the connection for stream 0 (§6.9.1).
    /// </summary>
    public void OnWindowUpdate(int increment)
    {
        Debug.Assert(increment > 0);
        long window = _window + increment;
        if (window > int.MaxValue)
        {
            if (StreamId == 0)
            {
                Http2Throw.ConnectionError(Http2ErrorCode.FlowControlError, "WINDOW_UPDATE takes the connection's window above 2^31-1");
            }

            Http2Throw.StreamError(Http2ErrorCode.FlowControlError, StreamId, "WINDOW_UPDATE takes the stream's window above 2^31-1");
        }

        _window = window;
    }

    /// <summary>
    /// §6.9.2: the peer's SETTINGS_INITIAL_WINDOW_SIZE changed from <paramref name="oldSize"/> to
    /// <paramref name="newSize"/>; a stream window pushed above 2^31-1 is a connection error FLOW_CONTROL_ERROR. Not for
    /// the connection's window, which only WINDOW_UPDATE changes.
    /// </summary>
    public void OnInitialWindowSizeChanged(uint oldSize, uint newSize)
    {
        if (StreamId == 0)
        {
            ThrowConnectionWindowSetting();
        }

        long window = _window + ((long)newSize - oldSize);
        if (window > int.MaxValue)
        {
            Http2Throw.ConnectionError(Http2ErrorCode.FlowControlError, StreamId, "SETTINGS_INITIAL_WINDOW_SIZE takes a stream's window above 2^31-1");
        }

        _window = window;
    }

    [DoesNotReturn, StackTraceHidden, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowOverdraft(int length, int available)
        => throw new InvalidOperationException($"{length} bytes of DATA with {available} left in the window (RFC 9113 §6.9)");

    [DoesNotReturn, StackTraceHidden, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowConnectionWindowSetting()
        => throw new InvalidOperationException("SETTINGS_INITIAL_WINDOW_SIZE does not apply to the connection's window (RFC 9113 §6.9.2)");
}

/// <summary>
/// RFC 9113 §6.9: what the peer may still send on a stream or the connection. DATA received takes from it (more than
/// is left is a FLOW_CONTROL_ERROR), and the bytes the application consumed are given back with a WINDOW_UPDATE once
/// they reach half the window, so a steady stream costs one WINDOW_UPDATE per half window, not one per DATA frame.
/// </summary>
public struct Http2ReceiveWindow
{
    private int _window;
    private int _target;
    private int _unannounced;

    /// <param name="streamId">0 for the connection's window.</param>
    /// <param name="size">The window this endpoint keeps open: the SETTINGS_INITIAL_WINDOW_SIZE it advertised for a stream; for the connection 65,535 (RFC 9113 §6.9.2), more after <see cref="Grow"/>.</param>
    public Http2ReceiveWindow(int streamId, int size)
    {
        if (size < 0)
        {
            Http2Throw.Argument(nameof(size), "A window is 0..2^31-1");
        }

        StreamId = streamId;
        _window = _target = size;
    }

    public int StreamId { get; }

    /// <summary>What the peer may still send.</summary>
    public readonly int Size => _window;

    /// <summary>The window this endpoint keeps open.</summary>
    public readonly int Target => _target;

    /// <summary>
    /// A DATA frame of <paramref name="flowControlledLength"/> bytes (its whole payload, padding included) received.
    /// More than the window is a FLOW_CONTROL_ERROR: of the connection for stream 0, of the stream otherwise.
    /// </summary>
    public void OnData(int flowControlledLength)
    {
        if (flowControlledLength > _window)
        {
            if (StreamId == 0)
            {
                Http2Throw.ConnectionError(Http2ErrorCode.FlowControlError, $"{flowControlledLength} bytes of DATA with {_window} left in the connection's window");
            }

            Http2Throw.StreamError(Http2ErrorCode.FlowControlError, StreamId, $"{flowControlledLength} bytes of DATA with {_window} left in the stream's window");
        }

        _window -= flowControlledLength;
    }

    /// <summary>
    /// <paramref name="length"/> received bytes are consumed (delivered, or dropped: padding, a reset stream); returns
    /// the WINDOW_UPDATE increment to send now, or 0 while what is owed is below half the window.
    /// </summary>
    public int Release(int length)
    {
        Debug.Assert(length >= 0 && (long)_window + _unannounced + length <= _target);
        _unannounced += length;
        if (_unannounced < (_target + 1) / 2)
        {
            return 0;
        }

        int increment = _unannounced;
        _window += increment;
        _unannounced = 0;
        return increment;
    }

    /// <summary>
    /// A stream window, once the peer acknowledged this endpoint's new SETTINGS_INITIAL_WINDOW_SIZE: moved by the
    /// difference as the peer moved its send window (§6.9.2), so no WINDOW_UPDATE is owed; it may go below zero when
    /// the setting was lowered under what the peer had already sent.
    /// </summary>
    public void OnInitialWindowSizeChanged(int newSize)
    {
        if (StreamId == 0)
        {
            ThrowConnectionWindowSetting();
        }

        if (newSize < 0)
        {
            Http2Throw.Argument(nameof(newSize), "A window is 0..2^31-1");
        }

        _window += newSize - _target;
        _target = newSize;
    }

    /// <summary>
    /// Opens the connection's window wider than the 65,535 it starts with (only a WINDOW_UPDATE can, §6.9.2): returns
    /// the increment to send on stream 0.
    /// </summary>
    public int Grow(int size)
    {
        if (size < _target)
        {
            Http2Throw.Argument(nameof(size), "The connection's window can only grow");
        }

        int increment = size - _target;
        _target = size;
        _window += increment;
        return increment;
    }

    [DoesNotReturn, StackTraceHidden, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowConnectionWindowSetting()
        => throw new InvalidOperationException("SETTINGS_INITIAL_WINDOW_SIZE does not apply to the connection's window (RFC 9113 §6.9.2)");
}
