namespace LLHttp2.Hpack;

/// <summary>
/// RFC 7541 §2.3.2, §4: the dynamic table, newest entry first (index 1 here; HPACK index 62), size counted as name +
/// value + 32 per entry (§4.1), oldest entries evicted to make room (§4.4) or when the maximum shrinks (§4.3).
/// <para>
/// The bytes live in one ring of <c>capacity</c> bytes, mirrored: every byte is written at its position and at its
/// position + capacity, so an entry that wraps the end of the ring is still one contiguous span and a lookup hands it
/// out without copying. The entries' offsets and lengths live in a second ring. Both are allocated once, for the
/// largest size the table may ever have (the SETTINGS_HEADER_TABLE_SIZE limit), and never per entry.
/// </para>
/// </summary>
public sealed class HpackDynamicTable
{
    /// <summary>§4.1: the overhead counted for each entry.</summary>
    public const int EntryOverhead = 32;

    private byte[] _bytes;
    private Entry[] _entries;
    private int _capacity;
    private int _newest = -1; // index in _entries of the newest entry
    private int _head; // ring position of the next entry's first byte

    public HpackDynamicTable(int maxSize)
    {
        if (maxSize < 0)
        {
            Http2Throw.Argument(nameof(maxSize), "A table size is non-negative");
        }

        _capacity = maxSize;
        _bytes = new byte[2 * maxSize];
        _entries = new Entry[(maxSize / EntryOverhead) + 1];
        MaxSize = maxSize;
    }

    /// <summary>The number of entries.</summary>
    public int Count { get; private set; }

    /// <summary>§4.1: the sum of the entries' sizes.</summary>
    public int Size { get; private set; }

    /// <summary>The maximum size in force (the last size update, §6.3).</summary>
    public int MaxSize { get; private set; }

    /// <summary>The largest <see cref="MaxSize"/> the table has room for.</summary>
    public int Capacity => _capacity;

    /// <summary>§4.3: a new maximum, evicting the oldest entries above it; beyond <see cref="Capacity"/> the ring grows (a settings change, not a steady-state event).</summary>
    public void SetMaxSize(int maxSize)
    {
        if (maxSize < 0)
        {
            Http2Throw.Argument(nameof(maxSize), "A table size is non-negative");
        }

        if (maxSize > _capacity)
        {
            Grow(maxSize);
        }

        MaxSize = maxSize;
        EvictTo(maxSize);
    }

    /// <summary>
    /// §4.4: adds an entry as the newest, evicting the oldest until it fits; an entry larger than the maximum empties
    /// the table and is not added. <paramref name="name"/> may be a span of this table (a literal whose name is
    /// indexed): it is read before anything is overwritten.
    /// </summary>
    public void Add(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        long entrySize = (long)name.Length + value.Length + EntryOverhead;
        if (entrySize > MaxSize)
        {
            EvictTo(0);
            return;
        }

        EvictTo(MaxSize - (int)entrySize);

        // The evicted entries' bytes are still in place; the new entry goes where the oldest live bytes do not reach,
        // since live bytes plus the new entry are at most MaxSize <= capacity.
        int start = _head;
        Write(start, name);
        Write((start + name.Length) % _capacity, value);
        int length = name.Length + value.Length;
        _head = _capacity == 0 ? 0 : (start + length) % _capacity;

        _newest = (_newest + 1) % _entries.Length;
        _entries[_newest] = new Entry(start, name.Length, value.Length);
        Count++;
        Size += (int)entrySize;
        Debug.Assert(Count <= _entries.Length);
    }

    /// <summary>The entry at <paramref name="index"/>, 1 the newest to <see cref="Count"/> the oldest.</summary>
    public void Get(int index, out ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value)
    {
        if ((uint)(index - 1) >= (uint)Count)
        {
            Http2Throw.Argument(nameof(index), "No dynamic table entry at this index");
        }

        var entry = _entries[EntryIndex(index)];
        name = _bytes.AsSpan(entry.Offset, entry.NameLength);
        value = _bytes.AsSpan(entry.Offset + entry.NameLength, entry.ValueLength);
    }

    /// <summary>
    /// The index (1-based) of the newest entry with this name and value (<paramref name="exact"/> true), or else of the
    /// newest entry with this name; 0 when none has it. A linear scan: a table of 4 KiB holds at most 128 entries.
    /// </summary>
    public int Find(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, out bool exact)
    {
        int nameIndex = 0;
        for (int index = 1; index <= Count; index++)
        {
            var entry = _entries[EntryIndex(index)];
            if (entry.NameLength != name.Length || !name.SequenceEqual(_bytes.AsSpan(entry.Offset, entry.NameLength)))
            {
                continue;
            }

            if (value.SequenceEqual(_bytes.AsSpan(entry.Offset + entry.NameLength, entry.ValueLength)))
            {
                exact = true;
                return index;
            }

            if (nameIndex == 0)
            {
                nameIndex = index;
            }
        }

        exact = false;
        return nameIndex;
    }

    private int EntryIndex(int index)
    {
        int i = _newest - (index - 1);
        return i < 0 ? i + _entries.Length : i;
    }

    private void EvictTo(int maxSize)
    {
        while (Size > maxSize)
        {
            var oldest = _entries[EntryIndex(Count)];
            Size -= oldest.NameLength + oldest.ValueLength + EntryOverhead;
            Count--;
        }
    }

    /// <summary>Writes at ring position <paramref name="position"/> and its mirror; the source may overlap the ring.</summary>
    private void Write(int position, ReadOnlySpan<byte> source)
    {
        if (source.IsEmpty)
        {
            return;
        }

        // memmove semantics: correct even when the source is an entry of this ring about to be overwritten.
        source.CopyTo(_bytes.AsSpan(position));
        int end = position + source.Length;
        if (end <= _capacity)
        {
            _bytes.AsSpan(position, source.Length).CopyTo(_bytes.AsSpan(position + _capacity));
        }
        else
        {
            // Wrapped: [position, capacity) mirrors to the upper half, [capacity, end) to the lower.
            _bytes.AsSpan(position, _capacity - position).CopyTo(_bytes.AsSpan(position + _capacity));
            _bytes.AsSpan(_capacity, end - _capacity).CopyTo(_bytes.AsSpan(0));
        }
    }

    private void Grow(int capacity)
    {
        var bytes = new byte[2 * capacity];
        var entries = new Entry[(capacity / EntryOverhead) + 1];
        int position = 0;
        for (int index = Count; index >= 1; index--)
        {
            var entry = _entries[EntryIndex(index)];
            int length = entry.NameLength + entry.ValueLength;
            _bytes.AsSpan(entry.Offset, length).CopyTo(bytes.AsSpan(position));
            _bytes.AsSpan(entry.Offset, length).CopyTo(bytes.AsSpan(position + capacity));
            entries[Count - index] = new Entry(position, entry.NameLength, entry.ValueLength);
            position += length;
        }

        _bytes = bytes;
        _entries = entries;
        _capacity = capacity;
        _newest = Count - 1;
        _head = position % capacity;
    }

    private readonly record struct Entry(int Offset, int NameLength, int ValueLength);
}
