using System.Text;
using System.Text.Json;
using LLRP.Diagnostics;

namespace LLRP.Tests;

/// <summary>
/// The statistics block statsInterval prints: it is part of the process whose allocations it reports, so a tick must
/// allocate next to nothing, or the allocated-per-request figure measures the reporter (at statsInterval 1, a block
/// built afresh cost about 20 KB a second: about 1 B per request at 20,000 requests a second).
/// </summary>
public sealed class SelfReportTests
{
    private static readonly WindowFigures Figures = new(10, 171_785, 1.25, 48.5, 47.75, 49.25, 120, 80, 40, 95.5, 0.4);

    [Fact]
    public void Writing_a_block_allocates_under_a_kilobyte()
    {
        var text = new StringBuilder();
        using var writer = new StreamWriter(Stream.Null);
        // The first block grows the builder, the second makes it one chunk again (Clear): from then on it is reused.
        SelfReport.WriteBlock(text, writer, Figures, 400_000, 3);
        SelfReport.WriteBlock(text, writer, Figures, 400_000, 3);
        var before = GC.GetAllocatedBytesForCurrentThread();
        for (var i = 0; i < 100; i++)
        {
            SelfReport.WriteBlock(text, writer, Figures, 400_000, 3);
        }
        var perBlock = (GC.GetAllocatedBytesForCurrentThread() - before) / 100.0;
        // A few hundred bytes remain (about 300 B: a second of statsInterval 1 at any load); a fresh block was 17 KB.
        Assert.True(perBlock < 1024, $"a statistics block allocated {perBlock:F0} bytes");
    }

    [Fact]
    public void The_block_is_crank_statistics_json()
    {
        var text = new StringBuilder();
        using var output = new StringWriter();
        SelfReport.WriteBlock(text, output, Figures, 400_000, 3);
        SelfReport.WriteBlock(text, output, Figures, 400_000, 3);
        var blocks = output.ToString().Split("#EndJobStatistics\n", StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal(2, blocks.Length);
        Assert.Equal(blocks[0][..blocks[0].IndexOf("\"Measurements\"", StringComparison.Ordinal)],
            blocks[1][..blocks[1].IndexOf("\"Measurements\"", StringComparison.Ordinal)]);
        Assert.StartsWith("#StartJobStatistics\n", blocks[1], StringComparison.Ordinal);
        using var json = JsonDocument.Parse(blocks[1]["#StartJobStatistics\n".Length..]);
        var metadata = json.RootElement.GetProperty("Metadata").EnumerateArray().Select(m => m.GetProperty("Name").GetString()).ToArray();
        var measurements = json.RootElement.GetProperty("Measurements").EnumerateArray()
            .ToDictionary(m => m.GetProperty("Name").GetString()!, m => m.GetProperty("Value").GetDouble());
        Assert.Equal(metadata, measurements.Keys);
        Assert.Equal(171_785, measurements["llrp/requests"]);
        Assert.Equal(400_000, measurements["llrp/requests/total"]);
        Assert.Equal(3, measurements["llrp/rejected"]);
        Assert.Equal(1.25, measurements["llrp/allocated-per-request"]);
        Assert.Equal(10, measurements["llrp/window"]);
        Assert.Equal(40, measurements["jit/methods/second-half"]);
        Assert.Equal(95.5, measurements["jit/time-in-window"]);
        Assert.Equal(0.4, measurements["jit/interior-share"]);
        var stamp = json.RootElement.GetProperty("Measurements")[0].GetProperty("Timestamp").GetDateTime();
        Assert.True(Math.Abs((DateTime.UtcNow - stamp).TotalMinutes) < 5, $"timestamp {stamp:o}");
    }
}
