namespace LLHttp2.Hpack;

/// <summary>
/// RFC 7541 §5.1: integers with an N-bit prefix. Values are bounded by <see cref="int.MaxValue"/> (every length and
/// index of HPACK fits) and by <see cref="MaxContinuationBytes"/> bytes after the prefix, so that a run of 0x80 bytes
/// cannot keep the decoder reading: §5.1 makes both limits decoding errors.
/// </summary>
public static class HpackInteger
{
    /// <summary>ceil(31 / 7): the continuation bytes of the largest int; one more could only be a redundant zero or an overflow.</summary>
    public const int MaxContinuationBytes = 5;

    /// <summary>The largest encoding: the prefix byte and <see cref="MaxContinuationBytes"/>.</summary>
    public const int MaxLength = 1 + MaxContinuationBytes;

    /// <summary>
    /// Decodes the integer at the start of <paramref name="source"/> whose first byte holds a
    /// <paramref name="prefixBits"/>-bit prefix (the bits above it are the caller's). False when the source ends
    /// within it; an integer above <see cref="int.MaxValue"/> or longer than <see cref="MaxLength"/> is a COMPRESSION_ERROR.
    /// </summary>
    public static bool TryDecode(ReadOnlySpan<byte> source, int prefixBits, out int value, out int consumed)
    {
        Debug.Assert(prefixBits is >= 1 and <= 8);
        if (source.IsEmpty)
        {
            value = consumed = 0;
            return false;
        }

        int mask = (1 << prefixBits) - 1;
        int prefix = source[0] & mask;
        if (prefix < mask)
        {
            value = prefix;
            consumed = 1;
            return true;
        }

        return TryDecodeContinuation(source, prefix, out value, out consumed);
    }

    private static bool TryDecodeContinuation(ReadOnlySpan<byte> source, int prefix, out int value, out int consumed)
    {
        long result = prefix;
        int shift = 0;
        for (int i = 1; i < source.Length; i++)
        {
            if (i > MaxContinuationBytes)
            {
                Http2Throw.CompressionError("HPACK integer longer than 6 bytes");
            }

            byte b = source[i];
            result += (long)(b & 0x7F) << shift;
            if (result > int.MaxValue)
            {
                Http2Throw.CompressionError("HPACK integer above 2^31-1");
            }

            if ((b & 0x80) == 0)
            {
                value = (int)result;
                consumed = i + 1;
                return true;
            }

            shift += 7;
        }

        value = consumed = 0;
        return false;
    }

    /// <summary>The bytes <see cref="Encode"/> writes for <paramref name="value"/>.</summary>
    public static int GetEncodedLength(int value, int prefixBits)
    {
        int mask = (1 << prefixBits) - 1;
        if (value < mask)
        {
            return 1;
        }

        int length = 2;
        for (uint rest = (uint)(value - mask); rest >= 0x80; rest >>= 7)
        {
            length++;
        }

        return length;
    }

    /// <summary>
    /// Writes <paramref name="value"/> (0..2^31-1) with a <paramref name="prefixBits"/>-bit prefix, the first byte's
    /// higher bits taken from <paramref name="firstByteFlags"/>; returns the bytes written.
    /// </summary>
    public static int Encode(int value, int prefixBits, byte firstByteFlags, Span<byte> destination)
    {
        Debug.Assert(prefixBits is >= 1 and <= 8);
        if (value < 0)
        {
            Http2Throw.Argument(nameof(value), "HPACK integers are non-negative");
        }

        int length = GetEncodedLength(value, prefixBits);
        if (destination.Length < length)
        {
            Http2Throw.DestinationTooSmall();
        }

        int mask = (1 << prefixBits) - 1;
        if (value < mask)
        {
            destination[0] = (byte)(firstByteFlags | value);
            return 1;
        }

        destination[0] = (byte)(firstByteFlags | mask);
        uint rest = (uint)(value - mask);
        int i = 1;
        for (; rest >= 0x80; rest >>= 7)
        {
            destination[i++] = (byte)(rest | 0x80);
        }

        destination[i++] = (byte)rest;
        Debug.Assert(i == length);
        return length;
    }
}
