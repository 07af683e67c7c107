namespace LLRP.Jobs.Tests;

public class FixedRateJobTests
{
    private static string D(string f) => H2LoadJobsProcess.Data(f);

    private static List<Measurement> StallRows(int duration) =>
        FixedRateJob.Rows(H2LoadReport.Read(D("h2load-1.52-stall.txt")), H2LoadLogRow.Read(D("h2load-1.52-stall.log")), 100, 2, duration)!;

    [Fact]
    public void A_stall_shows_in_the_latencies_from_the_due_time()
    {
        // h2load's run against an origin that stalls every answer due from 1.0 to 1.2 s (2 connections, 50 requests/s
        // each): h2load holds the 20 requests due in the stall back and times them from their late send (uncorrected
        // p99 14.8 ms); from their due time they took 20 to 200 ms, 6.7 % of the 300, so p99 and p99.9 show it.
        var (exit, output, _) = H2LoadJobsProcess.Run("fixedrate", "--parse", D("h2load-1.52-stall.txt"), D("h2load-1.52-stall.log"), "100", "2", "3");
        Assert.Equal(0, exit);
        var expected = new Dictionary<string, string>
        {
            ["fixedrate/rate"] = "100",
            ["fixedrate/due"] = "300",
            ["fixedrate/sent"] = "100.66666666666667",
            ["fixedrate/missed"] = "0",
            ["fixedrate/rps"] = "100",
            ["fixedrate/requests"] = "300",
            ["fixedrate/errors/badresponses"] = "0",
            ["fixedrate/errors/socketerrors"] = "0",
            ["fixedrate/latency/50"] = "1.545",
            ["fixedrate/latency/90"] = "4.615",
            ["fixedrate/latency/99"] = "182.687",
            ["fixedrate/latency/99.9"] = "202.281",
            ["fixedrate/latency/max"] = "202.281",
            ["fixedrate/latency/mean"] = "9.826963333333337",
            ["fixedrate/uncorrected/latency/50"] = "0.843",
            ["fixedrate/uncorrected/latency/99"] = "14.777",
            ["fixedrate/uncorrected/latency/99.9"] = "201.474",
            ["fixedrate/uncorrected/latency/max"] = "201.474",
        };
        Assert.Equal(expected, H2LoadJobsProcess.Figures(output));
        Assert.Equal("http/rps/mean http/requests http/requests/badresponses http/requests/errors http/latency/50 http/latency/90 "
            + "http/latency/99 http/latency/99.9 http/latency/max http/latency/mean", H2LoadJobsProcess.Aliases(output));
    }

    [Fact]
    public void Requests_due_but_unanswered_count_from_their_due_time_to_the_end()
    {
        // The same log read as a run of 4 s: the 100 requests due in the 4th second got no answer.
        var rows = StallRows(4).ToDictionary(m => m.Name, m => (double)m.Value);
        Assert.Equal(400, rows["fixedrate/due"]);
        Assert.Equal(100, rows["fixedrate/missed"]);
        // The first of them was due as the 3rd second began, a whole second before the window's end.
        Assert.Equal(1000, rows["fixedrate/latency/max;http/latency/max"]);
    }

    [Fact]
    public void The_summary_line_is_the_bash_job_s()
    {
        Assert.Equal("fixedrate-job: offered 100/s, sent 101/s, answered 100/s; p50 1.545 ms, p99 182.687 ms, p99.9 202.281 ms, "
            + "max 202.281 ms from the due time (h2load from the send: p99 14.777 ms, max 201.474 ms); 300 due, 0 missed", FixedRateJob.Summary(StallRows(3)));
    }

    [Fact]
    public void Due_times_tick_per_connection_group()
    {
        // One connection at 10/s: due every 100 ms from the first send. The second request went out 150 ms late and took
        // 5 ms: 155 ms from its due time. The third went out early (a late tick's round()) and keeps h2load's own 2 ms.
        var log = new List<H2LoadLogRow>
        {
            new(1_000_000, 200, 1_000, "a"),
            new(1_250_000, 200, 5_000, "b"),
            new(1_150_000, 200, 2_000, "c"),
            new(1_300_000, -1, 0, "d"),
        };
        // Sorted by start: a (due 0), c (due 100 ms: sent 50 ms late, ends 152 ms), b (due 200 ms: ends 255 ms after 1 s).
        // The window of 0.35 s ends at 1.35 s: the request due at 1.3 s has no answer and counts 50 ms.
        Assert.Equal([1.0, 50.0, 52.0, 55.0], FixedRateJob.Corrected(log, 10, 1, 0.35));
    }

    [Fact]
    public void Not_an_h2load_report_or_no_answer_is_unreadable()
    {
        var (exit, _, err) = H2LoadJobsProcess.Run("fixedrate", "--parse", D("ab-2.3.txt"), D("h2load-1.52-stall.log"), "100", "2", "3");
        Assert.Equal(JobFailure.Unreadable, exit);
        Assert.Equal($"fixedrate-job: could not parse the h2load report {D("ab-2.3.txt")}\n", err);
        Assert.Null(FixedRateJob.Rows(H2LoadReport.Read(D("h2load-1.52-stall.txt")), [], 100, 2, 3));
    }

    [Theory]
    [InlineData("h2load sends request bodies with Content-Length only: --body-framing chunked is the wrk job's (benchmarks.yml job wrk)",
        "--rate", "100", "--body-size", "10", "--body-framing", "chunked", "http://127.0.0.1:1/")]
    [InlineData("--body-framing must be content-length or chunked, not 'gzip'", "--rate", "100", "--body-framing", "gzip", "http://127.0.0.1:1/")]
    [InlineData("--rate is required (requests per second over all connections)", "http://127.0.0.1:1/")]
    [InlineData("--rate and -c must be >= 1", "--rate", "0", "http://127.0.0.1:1/")]
    [InlineData("-d must be 1 to 3600 seconds, -w at most 3600", "--rate", "1", "-d", "3601", "http://127.0.0.1:1/")]
    [InlineData("unknown header preset 'x' (plaintext|browser|handshake|none)", "--rate", "1", "--headers", "x", "http://127.0.0.1:1/")]
    [InlineData("missing URL", "--rate", "1")]
    [InlineData("unknown option -m", "-m", "1")]
    [InlineData("--parse needs H2LOAD_OUTPUT LOG_FILE RATE CONNECTIONS DURATION_S", "--parse", "a", "b")]
    [InlineData("h2load not found (apt-get install -y nghttp2-client)", "--rate", "1", "http://127.0.0.1:1/")]
    public void Bad_usage_is_one_line_and_exit_2(string message, params string[] args) => H2LoadJobsProcess.BadUsage("fixedrate", message, args);
}
