using System.Diagnostics;
using System.Text.Json.Nodes;

namespace LLRP.Jobs.Tests;

/// <summary>Runs a job as crank does, in its own process (dotnet Jobs.dll JOB ARGS): the exit status, stdout and
/// stderr, with no console shared between tests.</summary>
internal static class H2LoadJobsProcess
{
    public static string Data(string file) => Path.Combine(AppContext.BaseDirectory, "data", file);

    public static (int Exit, string Out, string Err) Run(params string[] args)
    {
        var info = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true };
        info.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "Jobs.dll"));
        foreach (var a in args)
        {
            info.ArgumentList.Add(a);
        }
        // No h2load from the environment: the option checks must not depend on the machine.
        info.Environment["H2LOAD"] = "/nonexistent/h2load";
        using var p = Process.Start(info)!;
        var err = p.StandardError.ReadToEndAsync();
        var output = p.StandardOutput.ReadToEnd();
        p.WaitForExit();
        return (p.ExitCode, output, err.Result);
    }

    /// <summary>The statistics block's measurements as name → value, each "a;b" under a.</summary>
    public static Dictionary<string, string> Figures(string stdout)
    {
        var json = JsonNode.Parse(Block(stdout))!;
        return json["Measurements"]!.AsArray().ToDictionary(m => ((string)m!["Name"]!).Split(';')[0], m => m!["Value"]!.ToJsonString());
    }

    /// <summary>The JSON line of the block.</summary>
    public static string Block(string stdout)
    {
        var lines = stdout.Split('\n');
        var start = Array.IndexOf(lines, Statistics.Start);
        Assert.True(start >= 0 && lines[start + 2] == Statistics.End, stdout);
        return lines[start + 1];
    }

    /// <summary>The second names ("b" of "a;b") in metadata order.</summary>
    public static string Aliases(string stdout) =>
        string.Join(' ', JsonNode.Parse(Block(stdout))!["Metadata"]!.AsArray()
            .Select(m => ((string)m!["Name"]!).Split(';')).Where(n => n.Length > 1).Select(n => n[1]));

    /// <summary>Asserts a usage failure: exit 2 and one line on stderr.</summary>
    public static void BadUsage(string job, string expected, params string[] args)
    {
        var (exit, _, err) = Run([job, .. args]);
        Assert.Equal(2, exit);
        Assert.Equal($"{job}-job: {expected}\n", err);
    }
}

public class H2LoadJobTests
{
    private static string D(string f) => H2LoadJobsProcess.Data(f);

    [Fact]
    public void An_h2_run_s_figures_under_the_wrk_job_s_names()
    {
        // h2load's run over h2 (TLS, ALPN) through nginx; percentiles from the per-request log (nearest rank, ms).
        var (exit, output, _) = H2LoadJobsProcess.Run("h2load", "-d", "3", "-c", "2", "-m", "10", "--parse", D("h2load-1.52-h2.txt"), D("h2load-1.52-h2.log"));
        Assert.Equal(0, exit);
        var expected = new Dictionary<string, string>
        {
            ["h2load/rps/mean"] = "8850.67",
            ["h2load/requests"] = "26552",
            ["h2load/latency/mean"] = "2.07",
            ["h2load/latency/max"] = "15.48",
            ["h2load/errors/badresponses"] = "0",
            ["h2load/errors/socketerrors"] = "0",
            ["h2load/throughput"] = "0.6499614715576172",
            ["h2load/latency/50"] = "1.294",
            ["h2load/latency/75"] = "2.214",
            ["h2load/latency/90"] = "7.209",
            ["h2load/latency/95"] = "9.784",
            ["h2load/latency/99"] = "15.448",
            ["h2load/latency/99.9"] = "15.481",
            ["h2load/rps/2xx"] = "8850.666666666666",
            ["h2load/availability"] = "100",
            ["h2load/connections"] = "2",
            ["h2load/streams"] = "10",
            ["warmup/seconds"] = "0",
        };
        Assert.Equal(expected, H2LoadJobsProcess.Figures(output));
        Assert.Equal("http/rps/mean http/requests http/latency/mean http/latency/max http/requests/badresponses http/requests/errors "
            + "http/throughput http/latency/50 http/latency/75 http/latency/90 http/latency/95 http/latency/99 http/latency/99.9",
            H2LoadJobsProcess.Aliases(output));
    }

    [Fact]
    public void Open_loop_adds_the_offered_and_sent_rates()
    {
        var (exit, output, _) = H2LoadJobsProcess.Run("h2load", "-d", "3", "-c", "2", "-m", "10", "--rate", "4000", "--parse", D("h2load-1.52-h2.txt"), D("h2load-1.52-h2.log"));
        Assert.Equal(0, exit);
        var f = H2LoadJobsProcess.Figures(output);
        Assert.Equal(["4000", "8857.333333333334"], new[] { f["h2load/rate"], f["h2load/sent"] });
    }

    [Fact]
    public void Failures_against_max_errors()
    {
        // 9 failed requests: 2 4xx and 3 5xx answers, 4 stream errors.
        var (exit, output, err) = H2LoadJobsProcess.Run("h2load", "-d", "3", "-c", "2", "-m", "10", "--max-errors", "8", "--parse", D("h2load-1.52-h2-failures.txt"), D("h2load-1.52-h2.log"));
        Assert.Equal(JobFailure.TooManyErrors, exit);
        Assert.Equal("h2load-job: 9 bad responses + errors in the measured run, more than --max-errors 8: failing the job\n", err);
        var f = H2LoadJobsProcess.Figures(output);
        Assert.Equal(["5", "4", "99.96610424826756"], new[] { f["h2load/errors/badresponses"], f["h2load/errors/socketerrors"], f["h2load/availability"] });
        Assert.Equal(0, H2LoadJobsProcess.Run("h2load", "-d", "3", "-c", "2", "-m", "10", "--max-errors", "9", "--parse", D("h2load-1.52-h2-failures.txt"), D("h2load-1.52-h2.log")).Exit);
    }

    [Fact]
    public void An_http1_run_is_not_an_h2_run_but_its_statistics_are_printed()
    {
        var (exit, output, err) = H2LoadJobsProcess.Run("h2load", "-d", "3", "-c", "20", "--parse", D("h2load-1.52.txt"), D("h2load-1.52.log"));
        Assert.Equal(H2LoadJob.NotH2, exit);
        Assert.Contains("the connections spoke 'http/1.1', not h2", err, StringComparison.Ordinal);
        Assert.Equal("1601", H2LoadJobsProcess.Figures(output)["h2load/requests"]);
    }

    [Fact]
    public void Not_an_h2load_report()
    {
        var (exit, output, err) = H2LoadJobsProcess.Run("h2load", "--parse", D("ab-2.3.txt"), D("h2load-1.52.log"));
        Assert.Equal(JobFailure.Unreadable, exit);
        Assert.Equal("", output);
        Assert.Equal($"h2load-job: could not parse the h2load report {D("ab-2.3.txt")}\n", err);
    }

    [Theory]
    [InlineData("--headers handshake (Connection: close) has no HTTP/2 meaning: connection-specific fields make an h2 request malformed (RFC 9113 §8.2.2)", "--headers", "handshake", "https://127.0.0.1:1/")]
    [InlineData("unknown header preset 'chrome' (plaintext|browser|none)", "--headers", "chrome", "https://127.0.0.1:1/")]
    [InlineData("unknown option --bogus", "--bogus")]
    [InlineData("more than one URL (http://a/, http://b/)", "http://a/", "http://b/")]
    [InlineData("missing URL")]
    [InlineData("the URL must be https:// (h2 with ALPN) or http:// (prior-knowledge h2c): ftp://a/", "ftp://a/")]
    [InlineData("-d must be 1 to 3600 seconds, -w at most 3600", "-d", "0", "http://a/")]
    [InlineData("-d must be 1 to 3600 seconds, -w at most 3600", "-w", "3601s", "http://a/")]
    [InlineData("-c, -m and -t must be >= 1", "-m", "0", "http://a/")]
    [InlineData("h2load needs connections (-c 2) >= threads (-t 3)", "-t", "3", "http://a/")]
    [InlineData("--rate must be >= 1 request/s", "--rate", "0", "http://a/")]
    [InlineData("not a whole number: 2s", "-c", "2s", "http://a/")]
    [InlineData("not a whole number: x", "--max-errors", "x", "http://a/")]
    [InlineData("-H needs a value", "-H")]
    [InlineData("--parse needs an h2load report and its log file", "--parse", "/nonexistent", "/nonexistent")]
    [InlineData("--parse needs H2LOAD_OUTPUT LOG_FILE", "--parse", "/nonexistent")]
    [InlineData("h2load not found (apt-get install -y nghttp2-client)", "http://127.0.0.1:1/")]
    public void Bad_usage_is_one_line_and_exit_2(string message, params string[] args) => H2LoadJobsProcess.BadUsage("h2load", message, args);

    [Fact]
    public void Connection_specific_fields_are_not_sent()
    {
        Assert.Equal(["Accept: */*", "X-A: 1"], H2LoadJob.Sent(["Accept: */*", "Connection: keep-alive", "X-A: 1", "keep-alive: timeout=5",
            "Proxy-Connection: x", "Transfer-Encoding: chunked", "Upgrade: h2c"]));
        Assert.Equal(HeaderPresets.Of("browser")!.Length - 1, H2LoadJob.Sent(HeaderPresets.Of("browser")!).Count());
    }

    [Theory]
    [InlineData("512us", 0.512)]
    [InlineData("41.20ms", 41.2)]
    [InlineData("1.5s", 1500)]
    [InlineData("3m", -1)]
    public void Request_times_in_ms(string time, double ms) => Assert.Equal(ms, H2LoadReport.Milliseconds(time));

    [Fact]
    public void The_last_copy_of_a_line_counts_and_missing_lines_leave_figures_unset()
    {
        var report = H2LoadReport.Parse(["finished in 3.00s, 10.50 req/s, 1KB/s", "finished in 3.00s, 20.25 req/s, 1KB/s", "traffic: 1KB (1024) total"]);
        Assert.Equal(20.25, report.Rps);
        Assert.Equal(1024, report.Bytes);
        Assert.Null(report.Requests);
        Assert.Null(report.RequestTime);
        Assert.Equal("none", report.Protocol);
    }

    [Fact]
    public void Command_lines_are_shown_so_a_shell_reads_the_same_words()
    {
        string[] words = ["-t", "1", "-H", "Accept: text/plain,text/html;q=0.9,*/*;q=0.7", "http://127.0.0.1:8080/?s=1", "a'b", "", "~a", "x=y"];
        var shown = ShellWord.Spaced(words);
        Assert.Equal(@" -t 1 -H 'Accept: text/plain,text/html;q=0.9,*/*;q=0.7' 'http://127.0.0.1:8080/?s=1' 'a'\''b' '' '~a' x=y", shown);
        using var bash = System.Diagnostics.Process.Start(new System.Diagnostics.ProcessStartInfo("bash", ["-c", "printf '%s\\n'" + shown]) { RedirectStandardOutput = true })!;
        Assert.Equal(string.Concat(words.Select(w => w + "\n")), bash.StandardOutput.ReadToEnd());
        bash.WaitForExit();
        Assert.Equal("0.500000", H2LoadTool.PerConnection(1, 2, 6));
        Assert.Equal("33.333", H2LoadTool.PerConnection(100, 3, 3));
    }

    [Theory]
    [InlineData(0.25, 1, "0.2")]
    [InlineData(0.35, 1, "0.3")]
    [InlineData(533.6666, 1, "533.7")]
    public void Fixed_decimals_round_to_nearest(double value, int decimals, string text) => Assert.Equal(text, ToolText.F(value, decimals));
}
