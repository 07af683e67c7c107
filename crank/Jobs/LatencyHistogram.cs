using System.Numerics;

namespace LLRP.Jobs;

/// <summary>Latencies in Stopwatch ticks, counted in log-linear buckets: exact below 128, and each power of two above
/// split into 128 equal buckets, so a value is known within 1/128 (0.8 %) of itself. Fixed size (34 KiB), nothing
/// allocated per value, one per connection so that counting needs no synchronization; merged at the end.</summary>
internal sealed class LatencyHistogram
{
    private const int SubBits = 7;
    private const int Sub = 1 << SubBits;

    // Values from 2^40 ticks up (18 minutes at the 1 GHz Stopwatch of Linux, far past any run's round trip) share the
    // last bucket; the exact maximum is kept beside.
    private const int TopExponent = 39;
    private const int Buckets = (TopExponent - SubBits + 2) * Sub;

    private readonly long[] _counts = new long[Buckets];

    public long Count { get; private set; }

    public long Max { get; private set; }

    public long Sum { get; private set; }

    public void Record(long ticks)
    {
        var v = Math.Max(0, ticks);
        _counts[Index(v)]++;
        Count++;
        Sum += v;
        if (v > Max)
        {
            Max = v;
        }
    }

    public void Add(LatencyHistogram other)
    {
        for (var i = 0; i < Buckets; i++)
        {
            _counts[i] += other._counts[i];
        }
        Count += other.Count;
        Sum += other.Sum;
        Max = Math.Max(Max, other.Max);
    }

    /// <summary>The value at percentile <paramref name="percent"/> by nearest rank (the smallest value with at least
    /// that share of the values at or below it), as its bucket's midpoint, at most <see cref="Max"/> (the last bucket's
    /// values: <see cref="Max"/>); 0 when empty.</summary>
    public long Percentile(double percent)
    {
        if (Count == 0)
        {
            return 0;
        }
        var rank = Math.Clamp((long)Math.Ceiling(Count * percent / 100), 1, Count);
        long seen = 0;
        for (var i = 0; i < Buckets - 1; i++)
        {
            seen += _counts[i];
            if (seen >= rank)
            {
                return Math.Min(Midpoint(i), Max);
            }
        }
        // The last bucket holds everything from its start up: its values are known only by the maximum.
        return Max;
    }

    internal static int Index(long v)
    {
        if (v < Sub)
        {
            return (int)v;
        }
        var exponent = Math.Min(63 - BitOperations.LeadingZeroCount((ulong)v), TopExponent + 1);
        if (exponent > TopExponent)
        {
            return Buckets - 1;
        }
        var top = (int)(v >> (exponent - SubBits));
        return ((exponent - SubBits + 1) * Sub) + top - Sub;
    }

    internal static long Midpoint(int index)
    {
        if (index < Sub)
        {
            return index;
        }
        var exponent = (index / Sub) + SubBits - 1;
        var width = 1L << (exponent - SubBits);
        var low = (long)(Sub + (index % Sub)) << (exponent - SubBits);
        return low + ((width - 1) / 2);
    }
}
