using System.Text.Json.Nodes;

namespace LLRP.Jobs.Tests;

public class RampJobTests
{
    private static string D(string f) => H2LoadJobsProcess.Data(f);

    [Theory]
    [InlineData("h2load-1.52.txt", "1000 533.7 533.7 36.560 103.254 100.000 1601 1601")]
    [InlineData("h2load-1.52-failures.txt", "1000 533.7 530.0 36.560 103.254 99.313 1590 1601")]
    public void A_step_s_figures(string report, string expected)
    {
        var (exit, output, _) = H2LoadJobsProcess.Run("ramp", "--parse-step", D(report), D("h2load-1.52.log"), "1000", "3");
        Assert.Equal(0, exit);
        Assert.Equal(expected + "\n", output);
    }

    [Fact]
    public void A_step_without_answers_has_no_percentiles() =>
        Assert.Equal("1000 533.7 533.7 nan nan 100.000 1601 1601", RampJob.ParseStep(H2LoadReport.Read(D("h2load-1.52.txt")), [], "1000", 3)!.ToString());

    [Fact]
    public void Not_an_h2load_report()
    {
        var (exit, _, err) = H2LoadJobsProcess.Run("ramp", "--parse-step", D("ab-2.3.txt"), D("h2load-1.52.log"), "1000", "3");
        Assert.Equal(JobFailure.Unreadable, exit);
        Assert.Equal($"ramp-job: could not parse the h2load report {D("ab-2.3.txt")}\n", err);
    }

    [Fact]
    public void One_value_per_step_without_the_missing_ones_then_the_highest_rate()
    {
        string[][] steps =
        [
            ["1000", "533.7", "533.7", "36.560", "103.254", "100.000", "1601", "1601", "12.3", "45.6"],
            ["2000", "1066.7", "1234567.8", "nan", "nan", "99.313", "1590", "1601", "nan", "nan"],
        ];
        var json = JsonNode.Parse(Statistics.Block("ramp", RampJob.Rows(steps), DateTime.UtcNow).Split('\n')[1])!;
        var values = json["Measurements"]!.AsArray().Select(m => $"{m!["Name"]}={m["Value"]!.ToJsonString()}");
        // One value per step and figure, then the highest achieved rate as computed.
        Assert.Equal(
        [
            "ramp/offered=1000", "ramp/sent=533.7", "ramp/rps=533.7", "ramp/latency/50=36.56", "ramp/latency/99=103.254",
            "ramp/availability=100", "ramp/cpu=12.3", "ramp/memory=45.6",
            "ramp/offered=2000", "ramp/sent=1066.7", "ramp/rps=1234567.8", "ramp/availability=99.313",
            "ramp/rps/max;http/rps/max=1234567.8",
        ], values);
        var metadata = json["Metadata"]!.AsArray();
        Assert.Equal(9, metadata.Count);
        Assert.Equal("Proxy CPU (% of a core), per step", (string?)metadata[6]!["ShortDescription"]);
        Assert.Equal("Latency 99th (ms), one value per step", (string?)metadata[4]!["LongDescription"]);
        Assert.Equal("All", (string?)metadata[0]!["Aggregate"]);
    }

    [Fact]
    public void Cpu_ticks_are_utime_plus_stime_after_the_command_s_name() =>
        Assert.Equal(1234 + 56, RampJob.CpuTicksOf("42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 1234 56 0 0 20 0 3 0 100"));

    [Theory]
    [InlineData("--steps must be 1 to 30", "--steps", "31", "http://127.0.0.1:1/")]
    [InlineData("--steps must be 1 to 30", "--steps", "0", "http://127.0.0.1:1/")]
    [InlineData("-d must be 1 to 120 seconds", "-d", "121s", "http://127.0.0.1:1/")]
    [InlineData("--start and -c must be >= 1", "--start", "0", "http://127.0.0.1:1/")]
    [InlineData("missing URL")]
    [InlineData("unknown option --rate", "--rate", "1")]
    [InlineData("not a whole number: -1", "--proxy-pid", "-1", "http://127.0.0.1:1/")]
    [InlineData("--parse-step needs H2LOAD_OUTPUT LOG_FILE OFFERED_RATE STEP_S", "--parse-step", "a")]
    [InlineData("h2load not found (apt-get install -y nghttp2-client)", "http://127.0.0.1:1/")]
    public void Bad_usage_is_one_line_and_exit_2(string message, params string[] args) => H2LoadJobsProcess.BadUsage("ramp", message, args);
}
