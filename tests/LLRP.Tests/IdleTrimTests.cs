using LLRP.Buffers;
using Xunit;

namespace LLRP.Tests;

/// <summary>The pool the exchanges rent from, and when an idle proxy gives back what a burst left.</summary>
public sealed class IdleTrimTests
{
    [Theory]
    [InlineData(1, 16)]
    [InlineData(16, 16)]
    [InlineData(17, 32)]
    [InlineData(4096, 4096)]
    [InlineData(40_000, 65_536)]
    [InlineData(65_536, 65_536)]
    public void Rents_the_power_of_two_length_at_or_above_the_one_asked_for(int asked, int length)
    {
        var pool = new TrimmableArrayPool<byte>(64 * 1024, 4);
        var array = pool.Rent(asked);
        Assert.Equal(length, array.Length);
        pool.Return(array);
        Assert.Same(array, pool.Rent(asked));
    }

    [Fact]
    public void Keeps_at_most_its_count_per_length_and_drops_what_is_above_its_largest_length()
    {
        var pool = new TrimmableArrayPool<byte>(1024, 2);
        var arrays = Enumerable.Range(0, 3).Select(_ => pool.Rent(1000)).ToArray();
        Assert.Equal(3, arrays.Distinct().Count());
        foreach (var array in arrays)
        {
            pool.Return(array);
        }
        Assert.Equal(2, pool.RetainedCount);

        var large = pool.Rent(1025);
        Assert.Equal(1025, large.Length);
        pool.Return(large);
        Assert.Equal(2, pool.RetainedCount);
        Assert.Empty(pool.Rent(0));
    }

    [Fact]
    public void Refuses_an_array_of_a_length_it_never_rents()
    {
        var pool = new TrimmableArrayPool<byte>(1024, 2);
        Assert.Throws<ArgumentException>(() => pool.Return(new byte[100]));
    }

    [Fact]
    public void Clears_a_returned_array_when_asked()
    {
        var pool = new TrimmableArrayPool<byte>(1024, 2);
        var array = pool.Rent(16);
        array.AsSpan().Fill(7);
        pool.Return(array, clearArray: true);
        Assert.All(pool.Rent(16), b => Assert.Equal(0, b));
    }

    [Fact]
    public void Trim_drops_every_kept_array_and_renting_allocates_again()
    {
        var pool = new TrimmableArrayPool<int>(64 * 1024, 8);
        var kept = new[] { pool.Rent(100), pool.Rent(100), pool.Rent(5000) };
        foreach (var array in kept)
        {
            pool.Return(array);
        }
        Assert.Equal(3, pool.RetainedCount);

        pool.Trim();

        Assert.Equal(0, pool.RetainedCount);
        var small = pool.Rent(100);
        var large = pool.Rent(5000);
        Assert.DoesNotContain(kept, array => ReferenceEquals(array, small) || ReferenceEquals(array, large));
    }

    [Fact]
    public void Trims_once_an_idle_period_lasted_long_enough_after_enough_allocation()
    {
        var trim = new IdleTrim(TimeSpan.FromSeconds(5), minAllocatedBytes: 1000);
        Assert.False(trim.Observe(0, activity: 10, busy: false, allocatedBytes: 5000));
        Assert.False(trim.Observe(4_999, activity: 10, busy: false, allocatedBytes: 5000));
        Assert.True(trim.Observe(5_000, activity: 10, busy: false, allocatedBytes: 5000));
        // Once per idle period: nothing was allocated since.
        Assert.False(trim.Observe(20_000, activity: 10, busy: false, allocatedBytes: 5100));
        // A new burst, then idle again.
        Assert.False(trim.Observe(21_000, activity: 500, busy: false, allocatedBytes: 9000));
        Assert.False(trim.Observe(25_999, activity: 500, busy: false, allocatedBytes: 9000));
        Assert.True(trim.Observe(26_000, activity: 500, busy: false, allocatedBytes: 9000));
    }

    [Fact]
    public void Never_trims_while_an_exchange_is_in_flight_or_activity_moves()
    {
        var trim = new IdleTrim(TimeSpan.FromSeconds(5), minAllocatedBytes: 1000);
        for (long now = 0; now <= 60_000; now += 1_000)
        {
            Assert.False(trim.Observe(now, activity: 1, busy: true, allocatedBytes: 1_000_000));
        }
        for (long now = 0; now <= 60_000; now += 1_000)
        {
            Assert.False(trim.Observe(60_000 + now, activity: now, busy: false, allocatedBytes: 1_000_000));
        }
    }

    [Fact]
    public void Does_not_trim_after_too_little_allocation_or_when_off()
    {
        var small = new IdleTrim(TimeSpan.FromSeconds(5), minAllocatedBytes: 1000);
        Assert.False(small.Observe(0, activity: 1, busy: false, allocatedBytes: 999));
        Assert.False(small.Observe(60_000, activity: 1, busy: false, allocatedBytes: 999));

        var off = new IdleTrim(TimeSpan.Zero, minAllocatedBytes: 0);
        Assert.False(off.Observe(0, activity: 1, busy: false, allocatedBytes: 1 << 30));
        Assert.False(off.Observe(60_000, activity: 1, busy: false, allocatedBytes: 1 << 30));
    }
}
