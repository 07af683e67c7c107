namespace LLHttp2.Frames;

/// <summary>
/// The 9-byte frame header of RFC 9113 §4.1: Length (24), Type (8), Flags (8), Reserved (1), Stream Identifier (31).
/// The reserved bit is ignored on read and written as 0.
/// </summary>
public readonly struct Http2FrameHeader
{
    public const int Size = 9;

    /// <summary>The largest length 24 bits hold, and the largest SETTINGS_MAX_FRAME_SIZE (RFC 9113 §6.5.2).</summary>
    public const int MaxLength = (1 << 24) - 1;

    /// <summary>The largest stream identifier (31 bits).</summary>
    public const int MaxStreamId = int.MaxValue;

    public Http2FrameHeader(int length, Http2FrameType type, Http2FrameFlags flags, int streamId)
    {
        Length = length;
        Type = type;
        Flags = flags;
        StreamId = streamId;
    }

    /// <summary>The payload length, the 9 header bytes excluded.</summary>
    public int Length { get; }

    public Http2FrameType Type { get; }

    public Http2FrameFlags Flags { get; }

    public int StreamId { get; }

    public bool HasFlag(Http2FrameFlags flag) => (Flags & flag) != 0;

    public static Http2FrameHeader Read(ReadOnlySpan<byte> source)
    {
        if (source.Length < Size)
        {
            Http2Throw.Argument(nameof(source), "A frame header is 9 bytes");
        }

        int length = (source[0] << 16) | (source[1] << 8) | source[2];
        int streamId = (int)(BinaryPrimitives.ReadUInt32BigEndian(source[5..]) & 0x7FFF_FFFFu);
        return new Http2FrameHeader(length, (Http2FrameType)source[3], (Http2FrameFlags)source[4], streamId);
    }

    public void Write(Span<byte> destination) => Write(destination, Length, Type, Flags, StreamId);

    public static void Write(Span<byte> destination, int length, Http2FrameType type, Http2FrameFlags flags, int streamId)
    {
        if ((uint)length > MaxLength)
        {
            Http2Throw.Argument(nameof(length), "A frame payload is at most 2^24-1 bytes");
        }

        if (streamId < 0)
        {
            Http2Throw.Argument(nameof(streamId), "A stream identifier is 31 bits");
        }

        if (destination.Length < Size)
        {
            Http2Throw.DestinationTooSmall();
        }

        destination[0] = (byte)(length >> 16);
        destination[1] = (byte)(length >> 8);
        destination[2] = (byte)length;
        destination[3] = (byte)type;
        destination[4] = (byte)flags;
        BinaryPrimitives.WriteUInt32BigEndian(destination[5..], (uint)streamId);
    }

    public override string ToString() => $"{Type} len={Length} flags=0x{(byte)Flags:X2} stream={StreamId}";
}
