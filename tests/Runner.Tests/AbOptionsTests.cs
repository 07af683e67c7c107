namespace LLRP.Runner.Tests;

[Collection("Console")]
public sealed class AbOptionsTests
{
    [Theory]
    [InlineData("", "ab-options: give OUT_DIR and at least one configuration NAME='K=V ...' (see --help)")]
    [InlineData("out", "ab-options: name at least one configuration NAME='K=V ...' (see --help)")]
    [InlineData("out a= bad", "ab-options: 'bad' is not NAME='K=V ...' (see --help)")]
    [InlineData("--frobnicate out a=", "ab-options: unknown option --frobnicate (see --help)")]
    public void BadUsageIsOneLineAndExit2(string line, string message) =>
        Assert.Equal((2, message + "\n"), ConsoleCapture.AbOptions(line.Split(' ', StringSplitOptions.RemoveEmptyEntries)));

    private static void Run(string dir, string label, int requests, string rps, string proc0, string proc1, string origin0, string origin1, string latency = "")
    {
        File.WriteAllText(Path.Combine(dir, $"{label}.wrk.txt"),
            $"Running 10s test @ http://127.0.0.1:9780/\n  1 threads and 64 connections\n  {requests} requests in 10.00s, 12.00MB read\n{latency}Requests/sec:  {rps}\nTransfer/sec:      1.20MB\n");
        File.WriteAllText(Path.Combine(dir, $"{label}.proc.txt"), $"{proc0}\n{proc1}\n");
        File.WriteAllText(Path.Combine(dir, $"{label}.origin.txt"), $"{origin0}\n{origin1}\n");
    }

    [Fact]
    public void SummaryHasARowPerRunAndTheMedians()
    {
        var dir = Directory.CreateTempSubdirectory("ab-options-").FullName;
        try
        {
            // 500 ticks at 100/s over 100,000 requests: 50 us each; the origin 250 ticks: 25 us.
            Run(dir, "a.r1", 100_000, "10000.00", "1000 50 10 1 100 2", "1500 20050 30010 1 150 2", "200 0 0 0 0 0", "450 0 0 0 0 0",
                "  Latency Distribution\n     50%    1.20ms\n     75%    2.00ms\n     90%    3.10ms\n     99%    1.00ms\n");
            Run(dir, "a.r2", 100_000, "12000.00", "0 0 0 1 0 2", "700 10000 10000 1 70 2", "0 0 0 0 0 0", "300 0 0 0 0 0",
                "  Latency Distribution\n     50%    1.20ms\n     75%    2.00ms\n     90%    3.10ms\n     99%    1.25s\n");
            var lines = AbOptions.Summary(dir, ["a=X=1", "b="], 2, 100).TrimEnd('\n').Split('\n');

            Assert.Equal(4, lines.Length);
            Assert.Equal("a.r1\t100000\t10000\t50.0\t25.0\t0.20\t0.30\t1\t0.10\t2\tnone\t1.00", lines[1]);
            Assert.Equal("a.r2\t100000\t12000\t70.0\t30.0\t0.10\t0.10\t1\t0.10\t2\tnone\t1250.00", lines[2]);
            Assert.Equal("median a (2 runs)\t-\t11000\t60.0\t27.5\t0.15\t0.20\t-\t0.10\t-\t-\t625.50", lines[3]);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Theory]
    [InlineData("     99%  412.00us", 0.412)]
    [InlineData("     99%    6.68ms", 6.68)]
    [InlineData("     99%    1.02s ", 1020.0)]
    [InlineData("     99%    2.00m", 120_000.0)]
    public void P99IsReadInMilliseconds(string line, double expected) =>
        Assert.Equal(expected, AbOptions.P99(["  Latency Distribution", line])!.Value, 6);

    [Fact]
    public void P99IsAbsentWithoutTheDistribution() => Assert.Null(AbOptions.P99(["Requests/sec:  100.00"]));
}
