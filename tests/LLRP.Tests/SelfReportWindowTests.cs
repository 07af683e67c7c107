using LLRP.Diagnostics;
using Xunit;

namespace LLRP.Tests;

/// <summary>
/// The self-report's measured window over its 1 s samples, and the JIT share the steadiness check reads: the JIT work
/// of the window's first and last second (the load connecting and disconnecting) is left out of that share.
/// </summary>
public sealed class SelfReportWindowTests
{
    private static readonly TimeSpan Second = TimeSpan.FromSeconds(1);

    // One sample a second: `requests` served, 10 ms of CPU per request, `jitMs` of JIT time and `methods` compiled
    // in each second (cumulative counters are built from the per-second figures).
    private static WindowSampler Sampler(TimeSpan window, long[] requests, double[] jitMs, long[] methods)
    {
        var sampler = new WindowSampler(window, SelfReport.MaxSamples);
        long served = 0, compiled = 0;
        var cpu = TimeSpan.Zero;
        var jit = TimeSpan.Zero;
        sampler.Add(new Sample(TimeSpan.Zero, 0, 0, cpu, 0, jit));
        for (var i = 0; i < requests.Length; i++)
        {
            served += requests[i];
            compiled += methods[i];
            cpu += TimeSpan.FromMilliseconds(10 * requests[i]);
            jit += TimeSpan.FromMilliseconds(jitMs[i]);
            sampler.Add(new Sample(Second * (i + 1), served, served * 8, cpu, compiled, jit));
        }
        return sampler;
    }

    [Fact]
    public void The_jit_share_leaves_out_the_seconds_the_load_connects_and_disconnects()
    {
        // Warm-up (2 s), a pause, then a 5 s measured run whose first and last second compile the open and close paths.
        var sampler = Sampler(TimeSpan.FromSeconds(5),
            requests: [100, 100, 0, 100, 100, 100, 100, 100, 0],
            jitMs: [500, 300, 0, 40, 1, 1, 1, 60, 0],
            methods: [400, 200, 0, 20, 0, 1, 0, 30, 0]);

        var w = sampler.Window();

        Assert.Equal(500, w.Requests);
        Assert.Equal(5, w.Seconds);
        Assert.Equal(51, w.JitMethods);
        Assert.Equal(103, w.JitMilliseconds, 6);
        // Interior: seconds 2-4 of the window, 3 ms of JIT over 3,000 ms of CPU.
        Assert.Equal(0.1, w.JitInteriorSharePercent, 6);
        Assert.Equal(8, w.AllocatedPerRequest, 6);
        Assert.Equal(10_000, w.CpuUsPerRequest, 6);
    }

    [Fact]
    public void A_window_of_two_seconds_is_its_own_interior()
    {
        var sampler = Sampler(TimeSpan.FromSeconds(2), requests: [100, 100], jitMs: [10, 30], methods: [1, 1]);

        var w = sampler.Window();

        Assert.Equal(2, w.Seconds);
        Assert.Equal(2, w.JitInteriorSharePercent, 6);
    }

    [Theory]
    [InlineData(0, 5, 1, 4)]
    [InlineData(3, 6, 4, 5)]
    [InlineData(3, 5, 3, 5)]
    [InlineData(0, 1, 0, 1)]
    public void Interior_drops_one_interval_at_each_end_when_three_or_more_remain(int start, int end, int from, int to) =>
        Assert.Equal((from, to), SampleWindow.Interior(start, end));
}
