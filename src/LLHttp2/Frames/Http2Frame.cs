namespace LLHttp2.Frames;

/// <summary>
/// One complete, validated frame as <see cref="Http2FrameReader"/> yields it: the header and views of the caller's
/// buffer (nothing copied). It is valid until the caller releases the bytes it was read from.
/// </summary>
public readonly struct Http2Frame
{
    private readonly ulong _value;

    internal Http2Frame(Http2FrameHeader header, ReadOnlySequence<byte> payload, ulong value)
    {
        Header = header;
        Payload = payload;
        _value = value;
    }

    public Http2FrameHeader Header { get; }

    public Http2FrameType Type => Header.Type;

    public int StreamId => Header.StreamId;

    /// <summary>
    /// DATA: the data, padding removed. HEADERS, PUSH_PROMISE, CONTINUATION: the field block fragment, padding and
    /// priority fields removed. SETTINGS: the pairs (read them with <see cref="GetSettings"/>). GOAWAY: the debug data.
    /// Empty for the other types.
    /// </summary>
    public ReadOnlySequence<byte> Payload { get; }

    /// <summary>DATA and HEADERS: END_STREAM.</summary>
    public bool EndStream => Header.HasFlag(Http2FrameFlags.EndStream);

    /// <summary>HEADERS, PUSH_PROMISE, CONTINUATION: END_HEADERS.</summary>
    public bool EndHeaders => Header.HasFlag(Http2FrameFlags.EndHeaders);

    /// <summary>SETTINGS and PING: ACK.</summary>
    public bool IsAck => Header.HasFlag(Http2FrameFlags.Ack);

    /// <summary>
    /// DATA: what the frame counts against flow control, the whole payload with the Pad Length byte and padding
    /// (RFC 9113 §6.1).
    /// </summary>
    public int FlowControlledLength => Header.Length;

    /// <summary>RST_STREAM and GOAWAY: the error code (unknown codes kept as they are, RFC 9113 §7).</summary>
    public Http2ErrorCode ErrorCode => (Http2ErrorCode)(uint)_value;

    /// <summary>WINDOW_UPDATE: the increment, 1..2^31-1.</summary>
    public int WindowSizeIncrement => (int)_value;

    /// <summary>PUSH_PROMISE: the promised stream.</summary>
    public int PromisedStreamId => (int)_value;

    /// <summary>GOAWAY: the last stream the sender may have processed.</summary>
    public int LastStreamId => (int)(_value >> 32);

    /// <summary>PING: the 8 opaque bytes, read big-endian (written back the same way by <see cref="Http2FrameWriter.WritePing"/>).</summary>
    public ulong PingData => _value;

    public Http2SettingsReader GetSettings()
    {
        Debug.Assert(Type == Http2FrameType.Settings);
        return new Http2SettingsReader(Payload);
    }

    public override string ToString() => Header.ToString();
}
