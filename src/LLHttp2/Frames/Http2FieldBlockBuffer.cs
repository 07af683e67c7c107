namespace LLHttp2.Frames;

/// <summary>
/// Joins the fragments of one field block (HEADERS or PUSH_PROMISE, then CONTINUATION frames, RFC 9113 §4.3) into one
/// contiguous block for <see cref="Hpack.HpackDecoder"/>, in a buffer of its own allocated once up to
/// <see cref="MaxLength"/>. A block that grows beyond it ends the connection: its fields cannot be skipped, since
/// the HPACK state is the connection's (§4.3), and buffering without a bound is the CONTINUATION flood of the
/// CVE-2024-27316 class.
/// </summary>
public sealed class Http2FieldBlockBuffer
{
    /// <summary>
    /// 32 KiB, the header list size the decoder accepts by default (<see cref="Hpack.HpackDecoder.DefaultMaxHeaderListSize"/>):
    /// a field's encoding is always shorter than the 32 + name + value bytes it counts in the list.
    /// </summary>
    public const int DefaultMaxLength = 32 * 1024;

    private byte[] _buffer = [];
    private int _length;

    public Http2FieldBlockBuffer(int maxLength = DefaultMaxLength)
    {
        if (maxLength < 0)
        {
            Http2Throw.Argument(nameof(maxLength), "A length is non-negative");
        }

        MaxLength = maxLength;
    }

    public int MaxLength { get; }

    /// <summary>The stream of the block being joined, 0 when none.</summary>
    public int StreamId { get; private set; }

    /// <summary>The block joined so far; whole once <see cref="Add"/> returned true.</summary>
    public ReadOnlySpan<byte> Block => _buffer.AsSpan(0, _length);

    /// <summary>
    /// Adds the fragment of a HEADERS, PUSH_PROMISE or CONTINUATION frame as the reader yielded it (the reader already
    /// enforced the frame sequence); true when the frame carries END_HEADERS and <see cref="Block"/> is whole. A
    /// block beyond <see cref="MaxLength"/> is a connection error ENHANCE_YOUR_CALM: the peer sends more than this
    /// endpoint said it would handle (SETTINGS_MAX_HEADER_LIST_SIZE), and the connection cannot go on without it.
    /// </summary>
    public bool Add(in Http2Frame frame)
    {
        if (frame.Type is Http2FrameType.Headers or Http2FrameType.PushPromise)
        {
            _length = 0;
            StreamId = frame.StreamId;
        }
        else if (frame.Type != Http2FrameType.Continuation || frame.StreamId != StreamId)
        {
            Http2Throw.Argument(nameof(frame), "Only HEADERS, PUSH_PROMISE and their CONTINUATION frames carry field block fragments");
        }

        long length = _length + frame.Payload.Length;
        if (length > MaxLength)
        {
            Http2Throw.ConnectionError(Http2ErrorCode.EnhanceYourCalm, frame.StreamId, $"Field block of more than {MaxLength} bytes");
        }

        if (length > _buffer.Length)
        {
            // Grows by doubling up to the bound, so a connection of small blocks keeps a small buffer.
            var larger = new byte[Math.Min(MaxLength, Math.Max((int)length, Math.Max(256, 2 * _buffer.Length)))];
            _buffer.AsSpan(0, _length).CopyTo(larger);
            _buffer = larger;
        }

        frame.Payload.CopyTo(_buffer.AsSpan(_length));
        _length = (int)length;
        bool complete = frame.EndHeaders;
        if (complete)
        {
            StreamId = 0;
        }

        return complete;
    }
}
