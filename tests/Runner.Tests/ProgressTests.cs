namespace LLRP.Runner.Tests;

/// <summary>The progress line of long runs: plain lines in a log, one line rewritten in place on a terminal.</summary>
public sealed class ProgressTests
{
    private TimeSpan _elapsed;

    [Fact]
    public void InALogEachRunEndsWithOnePlainLineOfCountTimesAndResult()
    {
        var log = new StringWriter();
        var progress = new Progress("run-local", 4, TimeSpan.FromMinutes(10), log, terminal: false, () => _elapsed);

        _elapsed = TimeSpan.FromSeconds(150);
        progress.Completed("nginx.r1", "61,000 RPS, steady after 1 attempt(s)");
        _elapsed = TimeSpan.FromSeconds(320);
        progress.Completed("llrp-llhttp.r1", "63,535 RPS, NOT steady after 3 attempt(s)");

        Assert.Equal(
            [
                "run-local: run 1 of 4 (25 %), 2m30s elapsed, ~7m30s left (expected ~10m00s in all); last: nginx.r1, 61,000 RPS, steady after 1 attempt(s)",
                "run-local: run 2 of 4 (50 %), 5m20s elapsed, ~5m20s left (expected ~10m00s in all); last: llrp-llhttp.r1, 63,535 RPS, NOT steady after 3 attempt(s)",
                "",
            ],
            log.ToString().Split(Environment.NewLine));
    }

    [Fact]
    public void OnATerminalTheLineIsRewrittenInPlaceAndLogLinesGoAboveIt()
    {
        var terminal = new StringWriter();
        var progress = new Progress("sweep", 2, TimeSpan.FromHours(1.5), terminal, terminal: true, () => _elapsed);

        progress.WriteAbove(terminal, "before any run");
        _elapsed = TimeSpan.FromSeconds(40);
        progress.Completed("r1 64c", "done");
        progress.WriteAbove(terminal, "a log line");
        _elapsed = TimeSpan.FromSeconds(90);
        progress.Completed("r2 64c", "done");
        progress.Finish();

        const string Clear = "\r\u001b[2K";
        var first = "sweep: run 1 of 2 (50 %), 40s elapsed, ~40s left (expected ~1h30m in all); last: r1 64c, done";
        var second = "sweep: run 2 of 2 (100 %), 1m30s elapsed, ~0s left (expected ~1h30m in all); last: r2 64c, done";
        var nl = Environment.NewLine;
        Assert.Equal($"before any run{nl}{Clear}{first}{Clear}a log line{nl}{first}{Clear}{second}{nl}", terminal.ToString());
    }

    [Fact]
    public void MoreRunsThanPlannedStayAtTheTotal()
    {
        var log = new StringWriter();
        var progress = new Progress("run-local", 1, TimeSpan.FromMinutes(1), log, terminal: false, () => TimeSpan.FromSeconds(30));

        progress.Completed("a.r1", "done");
        progress.Completed("a.r1", "done");

        Assert.EndsWith($"run 1 of 1 (100 %), 30s elapsed, ~0s left (expected ~1m00s in all); last: a.r1, done{Environment.NewLine}", log.ToString());
    }
}
