namespace LLHttp2.Frames;

/// <summary>
/// Reads frames (RFC 9113 §4, §6) from whatever bytes have arrived: one complete frame, or "need more", never a copy
/// of a payload. It checks each frame's length against the SETTINGS_MAX_FRAME_SIZE in force (§4.2), the size,
/// stream and field rules of each type (§6.1-§6.10), and that a field block left open by HEADERS or PUSH_PROMISE is
/// continued only by CONTINUATION on its stream (§6.10). Frames of unknown types are skipped (§4.1, §5.5).
/// <para>
/// Errors are thrown as <see cref="Http2Exception"/>. A connection error leaves the buffer as it was (the connection
/// ends); a stream error is thrown after its frame is consumed, so the caller resets the stream and reads on.
/// </para>
/// <para>
/// What the reader does not know is left to the connection: stream states (§5.1, <see cref="Streams.Http2StreamStateMachine"/>),
/// flow-control windows (§6.9, <see cref="FlowControl.Http2ReceiveWindow"/>), which side may send what (PUSH_PROMISE
/// to a server), and the DATA padding bytes' value (§6.1 lets a receiver ignore it). The deprecated priority fields of HEADERS and PRIORITY are parsed for their size and ignored (§5.3.2).
/// </para>
/// </summary>
public sealed class Http2FrameReader
{
    private int _maxFrameSize = (int)Http2Settings.InitialMaxFrameSize;

    // The stream whose field block is open (HEADERS or PUSH_PROMISE without END_HEADERS), 0 when none: the one state
    // of the reader, since only CONTINUATION on that stream may come next.
    private int _openFieldBlockStream;

    /// <summary>
    /// The SETTINGS_MAX_FRAME_SIZE this endpoint advertised and the peer acknowledged; RFC 9113 §6.5.2's initial value
    /// (16,384) until then. A larger frame is a FRAME_SIZE_ERROR.
    /// </summary>
    public int MaxFrameSize
    {
        get => _maxFrameSize;
        set
        {
            if ((uint)value is < Http2Settings.InitialMaxFrameSize or > Http2Settings.MaxMaxFrameSize)
            {
                Http2Throw.Argument(nameof(value), "SETTINGS_MAX_FRAME_SIZE is 2^14..2^24-1");
            }

            _maxFrameSize = value;
        }
    }

    /// <summary>Frames of unknown types skipped so far (a caller can bound them as a flood).</summary>
    public long IgnoredFrameCount { get; private set; }

    /// <summary>True while a field block is open: only CONTINUATION on <see cref="OpenFieldBlockStreamId"/> may follow.</summary>
    public bool IsFieldBlockOpen => _openFieldBlockStream != 0;

    public int OpenFieldBlockStreamId => _openFieldBlockStream;

    /// <summary>Starts a new connection.</summary>
    public void Reset()
    {
        _maxFrameSize = (int)Http2Settings.InitialMaxFrameSize;
        _openFieldBlockStream = 0;
        IgnoredFrameCount = 0;
    }

    /// <summary>
    /// Reads the next frame from the start of <paramref name="buffer"/> and slices the buffer past it; false (buffer
    /// untouched) when the frame is not complete yet. The frame's payload is a view of the buffer.
    /// </summary>
    public bool TryReadFrame(ref ReadOnlySequence<byte> buffer, out Http2Frame frame)
    {
        while (true)
        {
            if (buffer.Length < Http2FrameHeader.Size)
            {
                frame = default;
                return false;
            }

            Http2FrameHeader header;
            if (buffer.FirstSpan.Length >= Http2FrameHeader.Size)
            {
                header = Http2FrameHeader.Read(buffer.FirstSpan);
            }
            else
            {
                Span<byte> bytes = stackalloc byte[Http2FrameHeader.Size];
                buffer.Slice(0, Http2FrameHeader.Size).CopyTo(bytes);
                header = Http2FrameHeader.Read(bytes);
            }

            // §4.2: checked before the payload arrives, so a peer cannot make us wait for (or buffer) more than the limit.
            // Always a connection error: the frame may be one that changes the connection's state (field blocks,
            // SETTINGS), and one rule for all keeps the reader from skipping a payload it refused to buffer.
            if (header.Length > _maxFrameSize)
            {
                Http2Throw.ConnectionError(Http2ErrorCode.FrameSizeError, header.StreamId, $"{header.Type} frame of {header.Length} bytes exceeds SETTINGS_MAX_FRAME_SIZE {_maxFrameSize}");
            }

            long frameLength = Http2FrameHeader.Size + (long)header.Length;
            if (buffer.Length < frameLength)
            {
                frame = default;
                return false;
            }

            var payload = buffer.Slice(Http2FrameHeader.Size, header.Length);
            var rest = buffer.Slice(frameLength);

            if (_openFieldBlockStream != 0 && (header.Type != Http2FrameType.Continuation || header.StreamId != _openFieldBlockStream))
            {
                // §6.10: a field block is a contiguous sequence of frames, nothing interleaved, not even an unknown type.
                Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, header.StreamId, $"{header.Type} frame inside the field block of stream {_openFieldBlockStream}");
            }

            switch (header.Type)
            {
                case Http2FrameType.Data:
                    frame = ReadData(header, payload);
                    break;
                case Http2FrameType.Headers:
                    frame = ReadHeaders(header, payload);
                    break;
                case Http2FrameType.Priority:
                    ReadPriority(header, ref buffer, rest);
                    frame = new Http2Frame(header, default, 0);
                    break;
                case Http2FrameType.RstStream:
                    frame = ReadRstStream(header, payload);
                    break;
                case Http2FrameType.Settings:
                    frame = ReadSettings(header, payload);
                    break;
                case Http2FrameType.PushPromise:
                    frame = ReadPushPromise(header, payload);
                    break;
                case Http2FrameType.Ping:
                    frame = ReadPing(header, payload);
                    break;
                case Http2FrameType.GoAway:
                    frame = ReadGoAway(header, payload);
                    break;
                case Http2FrameType.WindowUpdate:
                    frame = ReadWindowUpdate(header, payload, ref buffer, rest);
                    break;
                case Http2FrameType.Continuation:
                    frame = ReadContinuation(header, payload);
                    break;
                default:
                    // §4.1, §5.5: frames of unknown types are ignored and discarded.
                    IgnoredFrameCount++;
                    buffer = rest;
                    continue;
            }

            buffer = rest;
            return true;
        }
    }

    /// <summary>§6.1.</summary>
    private static Http2Frame ReadData(Http2FrameHeader header, ReadOnlySequence<byte> payload)
    {
        RequireStream(header);
        return new Http2Frame(header, Unpad(header, payload, 0), 0);
    }

    /// <summary>§6.2.</summary>
    private Http2Frame ReadHeaders(Http2FrameHeader header, ReadOnlySequence<byte> payload)
    {
        RequireStream(header);
        int priorityLength = header.HasFlag(Http2FrameFlags.Priority) ? 5 : 0;
        var fragment = Unpad(header, payload, priorityLength);
        OpenFieldBlock(header);
        return new Http2Frame(header, fragment, 0);
    }

    /// <summary>§6.3: parsed for its size and ignored (RFC 9113 deprecates the priority scheme, §5.3.2).</summary>
    private static void ReadPriority(Http2FrameHeader header, ref ReadOnlySequence<byte> buffer, ReadOnlySequence<byte> rest)
    {
        RequireStream(header);
        if (header.Length != 5)
        {
            buffer = rest;
            Http2Throw.StreamError(Http2ErrorCode.FrameSizeError, header.StreamId, $"PRIORITY frame of {header.Length} bytes, not 5");
        }
    }

    /// <summary>§6.4.</summary>
    private static Http2Frame ReadRstStream(Http2FrameHeader header, ReadOnlySequence<byte> payload)
    {
        RequireStream(header);
        RequireLength(header, 4);
        return new Http2Frame(header, default, ReadUInt32(payload));
    }

    /// <summary>§6.5: every pair is validated here, so the caller applies them without checks.</summary>
    private static Http2Frame ReadSettings(Http2FrameHeader header, ReadOnlySequence<byte> payload)
    {
        RequireConnection(header);
        if (header.HasFlag(Http2FrameFlags.Ack))
        {
            if (header.Length != 0)
            {
                Http2Throw.ConnectionError(Http2ErrorCode.FrameSizeError, "SETTINGS ACK with a payload");
            }

            return new Http2Frame(header, default, 0);
        }

        if (header.Length % 6 != 0)
        {
            Http2Throw.ConnectionError(Http2ErrorCode.FrameSizeError, $"SETTINGS payload of {header.Length} bytes is not a multiple of 6");
        }

        var settings = new Http2SettingsReader(payload);
        while (settings.TryRead(out var setting))
        {
            Http2Settings.Validate(setting.Id, setting.Value);
        }

        return new Http2Frame(header, payload, 0);
    }

    /// <summary>§6.6.</summary>
    private Http2Frame ReadPushPromise(Http2FrameHeader header, ReadOnlySequence<byte> payload)
    {
        RequireStream(header);
        var rest = Unpad(header, payload, 4);
        uint promised = ReadUInt32(payload.Slice(header.HasFlag(Http2FrameFlags.Padded) ? 1 : 0)) & 0x7FFF_FFFFu;
        OpenFieldBlock(header);
        return new Http2Frame(header, rest, promised);
    }

    /// <summary>§6.7.</summary>
    private static Http2Frame ReadPing(Http2FrameHeader header, ReadOnlySequence<byte> payload)
    {
        RequireConnection(header);
        RequireLength(header, 8);
        Span<byte> data = stackalloc byte[8];
        payload.CopyTo(data);
        return new Http2Frame(header, default, BinaryPrimitives.ReadUInt64BigEndian(data));
    }

    /// <summary>§6.8.</summary>
    private static Http2Frame ReadGoAway(Http2FrameHeader header, ReadOnlySequence<byte> payload)
    {
        RequireConnection(header);
        if (header.Length < 8)
        {
            Http2Throw.ConnectionError(Http2ErrorCode.FrameSizeError, $"GOAWAY frame of {header.Length} bytes, less than 8");
        }

        ulong lastStreamId = ReadUInt32(payload) & 0x7FFF_FFFFu;
        ulong errorCode = ReadUInt32(payload.Slice(4));
        return new Http2Frame(header, payload.Slice(8), (lastStreamId << 32) | errorCode);
    }

    /// <summary>§6.9: a zero increment is a stream error on a stream and a connection error on the connection.</summary>
    private static Http2Frame ReadWindowUpdate(Http2FrameHeader header, ReadOnlySequence<byte> payload, ref ReadOnlySequence<byte> buffer, ReadOnlySequence<byte> rest)
    {
        RequireLength(header, 4);
        uint increment = ReadUInt32(payload) & 0x7FFF_FFFFu;
        if (increment == 0)
        {
            if (header.StreamId == 0)
            {
                Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, "WINDOW_UPDATE with an increment of 0 on the connection");
            }

            buffer = rest;
            Http2Throw.StreamError(Http2ErrorCode.ProtocolError, header.StreamId, "WINDOW_UPDATE with an increment of 0");
        }

        return new Http2Frame(header, default, increment);
    }

    /// <summary>§6.10.</summary>
    private Http2Frame ReadContinuation(Http2FrameHeader header, ReadOnlySequence<byte> payload)
    {
        RequireStream(header);
        if (_openFieldBlockStream == 0)
        {
            Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, header.StreamId, "CONTINUATION without an open field block");
        }

        if (header.HasFlag(Http2FrameFlags.EndHeaders))
        {
            _openFieldBlockStream = 0;
        }

        return new Http2Frame(header, payload, 0);
    }

    private void OpenFieldBlock(Http2FrameHeader header)
    {
        if (!header.HasFlag(Http2FrameFlags.EndHeaders))
        {
            _openFieldBlockStream = header.StreamId;
        }
    }

    /// <summary>
    /// DATA, HEADERS, PUSH_PROMISE (§6.1, §6.2, §6.6): removes the Pad Length byte, <paramref name="fieldsLength"/>
    /// bytes of fixed fields and the padding. A payload too short for the fields it declares is a FRAME_SIZE_ERROR
    /// (§4.2), padding as long as the rest of the payload a PROTOCOL_ERROR (§6.1).
    /// </summary>
    private static ReadOnlySequence<byte> Unpad(Http2FrameHeader header, ReadOnlySequence<byte> payload, int fieldsLength)
    {
        int padLength = 0;
        int start = fieldsLength;
        if (header.HasFlag(Http2FrameFlags.Padded))
        {
            if (header.Length < 1 + fieldsLength)
            {
                Http2Throw.ConnectionError(Http2ErrorCode.FrameSizeError, header.StreamId, $"padded {header.Type} frame of {header.Length} bytes");
            }

            padLength = FirstByte(payload);
            start++;
        }
        else if (header.Length < fieldsLength)
        {
            Http2Throw.ConnectionError(Http2ErrorCode.FrameSizeError, header.StreamId, $"{header.Type} frame of {header.Length} bytes, less than its {fieldsLength} bytes of fields");
        }

        int contentLength = header.Length - start - padLength;
        if (contentLength < 0)
        {
            Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, header.StreamId, $"{header.Type} padding of {padLength} bytes fills the payload of {header.Length}");
        }

        return payload.Slice(start, contentLength);
    }

    private static void RequireStream(Http2FrameHeader header)
    {
        if (header.StreamId == 0)
        {
            Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, $"{header.Type} frame on stream 0");
        }
    }

    private static void RequireConnection(Http2FrameHeader header)
    {
        if (header.StreamId != 0)
        {
            Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, header.StreamId, $"{header.Type} frame on a stream, not stream 0");
        }
    }

    private static void RequireLength(Http2FrameHeader header, int length)
    {
        if (header.Length != length)
        {
            Http2Throw.ConnectionError(Http2ErrorCode.FrameSizeError, header.StreamId, $"{header.Type} frame of {header.Length} bytes, not {length}");
        }
    }

    private static byte FirstByte(ReadOnlySequence<byte> source)
    {
        // A slice that starts at a segment boundary may have an empty first segment.
        var reader = new SequenceReader<byte>(source);
        reader.TryRead(out byte value);
        return value;
    }

    private static uint ReadUInt32(ReadOnlySequence<byte> source)
    {
        if (source.FirstSpan.Length >= 4)
        {
            return BinaryPrimitives.ReadUInt32BigEndian(source.FirstSpan);
        }

        Span<byte> bytes = stackalloc byte[4];
        source.Slice(0, 4).CopyTo(bytes);
        return BinaryPrimitives.ReadUInt32BigEndian(bytes);
    }
}
