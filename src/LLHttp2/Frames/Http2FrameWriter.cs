namespace LLHttp2.Frames;

/// <summary>
/// Writes the frames a server and a client send (RFC 9113 §6), each into a caller-provided span (returning the bytes
/// written; a span too small is an <see cref="ArgumentException"/>) or an <see cref="IBufferWriter{T}"/>. Nothing is
/// padded and the deprecated priority fields are never sent. The caller keeps every payload within the peer's
/// SETTINGS_MAX_FRAME_SIZE; <see cref="WriteHeaders(IBufferWriter{byte}, int, ReadOnlySpan{byte}, bool, int)"/> splits a
/// field block into HEADERS and CONTINUATION frames itself.
/// </summary>
public static class Http2FrameWriter
{
    public const int RstStreamFrameLength = Http2FrameHeader.Size + 4;
    public const int PingFrameLength = Http2FrameHeader.Size + 8;
    public const int WindowUpdateFrameLength = Http2FrameHeader.Size + 4;
    public const int SettingsAckFrameLength = Http2FrameHeader.Size;

    /// <summary>§6.1: one DATA frame.</summary>
    public static int WriteData(Span<byte> destination, int streamId, ReadOnlySpan<byte> data, bool endStream)
    {
        RequireStream(streamId);
        int length = Http2FrameHeader.Size + data.Length;
        RequireSpace(destination, length);
        Http2FrameHeader.Write(destination, data.Length, Http2FrameType.Data, endStream ? Http2FrameFlags.EndStream : Http2FrameFlags.None, streamId);
        data.CopyTo(destination[Http2FrameHeader.Size..]);
        return length;
    }

    public static void WriteData(IBufferWriter<byte> writer, int streamId, ReadOnlySpan<byte> data, bool endStream)
        => writer.Advance(WriteData(writer.GetSpan(Http2FrameHeader.Size + data.Length), streamId, data, endStream));

    /// <summary>The bytes <see cref="WriteHeaders(Span{byte}, int, ReadOnlySpan{byte}, bool, int)"/> writes for a field block.</summary>
    public static int GetHeadersLength(int fieldBlockLength, int maxFrameSize)
    {
        int frames = Math.Max(1, (fieldBlockLength + maxFrameSize - 1) / maxFrameSize);
        return fieldBlockLength + (frames * Http2FrameHeader.Size);
    }

    /// <summary>
    /// §6.2, §6.10: a field block as one HEADERS frame, or, when it is larger than <paramref name="maxFrameSize"/> (the
    /// peer's SETTINGS_MAX_FRAME_SIZE), as HEADERS and CONTINUATION frames of at most that size with END_HEADERS on the
    /// last. END_STREAM, when asked for, is on the HEADERS frame (§8.1: it ends the stream after the block).
    /// </summary>
    public static int WriteHeaders(Span<byte> destination, int streamId, ReadOnlySpan<byte> fieldBlock, bool endStream, int maxFrameSize)
    {
        RequireStream(streamId);
        RequireFrameSize(maxFrameSize);
        int total = GetHeadersLength(fieldBlock.Length, maxFrameSize);
        RequireSpace(destination, total);

        var type = Http2FrameType.Headers;
        var flags = endStream ? Http2FrameFlags.EndStream : Http2FrameFlags.None;
        int written = 0;
        do
        {
            int chunk = Math.Min(fieldBlock.Length, maxFrameSize);
            var frameFlags = chunk == fieldBlock.Length ? flags | Http2FrameFlags.EndHeaders : flags;
            Http2FrameHeader.Write(destination[written..], chunk, type, frameFlags, streamId);
            fieldBlock[..chunk].CopyTo(destination[(written + Http2FrameHeader.Size)..]);
            written += Http2FrameHeader.Size + chunk;
            fieldBlock = fieldBlock[chunk..];
            type = Http2FrameType.Continuation;
            flags = Http2FrameFlags.None;
        }
        while (!fieldBlock.IsEmpty);

        Debug.Assert(written == total);
        return written;
    }

    public static void WriteHeaders(IBufferWriter<byte> writer, int streamId, ReadOnlySpan<byte> fieldBlock, bool endStream, int maxFrameSize)
    {
        RequireFrameSize(maxFrameSize);
        writer.Advance(WriteHeaders(writer.GetSpan(GetHeadersLength(fieldBlock.Length, maxFrameSize)), streamId, fieldBlock, endStream, maxFrameSize));
    }

    /// <summary>§6.4.</summary>
    public static int WriteRstStream(Span<byte> destination, int streamId, Http2ErrorCode errorCode)
    {
        RequireStream(streamId);
        RequireSpace(destination, RstStreamFrameLength);
        Http2FrameHeader.Write(destination, 4, Http2FrameType.RstStream, Http2FrameFlags.None, streamId);
        BinaryPrimitives.WriteUInt32BigEndian(destination[Http2FrameHeader.Size..], (uint)errorCode);
        return RstStreamFrameLength;
    }

    public static void WriteRstStream(IBufferWriter<byte> writer, int streamId, Http2ErrorCode errorCode)
        => writer.Advance(WriteRstStream(writer.GetSpan(RstStreamFrameLength), streamId, errorCode));

    /// <summary>§6.5: a SETTINGS frame with these pairs, in order.</summary>
    public static int WriteSettings(Span<byte> destination, ReadOnlySpan<Http2Setting> settings)
    {
        int length = Http2FrameHeader.Size + (6 * settings.Length);
        RequireSpace(destination, length);
        Http2FrameHeader.Write(destination, 6 * settings.Length, Http2FrameType.Settings, Http2FrameFlags.None, 0);
        var pairs = destination[Http2FrameHeader.Size..];
        foreach (var setting in settings)
        {
            BinaryPrimitives.WriteUInt16BigEndian(pairs, (ushort)setting.Id);
            BinaryPrimitives.WriteUInt32BigEndian(pairs[2..], setting.Value);
            pairs = pairs[6..];
        }

        return length;
    }

    public static void WriteSettings(IBufferWriter<byte> writer, ReadOnlySpan<Http2Setting> settings)
        => writer.Advance(WriteSettings(writer.GetSpan(Http2FrameHeader.Size + (6 * settings.Length)), settings));

    /// <summary>§6.5.3: the acknowledgement of the peer's SETTINGS.</summary>
    public static int WriteSettingsAck(Span<byte> destination)
    {
        RequireSpace(destination, SettingsAckFrameLength);
        Http2FrameHeader.Write(destination, 0, Http2FrameType.Settings, Http2FrameFlags.Ack, 0);
        return SettingsAckFrameLength;
    }

    public static void WriteSettingsAck(IBufferWriter<byte> writer)
        => writer.Advance(WriteSettingsAck(writer.GetSpan(SettingsAckFrameLength)));

    /// <summary>§6.7: a PING, or with <paramref name="ack"/> the answer carrying the received <see cref="Http2Frame.PingData"/>.</summary>
    public static int WritePing(Span<byte> destination, ulong data, bool ack)
    {
        RequireSpace(destination, PingFrameLength);
        Http2FrameHeader.Write(destination, 8, Http2FrameType.Ping, ack ? Http2FrameFlags.Ack : Http2FrameFlags.None, 0);
        BinaryPrimitives.WriteUInt64BigEndian(destination[Http2FrameHeader.Size..], data);
        return PingFrameLength;
    }

    public static void WritePing(IBufferWriter<byte> writer, ulong data, bool ack)
        => writer.Advance(WritePing(writer.GetSpan(PingFrameLength), data, ack));

    /// <summary>§6.8.</summary>
    public static int WriteGoAway(Span<byte> destination, int lastStreamId, Http2ErrorCode errorCode, ReadOnlySpan<byte> debugData)
    {
        if (lastStreamId < 0)
        {
            Http2Throw.Argument(nameof(lastStreamId), "A stream identifier is 31 bits");
        }

        int length = Http2FrameHeader.Size + 8 + debugData.Length;
        RequireSpace(destination, length);
        Http2FrameHeader.Write(destination, 8 + debugData.Length, Http2FrameType.GoAway, Http2FrameFlags.None, 0);
        BinaryPrimitives.WriteUInt32BigEndian(destination[Http2FrameHeader.Size..], (uint)lastStreamId);
        BinaryPrimitives.WriteUInt32BigEndian(destination[(Http2FrameHeader.Size + 4)..], (uint)errorCode);
        debugData.CopyTo(destination[(Http2FrameHeader.Size + 8)..]);
        return length;
    }

    public static void WriteGoAway(IBufferWriter<byte> writer, int lastStreamId, Http2ErrorCode errorCode, ReadOnlySpan<byte> debugData)
        => writer.Advance(WriteGoAway(writer.GetSpan(Http2FrameHeader.Size + 8 + debugData.Length), lastStreamId, errorCode, debugData));

    /// <summary>§6.9: <paramref name="streamId"/> 0 for the connection's window; the increment is 1..2^31-1.</summary>
    public static int WriteWindowUpdate(Span<byte> destination, int streamId, int increment)
    {
        if (streamId < 0)
        {
            Http2Throw.Argument(nameof(streamId), "A stream identifier is 31 bits");
        }

        if (increment <= 0)
        {
            Http2Throw.Argument(nameof(increment), "A window increment is 1..2^31-1");
        }

        RequireSpace(destination, WindowUpdateFrameLength);
        Http2FrameHeader.Write(destination, 4, Http2FrameType.WindowUpdate, Http2FrameFlags.None, streamId);
        BinaryPrimitives.WriteUInt32BigEndian(destination[Http2FrameHeader.Size..], (uint)increment);
        return WindowUpdateFrameLength;
    }

    public static void WriteWindowUpdate(IBufferWriter<byte> writer, int streamId, int increment)
        => writer.Advance(WriteWindowUpdate(writer.GetSpan(WindowUpdateFrameLength), streamId, increment));

    private static void RequireStream(int streamId)
    {
        if (streamId <= 0)
        {
            Http2Throw.Argument(nameof(streamId), "This frame type is sent on a stream (1..2^31-1)");
        }
    }

    private static void RequireFrameSize(int maxFrameSize)
    {
        if ((uint)maxFrameSize is < Http2Settings.InitialMaxFrameSize or > Http2Settings.MaxMaxFrameSize)
        {
            Http2Throw.Argument(nameof(maxFrameSize), "SETTINGS_MAX_FRAME_SIZE is 2^14..2^24-1");
        }
    }

    private static void RequireSpace(Span<byte> destination, int length)
    {
        if (destination.Length < length)
        {
            Http2Throw.DestinationTooSmall();
        }
    }
}
