namespace LLHttp.Http2;

/// <summary>
/// One response head of an HTTP/2 stream (RFC 9113 §8.1): its :status and regular fields, already checked by the codec
/// (§8.2, §8.3.2). The fields are valid until the stream is given back.
/// </summary>
public readonly struct LLHttp2ResponseHead
{
    private readonly FieldList? _fields;
    private readonly LLHttp2Stream.HeadRecord _record;

    internal LLHttp2ResponseHead(LLHttp2Stream stream, FieldList fields, LLHttp2Stream.HeadRecord record)
    {
        Stream = stream;
        _fields = fields;
        _record = record;
    }

    /// <summary>The stream the head belongs to.</summary>
    public LLHttp2Stream? Stream { get; }

    public int StatusCode => _record.Status;

    /// <summary>100, 103 and other 1xx heads: a final head follows.</summary>
    public bool IsInformational => _record.Status < 200;

    /// <summary>The head ended the stream (END_STREAM): no body and no trailers follow.</summary>
    public bool EndsStream => _record.EndStream;

    /// <summary>The regular fields (:status is <see cref="StatusCode"/>).</summary>
    public LLHttp2Fields Headers => _fields is null ? default : new LLHttp2Fields(_fields, _record.First + 1, _record.Count - 1);
}

/// <summary>A field section of an HTTP/2 response (a head's or the trailers'), lowercase names (RFC 9113 §8.2.1).</summary>
public readonly struct LLHttp2Fields
{
    private readonly FieldList? _list;
    private readonly int _first;

    internal LLHttp2Fields(FieldList list, int first, int count)
    {
        _list = list;
        _first = first;
        Count = Math.Max(count, 0);
    }

    public int Count { get; }

    public ReadOnlySpan<byte> Name(int index) => _list!.Name(_first + CheckIndex(index));

    public ReadOnlySpan<byte> Value(int index) => _list!.Value(_first + CheckIndex(index));

    /// <summary>The first field named <paramref name="name"/> (names are lowercase on HTTP/2; compared as given).</summary>
    public bool TryGetValue(ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value)
    {
        for (int i = 0; i < Count; i++)
        {
            if (Ascii.EqualsIgnoreCase(Name(i), name))
            {
                value = Value(i);
                return true;
            }
        }

        value = default;
        return false;
    }

    public Enumerator GetEnumerator() => new(this);

    private int CheckIndex(int index) => (uint)index < (uint)Count ? index : throw new ArgumentOutOfRangeException(nameof(index));

    public ref struct Enumerator
    {
        private readonly LLHttp2Fields _fields;
        private int _index;

        internal Enumerator(LLHttp2Fields fields)
        {
            _fields = fields;
            _index = -1;
        }

        public bool MoveNext() => ++_index < _fields.Count;

        public readonly HeaderField Current => new(_fields.Name(_index), _fields.Value(_index));
    }
}

/// <summary>Name/value pairs copied into one growing byte array, kept by a pooled stream across requests.</summary>
internal sealed class FieldList
{
    private byte[] _bytes = new byte[256];
    private (int NameStart, int NameLength, int ValueLength)[] _entries = new (int, int, int)[16];
    private int _length;

    public int Count { get; private set; }

    public void Clear()
    {
        Count = 0;
        _length = 0;
    }

    public void Add(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        int needed = _length + name.Length + value.Length;
        if (needed > _bytes.Length)
        {
            // Spans handed out earlier keep pointing into the old array, which stays alive and unchanged.
            var larger = new byte[Math.Max(needed, _bytes.Length * 2)];
            _bytes.AsSpan(0, _length).CopyTo(larger);
            _bytes = larger;
        }

        if (Count == _entries.Length)
        {
            Array.Resize(ref _entries, _entries.Length * 2);
        }

        _entries[Count++] = (_length, name.Length, value.Length);
        name.CopyTo(_bytes.AsSpan(_length));
        value.CopyTo(_bytes.AsSpan(_length + name.Length));
        _length = needed;
    }

    public ReadOnlySpan<byte> Name(int index)
    {
        var (start, nameLength, _) = _entries[index];
        return _bytes.AsSpan(start, nameLength);
    }

    public ReadOnlySpan<byte> Value(int index)
    {
        var (start, nameLength, valueLength) = _entries[index];
        return _bytes.AsSpan(start + nameLength, valueLength);
    }
}
