namespace LLHttp.Http1;

/// <summary>A growable byte buffer rented from <see cref="ArrayPool{T}"/>, bounded so a caller cannot grow it without limit.</summary>
internal sealed class SendBuffer : IDisposable
{
    private readonly int _maxLength;
    private byte[] _array;
    private int _length;

    public SendBuffer(int initialLength, int maxLength)
    {
        _maxLength = maxLength;
        _array = ArrayPool<byte>.Shared.Rent(Math.Min(initialLength, maxLength));
    }

    public int Length => _length;

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

        int newLength = (int)Math.Min(_maxLength, Math.Max(needed, (long)_array.Length * 2));
        byte[] bigger = ArrayPool<byte>.Shared.Rent(newLength);
        _array.AsSpan(0, _length).CopyTo(bigger);
        ArrayPool<byte>.Shared.Return(_array);
        _array = bigger;
    }

    public void Dispose()
    {
        byte[] array = _array;
        _array = [];
        _length = 0;
        if (array.Length != 0)
        {
            ArrayPool<byte>.Shared.Return(array);
        }
    }
}
