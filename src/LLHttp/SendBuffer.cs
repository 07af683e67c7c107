namespace LLHttp;

/// <summary>
/// A growable byte buffer rented from an <see cref="ArrayPool{T}"/>, bounded so a caller cannot grow it without limit.
/// It rents on the first write and gives the array back on <see cref="Release"/>, so an idle connection holds none.
/// </summary>
internal sealed class SendBuffer : IDisposable
{
    private readonly int _initialLength;
    private readonly int _maxLength;
    private readonly ArrayPool<byte> _pool;
    private byte[] _array = [];
    private int _length;

    public SendBuffer(int initialLength, int maxLength, ArrayPool<byte> pool)
    {
        _pool = pool;
        _initialLength = Math.Min(initialLength, maxLength);
        _maxLength = maxLength;
    }

    public int Length => _length;

    /// <summary>Whether an array is rented (tests observe that an idle connection holds none).</summary>
    public bool HoldsArray => _array.Length != 0;

    public ReadOnlyMemory<byte> WrittenMemory => _array.AsMemory(0, _length);

    public ReadOnlySpan<byte> WrittenSpan => _array.AsSpan(0, _length);

    public void Clear() => _length = 0;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public Span<byte> GetSpan(int sizeHint)
    {
        if (_array.Length - _length < sizeHint)
        {
            Grow(sizeHint);
        }

        return _array.AsSpan(_length);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Advance(int count) => _length += count;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Write(ReadOnlySpan<byte> bytes)
    {
        bytes.CopyTo(GetSpan(bytes.Length));
        _length += bytes.Length;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void Grow(int sizeHint)
    {
        long needed = (long)_length + sizeHint;
        if (needed > _maxLength)
        {
            ThrowHelper.Throw(LLHttpError.RequestHeadTooLarge, "Request head exceeds MaxRequestHeadLength");
        }

        int newLength = (int)Math.Min(_maxLength, Math.Max(needed, Math.Max((long)_array.Length * 2, _initialLength)));
        byte[] bigger = _pool.Rent(newLength);
        _array.AsSpan(0, _length).CopyTo(bigger);
        if (_array.Length != 0)
        {
            _pool.Return(_array);
        }

        _array = bigger;
    }

    /// <summary>Empties the buffer and gives its array back to the pool; the next write rents one again.</summary>
    public void Release()
    {
        byte[] array = _array;
        _array = [];
        _length = 0;
        if (array.Length != 0)
        {
            _pool.Return(array);
        }
    }

    public void Dispose() => Release();
}
