namespace LLRP.Diagnostics;

/// <summary>
/// Where the measured window lies in a series of periodic samples: one rule for LLRP's SelfReport and the baselines'
/// JitActivity (this file is linked into each). The window ends at the last sample that closed a busy interval and
/// starts <c>window</c> before it, to the nearest sample; with no window it starts at the sample before the first
/// busy interval. Its middle is the sample nearest the halfway time, for the two halves the steadiness check compares.
/// </summary>
internal static class SampleWindow
{
    /// <param name="count">How many samples there are.</param>
    /// <param name="at">The time of sample <c>i</c>.</param>
    /// <param name="busy">Whether the interval from sample <c>i - 1</c> to sample <c>i</c> was busy.</param>
    /// <param name="window">The window's length; zero: from the first busy interval on.</param>
    /// <returns>False when no interval was busy.</returns>
    public static bool TryFind(int count, Func<int, TimeSpan> at, Func<int, bool> busy, TimeSpan window, out int start, out int mid, out int end)
    {
        start = mid = end = 0;
        if (count < 2)
        {
            return false;
        }
        end = count - 1;
        while (end > 0 && !busy(end))
        {
            end--;
        }
        if (end == 0)
        {
            return false;
        }
        start = end;
        if (window > TimeSpan.Zero)
        {
            var target = at(end) - window;
            while (start > 0 && at(start - 1) >= target - ((at(start) - at(start - 1)) / 2))
            {
                start--;
            }
        }
        else
        {
            start = 0;
            while (start < end && !busy(start + 1))
            {
                start++;
            }
        }
        if (start == end)
        {
            start = end - 1;
        }
        var midTime = at(start) + ((at(end) - at(start)) / 2);
        mid = start;
        for (var i = start; i <= end; i++)
        {
            if (Math.Abs((at(i) - midTime).Ticks) < Math.Abs((at(mid) - midTime).Ticks))
            {
                mid = i;
            }
        }
        return true;
    }

    /// <summary>
    /// The window without its first and last interval, for the JIT part of the steadiness check: those are the
    /// intervals in which the load generator opens and closes its connections, and each run's open and close paths
    /// (accept, pipe set-up, connection-reset handling) climb one JIT tier per run however long the warm-up; under the
    /// load itself the JIT is quiet (per-second method counts, docs/methodology.md "The steadiness check"). A window
    /// of fewer than three intervals is its own interior.
    /// </summary>
    public static (int From, int To) Interior(int start, int end) => end - start >= 3 ? (start + 1, end - 1) : (start, end);

    /// <summary>JIT time as a percentage of the process CPU time between two samples; NaN when no CPU time passed.</summary>
    public static double JitSharePercent(TimeSpan jitFrom, TimeSpan jitTo, TimeSpan cpuFrom, TimeSpan cpuTo) =>
        cpuTo > cpuFrom ? (jitTo - jitFrom) / (cpuTo - cpuFrom) * 100 : double.NaN;
}
