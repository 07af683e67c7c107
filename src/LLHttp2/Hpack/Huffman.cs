namespace LLHttp2.Hpack;

/// <summary>
/// The static Huffman code of RFC 7541 §5.2 and Appendix B. The code is canonical (within one length, codes rise
/// with the symbol; every length's codes follow the shorter ones), so it is fully given by each symbol's code length:
/// the table below is Appendix B's "len" column, and the codes are rebuilt from it once (the tests check them against
/// Appendix B's published codes, and that the lengths fill the code space exactly, Kraft's equality).
/// Decoding reads up to 64 bits at a time; a code of at most 8 bits is looked up by the next 8 bits, a longer one found
/// by comparing the left-aligned bits with the first code of each length. Nothing is allocated per string.
/// </summary>
public static class Huffman
{
    /// <summary>The end-of-string symbol (30 ones), never valid inside a string (§5.2).</summary>
    public const int Eos = 256;

    private const int MaxCodeLength = 30;

    // RFC 7541 Appendix B, the code length of each symbol 0..255 and EOS (256).
    private static ReadOnlySpan<byte> CodeLengths =>
    [
        13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, // 0x00
        28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28, // 0x10
        6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,         // 0x20 ' ' .. '/'
        5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,              // 0x30 '0' .. '?'
        13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,                // 0x40 '@' .. 'O'
        7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,             // 0x50 'P' .. '_'
        15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,                // 0x60 '`' .. 'o'
        6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,            // 0x70 'p' .. DEL
        20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, // 0x80
        24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, // 0x90
        22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, // 0xa0
        21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, // 0xb0
        26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, // 0xc0
        19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, // 0xd0
        20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, // 0xe0
        26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, // 0xf0
        30,                                                             // EOS
    ];

    // Built once from CodeLengths: each symbol's code (right-aligned), the symbols in code order, and per length the
    // first code, the index of its first symbol, and the left-aligned (32-bit) limit below which a code has at most
    // that length.
    private static readonly uint[] s_codes = new uint[257];
    private static readonly ushort[] s_symbolsInCodeOrder = new ushort[257];
    private static readonly uint[] s_firstCode = new uint[MaxCodeLength + 1];
    private static readonly int[] s_firstIndex = new int[MaxCodeLength + 1];
    private static readonly ulong[] s_limit = new ulong[MaxCodeLength + 1];

    // The codes of at most 8 bits (every digit, letter and most punctuation) by their first 8 bits: the symbol in the
    // low 9 bits and the length above, 0 for a longer code, which the per-length search finds.
    private static readonly ushort[] s_short = new ushort[256];

#pragma warning disable CA1810 // the tables are computed from one another; a static constructor says so in one place
    static Huffman()
#pragma warning restore CA1810
    {
        var lengths = CodeLengths;
        int index = 0;
        uint code = 0;
        for (int length = 1; length <= MaxCodeLength; length++)
        {
            s_firstCode[length] = code;
            s_firstIndex[length] = index;
            for (int symbol = 0; symbol < lengths.Length; symbol++)
            {
                if (lengths[symbol] == length)
                {
                    s_codes[symbol] = code++;
                    s_symbolsInCodeOrder[index++] = (ushort)symbol;
                }
            }

            s_limit[length] = (ulong)code << (32 - length);
            code <<= 1;
        }

        Debug.Assert(index == 257 && s_limit[MaxCodeLength] == 1UL << 32);

        for (int symbol = 0; symbol < lengths.Length; symbol++)
        {
            int length = lengths[symbol];
            if (length <= 8)
            {
                int first = (int)s_codes[symbol] << (8 - length);
                for (int i = 0; i < 1 << (8 - length); i++)
                {
                    s_short[first + i] = (ushort)((length << 9) | symbol);
                }
            }
        }
    }

    /// <summary>The code of a symbol 0..256, right-aligned, as Appendix B's "code as hex" column.</summary>
    public static uint GetCode(int symbol) => s_codes[symbol];

    /// <summary>The code length of a symbol 0..256, Appendix B's "len" column.</summary>
    public static int GetCodeLength(int symbol) => CodeLengths[symbol];

    /// <summary>The bytes <see cref="Encode"/> writes for <paramref name="source"/>.</summary>
    public static int GetEncodedLength(ReadOnlySpan<byte> source)
    {
        var lengths = CodeLengths;
        long bits = 0;
        foreach (byte b in source)
        {
            bits += lengths[b];
        }

        return (int)((bits + 7) >> 3);
    }

    /// <summary>Encodes <paramref name="source"/>, the last byte padded with the most significant bits of EOS (ones); returns the bytes written.</summary>
    public static int Encode(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        var lengths = CodeLengths;
        ulong accumulator = 0;
        int bits = 0;
        int written = 0;
        foreach (byte b in source)
        {
            int length = lengths[b];
            accumulator = (accumulator << length) | s_codes[b];
            bits += length;
            while (bits >= 8)
            {
                bits -= 8;
                destination[written++] = (byte)(accumulator >> bits);
            }
        }

        if (bits > 0)
        {
            destination[written++] = (byte)((accumulator << (8 - bits)) | (0xFFu >> bits));
        }

        return written;
    }

    /// <summary>
    /// Decodes <paramref name="source"/> into <paramref name="destination"/>; false when the destination is too small
    /// (the caller's bound is reached), with nothing more decoded. EOS in the string, padding longer than 7 bits or
    /// padding that is not the most significant bits of EOS are COMPRESSION_ERROR (§5.2).
    /// </summary>
    public static bool TryDecode(ReadOnlySpan<byte> source, Span<byte> destination, out int written)
    {
        ulong accumulator = 0; // the low `bits` bits are pending
        int bits = 0;
        int w = 0;
        int i = 0;
        while (true)
        {
            // Refill to more than 56 bits while input remains, so any code (at most 30 bits) is complete.
            while (bits <= 56 && i < source.Length)
            {
                accumulator = (accumulator << 8) | source[i++];
                bits += 8;
            }

            if (bits == 0)
            {
                break;
            }

            uint window = bits >= 32 ? (uint)(accumulator >> (bits - 32)) : (uint)(accumulator << (32 - bits));
            int entry = s_short[window >> 24];
            int length = entry >> 9;
            int symbol = entry & 0x1FF;
            if (entry == 0)
            {
                length = 9;
                while (window >= s_limit[length])
                {
                    length++;
                }
            }

            if (length > bits)
            {
                // Only at the end of the input: what is left is not a whole code, so it must be padding.
                Debug.Assert(i == source.Length);
                break;
            }

            if (entry == 0)
            {
                symbol = s_symbolsInCodeOrder[s_firstIndex[length] + (int)((window >> (32 - length)) - s_firstCode[length])];
            }
            if (symbol == Eos)
            {
                Http2Throw.CompressionError("Huffman-encoded string holds EOS");
            }

            if (w == destination.Length)
            {
                written = w;
                return false;
            }

            destination[w++] = (byte)symbol;
            bits -= length;
            accumulator &= (1UL << bits) - 1;
        }

        if (bits > 7)
        {
            Http2Throw.CompressionError("Huffman padding longer than 7 bits");
        }

        if (accumulator != (1UL << bits) - 1)
        {
            Http2Throw.CompressionError("Huffman padding is not the most significant bits of EOS");
        }

        written = w;
        return true;
    }
}
