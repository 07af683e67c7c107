using System.Buffers;
using System.Numerics;

namespace LLRP.Buffers;

/// <summary>
/// An array pool that keeps up to <c>maxArraysPerLength</c> arrays of each power-of-two length and can give them all
/// back to the GC (<see cref="Trim"/>). The pools of <see cref="ArrayPool{T}.Create(int, int)"/> never shrink: after
/// a burst of exchanges in flight at once they keep every array those exchanges rented for the life of the process
/// (127 request-head buffers of 64 KiB, ~10 MB in all, after 10,000 connections opened 128 at a time), although an
/// idle proxy needs none of them.
/// </summary>
/// <remarks>
/// Renting and returning take one uncontended lock per length and allocate nothing while the pool has an array of
/// the length asked for. Lengths are powers of two from 16; a request above <c>maxArrayLength</c> gets a new array of
/// exactly that length, which <see cref="Return"/> drops.
/// </remarks>
internal sealed class TrimmableArrayPool<T> : ArrayPool<T>
{
    private const int MinArrayLength = 16;

    private readonly Bucket[] _buckets;

    public TrimmableArrayPool(int maxArrayLength, int maxArraysPerLength)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(maxArrayLength, MinArrayLength);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxArraysPerLength, 1);
        _buckets = new Bucket[BucketIndex(maxArrayLength) + 1];
        for (var i = 0; i < _buckets.Length; i++)
        {
            _buckets[i] = new Bucket(MinArrayLength << i, maxArraysPerLength);
        }
    }

    /// <summary>The arrays the pool keeps now, over every length.</summary>
    public int RetainedCount
    {
        get
        {
            var count = 0;
            foreach (var bucket in _buckets)
            {
                count += bucket.Count;
            }
            return count;
        }
    }

    public override T[] Rent(int minimumLength)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(minimumLength);
        if (minimumLength == 0)
        {
            return [];
        }
        var index = BucketIndex(minimumLength);
        return index < _buckets.Length ? _buckets[index].Rent() : new T[minimumLength];
    }

    public override void Return(T[] array, bool clearArray = false)
    {
        ArgumentNullException.ThrowIfNull(array);
        if (array.Length == 0)
        {
            return;
        }
        var index = BucketIndex(array.Length);
        if (index >= _buckets.Length)
        {
            return;
        }
        if (array.Length != _buckets[index].Length)
        {
            throw new ArgumentException($"An array of {array.Length} elements was not rented from this pool.", nameof(array));
        }
        if (clearArray)
        {
            Array.Clear(array);
        }
        _buckets[index].Return(array);
    }

    /// <summary>Drops every array the pool keeps; rents allocate again until returns refill it.</summary>
    public void Trim()
    {
        foreach (var bucket in _buckets)
        {
            bucket.Clear();
        }
    }

    private static int BucketIndex(int length) =>
        BitOperations.Log2((uint)Math.Max(length, MinArrayLength) - 1) + 1 - BitOperations.Log2(MinArrayLength);

    private sealed class Bucket(int length, int capacity)
    {
        private readonly Lock _lock = new();
        private readonly T[]?[] _arrays = new T[capacity][];
        private int _count;

        public int Length => length;

        public int Count
        {
            get
            {
                lock (_lock)
                {
                    return _count;
                }
            }
        }

        public T[] Rent()
        {
            T[]? array = null;
            lock (_lock)
            {
                if (_count > 0)
                {
                    array = _arrays[--_count];
                    _arrays[_count] = null;
                }
            }
            return array ?? new T[length];
        }

        public void Return(T[] array)
        {
            lock (_lock)
            {
                if (_count < _arrays.Length)
                {
                    _arrays[_count++] = array;
                }
            }
        }

        public void Clear()
        {
            lock (_lock)
            {
                Array.Clear(_arrays, 0, _count);
                _count = 0;
            }
        }
    }
}
