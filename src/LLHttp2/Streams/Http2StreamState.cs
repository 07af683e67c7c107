namespace LLHttp2.Streams;

/// <summary>The stream states of RFC 9113 §5.1.</summary>
public enum Http2StreamState : byte
{
    Idle,
    ReservedLocal,
    ReservedRemote,
    Open,
    HalfClosedLocal,
    HalfClosedRemote,
    Closed,
}

/// <summary>How a closed stream closed, which decides what may still arrive on it (RFC 9113 §5.1, "closed").</summary>
public enum Http2StreamClosure : byte
{
    /// <summary>Not closed.</summary>
    None,
    /// <summary>Both sides sent END_STREAM: WINDOW_UPDATE and RST_STREAM are ignored, anything else is a connection error STREAM_CLOSED.</summary>
    EndStream,
    /// <summary>This endpoint sent RST_STREAM: whatever the peer sent before it knew is ignored.</summary>
    ResetSent,
    /// <summary>The peer sent RST_STREAM: anything but PRIORITY is a stream error STREAM_CLOSED.</summary>
    ResetReceived,
}

/// <summary>What the caller does with a frame <see cref="Http2StreamStateMachine.OnReceived"/> accepted.</summary>
public enum Http2FrameVerdict : byte
{
    /// <summary>Process it on the stream.</summary>
    Process,
    /// <summary>
    /// Drop it (RFC 9113 §5.1: frames on a stream this endpoint reset, or late WINDOW_UPDATE and RST_STREAM). A dropped
    /// DATA frame still counts against the connection's window, and a dropped field block must still be decoded
    /// (§4.3: the HPACK state is the connection's).
    /// </summary>
    Ignore,
}
