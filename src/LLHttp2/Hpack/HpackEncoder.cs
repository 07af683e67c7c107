namespace LLHttp2.Hpack;

/// <summary>How <see cref="HpackEncoder"/> may represent one field.</summary>
public enum HpackIndexing : byte
{
    /// <summary>
    /// Indexed when a table holds the exact field; else a literal with incremental indexing, never indexed for a
    /// sensitive field (<see cref="HpackEncoder.IsSensitive"/>), without indexing when the entry would not fit the table.
    /// </summary>
    Auto,
    /// <summary>Indexed when a table holds the exact field, else a literal without indexing (§6.2.2): nothing is added to the table.</summary>
    WithoutIndexing,
    /// <summary>Always a literal never indexed (§6.2.3), as an intermediary must forward a field it received so (§7.1.3).</summary>
    NeverIndexed,
}

/// <summary>
/// RFC 7541 encoding, one encoder per connection: exact matches from the static or dynamic table as indexed fields,
/// otherwise a literal with the name indexed where a table has it (the static table first, RFC 7541 Appendix C's
/// choice), literals added to the dynamic table unless the field is sensitive or too large, and each string Huffman
/// coded unless that is longer. Nothing is allocated per field.
/// </summary>
public sealed class HpackEncoder
{
    /// <summary>RFC 9113 §6.5.2: the initial SETTINGS_HEADER_TABLE_SIZE, the table size both sides start with.</summary>
    public const int DefaultHeaderTableSize = 4096;

    /// <summary>
    /// The largest table the encoder keeps whatever size the peer allows: 4 KiB, nghttp2's default cap for its
    /// deflater's table (a peer's SETTINGS_HEADER_TABLE_SIZE of 2^32-1 must not make us hold 4 GiB per connection).
    /// </summary>
    public const int DefaultMaxHeaderTableSize = 4096;

    /// <summary>
    /// Cookie values shorter than this are never indexed: RFC 7541 §7.1.3 names short cookie values as the ones an
    /// attacker who sees the compressed size can guess entry by entry; 20 bytes is nghttp2's threshold for the same rule.
    /// </summary>
    public const int SensitiveCookieLength = 20;

    private readonly HpackDynamicTable _table;
    private readonly int _maxHeaderTableSize;

    // RFC 7541 §4.2: size changes since the last block, to signal at the start of the next one: the smallest size
    // reached, then the final one (when they differ).
    private bool _sizeUpdatePending;
    private int _smallestPendingSize;

    /// <param name="headerTableSize">The table size in force at the start (the RFC's initial 4096 unless a size was agreed otherwise).</param>
    /// <param name="maxHeaderTableSize">The cap on any size the peer allows later.</param>
    public HpackEncoder(int headerTableSize = DefaultHeaderTableSize, int maxHeaderTableSize = DefaultMaxHeaderTableSize)
    {
        _maxHeaderTableSize = Math.Max(headerTableSize, maxHeaderTableSize);
        _table = new HpackDynamicTable(headerTableSize);
    }

    public HpackDynamicTable DynamicTable => _table;

    /// <summary>Huffman-codes a string unless that is longer than its raw bytes (default true; a tie goes to Huffman, as in RFC 7541 Appendix C.6).</summary>
    public bool UseHuffman { get; set; } = true;

    /// <summary>
    /// The peer's new SETTINGS_HEADER_TABLE_SIZE: the table takes the smaller of it and the cap, and the next block
    /// begins with the size update(s) that tell the peer (§6.3).
    /// </summary>
    public void SetPeerHeaderTableSize(uint setting)
    {
        int size = (int)Math.Min(setting, (uint)_maxHeaderTableSize);
        if (size == _table.MaxSize && !_sizeUpdatePending)
        {
            return;
        }

        _smallestPendingSize = _sizeUpdatePending ? Math.Min(_smallestPendingSize, size) : size;
        _sizeUpdatePending = true;
        _table.SetMaxSize(size);
    }

    /// <summary>
    /// Starts a field block: writes the pending dynamic table size updates (none, one or two; at most 12 bytes) and
    /// returns the bytes written. Call it before the first field of every block.
    /// </summary>
    public int BeginBlock(Span<byte> destination)
    {
        if (!_sizeUpdatePending)
        {
            return 0;
        }

        int written = 0;
        if (_smallestPendingSize < _table.MaxSize)
        {
            written += HpackInteger.Encode(_smallestPendingSize, 5, 0x20, destination);
        }

        written += HpackInteger.Encode(_table.MaxSize, 5, 0x20, destination[written..]);
        _sizeUpdatePending = false;
        return written;
    }

    public void BeginBlock(IBufferWriter<byte> writer) => writer.Advance(BeginBlock(writer.GetSpan(2 * HpackInteger.MaxLength)));

    /// <summary>The rule for <see cref="HpackIndexing.Auto"/>: authorization and proxy-authorization always, cookie and set-cookie values shorter than <see cref="SensitiveCookieLength"/>.</summary>
    public static bool IsSensitive(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
        => name.SequenceEqual("authorization"u8)
            || name.SequenceEqual("proxy-authorization"u8)
            || (value.Length < SensitiveCookieLength && (name.SequenceEqual("cookie"u8) || name.SequenceEqual("set-cookie"u8)));

    /// <summary>
    /// Encodes one field (a lowercase name, RFC 9113 §8.2.1, is the caller's); false, with nothing written and the
    /// table unchanged, when <paramref name="destination"/> is too small.
    /// </summary>
    public bool TryEncode(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, Span<byte> destination, out int written, HpackIndexing indexing = HpackIndexing.Auto)
    {
        if (_sizeUpdatePending)
        {
            ThrowBlockNotBegun();
        }

        if (indexing == HpackIndexing.Auto && IsSensitive(name, value))
        {
            indexing = HpackIndexing.NeverIndexed;
        }

        int staticIndex = HpackStaticTable.Find(name, value, out bool staticExact);
        int dynamicIndex = 0;
        bool dynamicExact = false;
        if (!staticExact)
        {
            dynamicIndex = _table.Find(name, value, out dynamicExact);
        }

        if (indexing != HpackIndexing.NeverIndexed && (staticExact || dynamicExact))
        {
            int index = staticExact ? staticIndex : HpackStaticTable.Count + dynamicIndex;
            int length = HpackInteger.GetEncodedLength(index, 7);
            if (destination.Length < length)
            {
                written = 0;
                return false;
            }

            written = HpackInteger.Encode(index, 7, 0x80, destination);
            return true;
        }

        int nameIndex = staticIndex != 0 ? staticIndex : dynamicIndex != 0 ? HpackStaticTable.Count + dynamicIndex : 0;
        bool incremental = indexing == HpackIndexing.Auto && (long)name.Length + value.Length + HpackDynamicTable.EntryOverhead <= _table.MaxSize;
        int prefixBits = incremental ? 6 : 4;
        byte flags = incremental ? (byte)0x40 : indexing == HpackIndexing.NeverIndexed ? (byte)0x10 : (byte)0x00;

        int total = HpackInteger.GetEncodedLength(nameIndex, prefixBits) + (nameIndex == 0 ? GetStringLength(name, out _) : 0) + GetStringLength(value, out _);
        if (destination.Length < total)
        {
            written = 0;
            return false;
        }

        int w = HpackInteger.Encode(nameIndex, prefixBits, flags, destination);
        if (nameIndex == 0)
        {
            w += WriteString(name, destination[w..]);
        }

        w += WriteString(value, destination[w..]);
        Debug.Assert(w == total);
        if (incremental)
        {
            _table.Add(name, value);
        }

        written = w;
        return true;
    }

    /// <summary>Encodes one field into <paramref name="writer"/>.</summary>
    public void Encode(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, IBufferWriter<byte> writer, HpackIndexing indexing = HpackIndexing.Auto)
    {
        // An upper bound: the name index or the name literal's length, the value's length, and both raw strings.
        int bound = (3 * HpackInteger.MaxLength) + name.Length + value.Length;
        bool done = TryEncode(name, value, writer.GetSpan(bound), out int written, indexing);
        Debug.Assert(done);
        writer.Advance(written);
    }

    /// <summary>The bytes of a string literal; <paramref name="huffmanLength"/> is the Huffman code's length when it is used, else 0.</summary>
    private int GetStringLength(ReadOnlySpan<byte> source, out int huffmanLength)
    {
        huffmanLength = 0;
        int length = source.Length;
        if (UseHuffman && !source.IsEmpty)
        {
            int coded = Huffman.GetEncodedLength(source);
            if (coded <= length)
            {
                length = huffmanLength = coded;
            }
        }

        return HpackInteger.GetEncodedLength(length, 7) + length;
    }

    /// <summary>§5.2: a string literal, Huffman-coded unless that is longer.</summary>
    private int WriteString(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        GetStringLength(source, out int huffmanLength);
        if (huffmanLength != 0)
        {
            int w = HpackInteger.Encode(huffmanLength, 7, 0x80, destination);
            return w + Huffman.Encode(source, destination[w..]);
        }

        int n = HpackInteger.Encode(source.Length, 7, 0x00, destination);
        source.CopyTo(destination[n..]);
        return n + source.Length;
    }

    [DoesNotReturn, StackTraceHidden, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowBlockNotBegun()
        => throw new InvalidOperationException("A table size change is pending: BeginBlock must start the field block");
}
