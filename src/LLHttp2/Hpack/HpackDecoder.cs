namespace LLHttp2.Hpack;

/// <summary>
/// Receives the fields of a decoded field block, in order. The spans are valid only during the call. A handler
/// should not throw to refuse a field: the rest of the block would go undecoded and the dynamic table out of step with
/// the peer's, so the connection could not go on; it records the refusal and the stream is reset after the block.
/// </summary>
public interface IHpackFieldHandler
{
    /// <param name="name">The field name as the peer sent it (the decoder does not check HTTP field syntax; RFC 9113 §8.2.1 is the caller's).</param>
    /// <param name="value">The field value.</param>
    /// <param name="neverIndexed">
    /// Sent as a literal never indexed (RFC 7541 §6.2.3): an intermediary must forward it with the same representation (§7.1.3).
    /// </param>
    void OnField(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed);
}

/// <summary>
/// RFC 7541 decoding of whole field blocks (the fragments of HEADERS and CONTINUATION joined by the caller), one
/// decoder per connection, as the peer's encoder's mirror: the dynamic table, size updates bounded by the
/// SETTINGS_HEADER_TABLE_SIZE this endpoint advertised and allowed only at the start of a block (§4.2), and the
/// header list size bounded while decoding, so that many references to one large entry (an "HPACK bomb") fail at
/// the field that passes the bound, not after the whole list was produced. Every error is a connection error
/// COMPRESSION_ERROR: once a block is abandoned half-way the table is no longer in step with the peer's.
/// <para>
/// Nothing is allocated per block or field: names and values are handed to the handler as spans of the input, of the
/// tables, or of one scratch buffer (Huffman-decoded strings) allocated with the decoder.
/// </para>
/// </summary>
public sealed class HpackDecoder
{
    /// <summary>RFC 9113 §6.5.2: the initial SETTINGS_HEADER_TABLE_SIZE, which the peer may use before our SETTINGS are acknowledged.</summary>
    public const int DefaultHeaderTableSize = 4096;

    /// <summary>
    /// The header list size accepted (RFC 9113 §6.5.2, SETTINGS_MAX_HEADER_LIST_SIZE: name + value + 32 per field):
    /// 32 KiB, Kestrel's MaxRequestHeadersTotalSize default and LLRP's maxRequestHeadersTotalSize.
    /// </summary>
    public const int DefaultMaxHeaderListSize = 32 * 1024;

    private readonly HpackDynamicTable _table;
    private readonly byte[] _scratch;
    private readonly int _maxHeaderListSize;
    private int _headerTableSizeLimit;

    // Set when the limit was lowered below the table's maximum: the peer's next block must start with a size update
    // to at most the new limit (RFC 7541 §4.2).
    private bool _sizeUpdateRequired;

    /// <param name="headerTableSizeLimit">The SETTINGS_HEADER_TABLE_SIZE in force, the largest size update accepted.</param>
    /// <param name="maxHeaderListSize">The largest header list (name + value + 32 per field) a block may decode to.</param>
    public HpackDecoder(int headerTableSizeLimit = DefaultHeaderTableSize, int maxHeaderListSize = DefaultMaxHeaderListSize)
    {
        if (maxHeaderListSize < HpackDynamicTable.EntryOverhead)
        {
            Http2Throw.Argument(nameof(maxHeaderListSize), "The header list size must allow one empty field (32)");
        }

        _table = new HpackDynamicTable(headerTableSizeLimit);
        _headerTableSizeLimit = headerTableSizeLimit;
        _maxHeaderListSize = maxHeaderListSize;

        // A field's name and value are both at most the list size less 32, so Huffman-decoded ones always fit.
        _scratch = new byte[maxHeaderListSize - HpackDynamicTable.EntryOverhead];
    }

    public HpackDynamicTable DynamicTable => _table;

    public int MaxHeaderListSize => _maxHeaderListSize;

    /// <summary>
    /// A new SETTINGS_HEADER_TABLE_SIZE, once the peer acknowledged it. Lowered below the table's current maximum,
    /// the peer's next block must begin with a size update within it.
    /// </summary>
    public void SetHeaderTableSizeLimit(int limit)
    {
        if (limit < 0)
        {
            Http2Throw.Argument(nameof(limit), "A table size is non-negative");
        }

        _headerTableSizeLimit = limit;
        if (limit < _table.MaxSize)
        {
            _sizeUpdateRequired = true;
        }
    }

    /// <summary>Decodes one whole field block, calling <paramref name="handler"/> for each field in order.</summary>
    public void Decode<THandler>(ReadOnlySpan<byte> block, ref THandler handler)
        where THandler : IHpackFieldHandler, allows ref struct
    {
        long listSize = 0;
        bool fieldSeen = false;
        int position = 0;
        while (position < block.Length)
        {
            byte first = block[position];
            if ((first & 0x80) != 0)
            {
                // §6.1: indexed field.
                int index = ReadInteger(block, ref position, 7);
                GetEntry(index, out var name, out var value);
                Account(ref listSize, name.Length, value.Length);
                RequireNoPendingSizeUpdate();
                handler.OnField(name, value, neverIndexed: false);
                fieldSeen = true;
            }
            else if ((first & 0x40) != 0)
            {
                // §6.2.1: literal with incremental indexing.
                RequireNoPendingSizeUpdate();
                DecodeLiteral(block, ref position, 6, ref listSize, out var name, out var value);
                handler.OnField(name, value, neverIndexed: false);
                _table.Add(name, value);
                fieldSeen = true;
            }
            else if ((first & 0x20) != 0)
            {
                // §6.3: dynamic table size update, only before the first field (§4.2).
                if (fieldSeen)
                {
                    Http2Throw.CompressionError("Dynamic table size update after a field");
                }

                int size = ReadInteger(block, ref position, 5);
                if (size > _headerTableSizeLimit)
                {
                    Http2Throw.CompressionError($"Dynamic table size update to {size}, above the SETTINGS_HEADER_TABLE_SIZE of {_headerTableSizeLimit}");
                }

                _table.SetMaxSize(size);
                _sizeUpdateRequired = false;
            }
            else
            {
                // §6.2.2, §6.2.3: literal without indexing, or never indexed (0x10).
                RequireNoPendingSizeUpdate();
                bool neverIndexed = (first & 0x10) != 0;
                DecodeLiteral(block, ref position, 4, ref listSize, out var name, out var value);
                handler.OnField(name, value, neverIndexed);
                fieldSeen = true;
            }
        }
    }

    private void RequireNoPendingSizeUpdate()
    {
        if (_sizeUpdateRequired)
        {
            Http2Throw.CompressionError("The block does not start with the dynamic table size update the lowered SETTINGS_HEADER_TABLE_SIZE requires");
        }
    }

    private void DecodeLiteral(ReadOnlySpan<byte> block, scoped ref int position, int prefixBits, scoped ref long listSize, out ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value)
    {
        int index = ReadInteger(block, ref position, prefixBits);
        int scratchUsed = 0;
        if (index == 0)
        {
            name = ReadString(block, ref position, listSize, 0, ref scratchUsed);
        }
        else
        {
            GetEntry(index, out name, out _);
        }

        value = ReadString(block, ref position, listSize, name.Length, ref scratchUsed);
        Account(ref listSize, name.Length, value.Length);
    }

    /// <summary>
    /// §5.2: a string literal, as a span of the block or, Huffman-decoded, of the scratch buffer. Its decoded length is
    /// bounded by what the header list has left for it, so the bound holds before any byte is copied.
    /// </summary>
    private ReadOnlySpan<byte> ReadString(ReadOnlySpan<byte> block, scoped ref int position, long listSize, int otherLength, scoped ref int scratchUsed)
    {
        if (position >= block.Length)
        {
            Http2Throw.CompressionError("Field block ends before a string literal");
        }

        bool huffman = (block[position] & 0x80) != 0;
        int length = ReadInteger(block, ref position, 7);
        if (length > block.Length - position)
        {
            Http2Throw.CompressionError($"String literal of {length} bytes exceeds the field block");
        }

        var encoded = block.Slice(position, length);
        position += length;
        long budget = _maxHeaderListSize - listSize - otherLength - HpackDynamicTable.EntryOverhead;
        if (!huffman)
        {
            if (length > budget)
            {
                ThrowListTooLarge();
            }

            return encoded;
        }

        var destination = _scratch.AsSpan(scratchUsed, (int)Math.Clamp(budget, 0, _scratch.Length - scratchUsed));
        if (!Huffman.TryDecode(encoded, destination, out int written))
        {
            ThrowListTooLarge();
        }

        scratchUsed += written;
        return destination[..written];
    }

    private void Account(ref long listSize, int nameLength, int valueLength)
    {
        listSize += (long)nameLength + valueLength + HpackDynamicTable.EntryOverhead;
        if (listSize > _maxHeaderListSize)
        {
            ThrowListTooLarge();
        }
    }

    [DoesNotReturn]
    private void ThrowListTooLarge()
        => Http2Throw.CompressionError($"The header list exceeds {_maxHeaderListSize} bytes (name + value + 32 per field)");

    /// <summary>§2.3.3: index 1..61 the static table, 62.. the dynamic table; 0 or beyond is a decoding error.</summary>
    private void GetEntry(int index, out ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value)
    {
        if (index == 0)
        {
            Http2Throw.CompressionError("Index 0");
        }

        if (index <= HpackStaticTable.Count)
        {
            name = HpackStaticTable.GetName(index);
            value = HpackStaticTable.GetValue(index);
            return;
        }

        if (index - HpackStaticTable.Count > _table.Count)
        {
            Http2Throw.CompressionError($"Index {index} beyond the dynamic table's {_table.Count} entries");
        }

        _table.Get(index - HpackStaticTable.Count, out name, out value);
    }

    private static int ReadInteger(ReadOnlySpan<byte> block, scoped ref int position, int prefixBits)
    {
        if (!HpackInteger.TryDecode(block[position..], prefixBits, out int value, out int consumed))
        {
            Http2Throw.CompressionError("Field block ends within an integer");
        }

        position += consumed;
        return value;
    }
}
