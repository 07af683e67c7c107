namespace LLHttp2.Frames;

/// <summary>The frame types of RFC 9113 §6. Any other value is an extension frame, ignored on receipt (§4.1, §5.5).</summary>
public enum Http2FrameType : byte
{
    Data = 0x0,
    Headers = 0x1,
    Priority = 0x2,
    RstStream = 0x3,
    Settings = 0x4,
    PushPromise = 0x5,
    Ping = 0x6,
    GoAway = 0x7,
    WindowUpdate = 0x8,
    Continuation = 0x9,
}

/// <summary>The flags of RFC 9113 §6; which bit means what depends on the frame type (ACK and END_STREAM share bit 0).</summary>
[Flags]
public enum Http2FrameFlags : byte
{
    None = 0x0,
    /// <summary>DATA, HEADERS: the last frame the sender sends on the stream.</summary>
    EndStream = 0x1,
    /// <summary>SETTINGS, PING: an acknowledgement.</summary>
    Ack = 0x1,
    /// <summary>HEADERS, PUSH_PROMISE, CONTINUATION: the frame ends the field block.</summary>
    EndHeaders = 0x4,
    /// <summary>DATA, HEADERS, PUSH_PROMISE: a Pad Length byte and padding are present.</summary>
    Padded = 0x8,
    /// <summary>HEADERS: the deprecated priority fields (RFC 9113 §5.3.2) are present.</summary>
    Priority = 0x20,
}
