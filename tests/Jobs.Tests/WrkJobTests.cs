using System.Text.Json.Nodes;

namespace LLRP.Jobs.Tests;

/// <summary>The wrk job on recorded reports and probes (crank/tests/data/README.md says where each comes from).</summary>
public class WrkJobTests
{
    private static string Data(string file) => Path.Combine(AppContext.BaseDirectory, "data", file);

    private static string Report(string file) => File.ReadAllText(Data(file));

    /// <summary>The block's line of JSON as a crank agent reads it.</summary>
    private static JsonNode Json(IEnumerable<Measurement> rows) =>
        JsonNode.Parse(Statistics.Block("wrk", rows, DateTime.UtcNow).Split('\n')[1])!;

    /// <summary>The measurements as {name: value}, each name of "a;b" under a, as compact JSON (jq -c's shape).</summary>
    private static string ResultsOf(IEnumerable<Measurement> rows)
    {
        var results = new JsonObject();
        foreach (var m in Json(rows)["Measurements"]!.AsArray())
        {
            results[((string)m!["Name"]!).Split(';')[0]] = m["Value"]!.DeepClone();
        }
        return results.ToJsonString();
    }

    [Fact]
    public void A_recorded_post_run_gives_crank_s_figures() =>
        Assert.Equal(
            """{"wrk/rps/mean":12490.55,"wrk/requests":24992,"wrk/latency/mean":0.57245,"wrk/latency/max":15.87,"wrk/errors/badresponses":0,"wrk/errors/socketerrors":0,"wrk/throughput":13.65,"wrk/latency/50":0.232,"wrk/latency/75":0.383,"wrk/latency/90":1.46,"wrk/latency/95":2.42,"wrk/latency/99":5.53,"warmup/seconds":0}""",
            ResultsOf(WrkJob.Figures(Report("wrk-4.1.0-post.txt"), null, false, 0)!));

    [Fact]
    public void Every_figure_carries_crank_s_wrk_and_http_names_and_operations()
    {
        var metadata = Json(WrkJob.Figures(Report("wrk-4.1.0-post.txt"), null, false, 0)!)["Metadata"]!.AsArray();
        var names = metadata.Select(m => (string)m!["Name"]!).ToArray();
        Assert.Contains("wrk/requests;http/requests", names);
        Assert.Contains("wrk/latency/99;http/latency/99", names);
        Assert.All(metadata, m => Assert.Equal("Max", (string?)m!["Aggregate"]));
        Assert.All(metadata.Where(m => ((string)m!["Name"]!).StartsWith("wrk/latency/9", StringComparison.Ordinal)),
            m => Assert.Equal("Max", (string?)m!["Reduce"]));
        Assert.Equal("Sum", (string?)metadata.Single(m => (string)m!["Name"]! == "wrk/rps/mean;http/rps/mean")!["Reduce"]);
    }

    [Fact]
    public void First_request_and_a_capped_warm_up_are_figures_too()
    {
        var rows = WrkJob.Figures(Report("wrk-4.1.0-post.txt"), 12, true, 61)!;
        var results = JsonNode.Parse(ResultsOf(rows))!;
        Assert.Equal(12, (double)results["http/firstrequest"]!);
        Assert.Equal(61, (double)results["warmup/seconds"]!);
        Assert.Equal(1, (double)results["warmup/capped"]!);
        Assert.DoesNotContain(WrkJob.Figures(Report("wrk-4.1.0-post.txt"), null, false, 0)!, m => m.Name == "warmup/capped");
    }

    [Fact]
    public void Bad_responses_and_socket_errors_are_counted()
    {
        var report = Report("wrk-4.1.0-post-errors.txt");
        var results = JsonNode.Parse(ResultsOf(WrkJob.Figures(report, null, false, 0)!))!;
        Assert.Equal("[4,3]", new JsonArray(results["wrk/errors/badresponses"]!.DeepClone(), results["wrk/errors/socketerrors"]!.DeepClone()).ToJsonString());
        Assert.Equal(7, WrkJob.ErrorsOf(report));
    }

    [Fact]
    public void Max_errors_fails_the_parse_with_exit_4_only_above_the_limit()
    {
        var e = Assert.Throws<JobFailure>(() => WrkJob.Run(["--parse", Data("wrk-4.1.0-post-errors.txt"), "--max-errors", "6"]));
        Assert.Equal(JobFailure.TooManyErrors, e.ExitCode);
        Assert.Equal("7 bad responses + socket errors in the measured run, more than --max-errors 6: failing the job", e.Message);
        Assert.Equal(0, WrkJob.Run(["--parse", Data("wrk-4.1.0-post-errors.txt"), "--max-errors", "7"]));
    }

    [Fact]
    public void Another_tool_s_report_is_not_readable()
    {
        Assert.Null(WrkJob.Figures(Report("ab-2.3.txt"), null, false, 0));
        var e = Assert.Throws<JobFailure>(() => WrkJob.Run(["--parse", Data("ab-2.3.txt")]));
        Assert.Equal(JobFailure.Unreadable, e.ExitCode);
    }

    [Fact]
    public void Figures_from_wrk_s_report_lines()
    {
        var report = """
              1 threads and 64 connections
              Thread Stats   Avg      Stdev     Max   +/- Stdev
                Latency   620.51us  229.13us    1.02s   85.33%
              Latency Distribution
                 50%  590.00us
              123456 requests in 5.00s, 14.72MB read
              Socket errors: connect 1, read 20, write 300, timeout 4000
            Requests/sec:  24683.12
            Transfer/sec:    900.50KB
            """;
        var results = JsonNode.Parse(ResultsOf(WrkJob.Figures(report, null, false, 20)!))!;
        Assert.Equal("24683.12", results["wrk/rps/mean"]!.ToJsonString());
        Assert.Equal("123456", results["wrk/requests"]!.ToJsonString());
        Assert.Equal("0.62051", results["wrk/latency/mean"]!.ToJsonString());
        Assert.Equal("1020", results["wrk/latency/max"]!.ToJsonString());
        Assert.Equal("0.59", results["wrk/latency/50"]!.ToJsonString());
        Assert.Equal("4321", results["wrk/errors/socketerrors"]!.ToJsonString());
        // 900.5 KB / 1024 in MB, as computed.
        Assert.Equal("0.87939453125", results["wrk/throughput"]!.ToJsonString());
        Assert.Null(results["wrk/latency/99"]);
    }

    [Theory]
    [InlineData("620.51us", 0.62051)]
    [InlineData("8.41ms", 8.41)]
    [InlineData("1.02s", 1020)]
    [InlineData("2.00m", 120000)]
    [InlineData("1.00h", 3600000)]
    [InlineData("5", -1)]
    [InlineData("", -1)]
    public void Times_in_ms(string text, double ms) => Assert.Equal(ms, WrkJob.Ms(text), 9);

    [Theory]
    [InlineData("512.00B", 0.00048828125)]
    [InlineData("2.00KB", 0.001953125)]
    [InlineData("2.94MB", 2.94)]
    [InlineData("1.50GB", 1536)]
    [InlineData("1.00TB", 1048576)]
    [InlineData("3.00kB", -1)]
    public void Bytes_in_mb(string text, double mb) => Assert.Equal(mb, WrkJob.Mb(text), 9);

    /// <summary>The figures of a TLS block and the first metadata entry's aggregate.</summary>
    private static string TlsOf(string first, string second)
    {
        var json = Json(WrkJob.TlsFigures(Report(first), Report(second))!);
        var values = json["Measurements"]!.AsArray().Select(m => m!["Value"]!.DeepClone()).ToList();
        values.Add(json["Metadata"]![0]!["Aggregate"]!.DeepClone());
        return new JsonArray([.. values]).ToJsonString();
    }

    [Fact]
    public void Tls_13_resumed() =>
        Assert.Equal("""["TLSv1.3","TLS_AES_256_GCM_SHA384","X25519",1,"First"]""",
            TlsOf("s_client-3.0.19-tls13-brief.txt", "s_client-3.0.19-tls13-resumed.txt"));

    [Fact]
    public void Tls_12_not_resumed() =>
        Assert.Equal("""["TLSv1.2","ECDHE-ECDSA-AES256-GCM-SHA384","X25519",0,"First"]""",
            TlsOf("s_client-3.0.19-tls12-brief.txt", "s_client-3.0.19-tls12-new.txt"));

    [Fact]
    public void A_nist_curve_s_group() =>
        Assert.Equal("prime256v1", (string?)JsonNode.Parse(TlsOf("s_client-tls13-ecdh-brief.txt", "s_client-3.0.19-tls12-new.txt"))![2]);

    [Fact]
    public void Tls_figures_are_strings_with_no_format_and_resumed_a_number()
    {
        var rows = WrkJob.TlsFigures(Report("s_client-3.0.19-tls13-brief.txt"), Report("s_client-3.0.19-tls13-resumed.txt"))!;
        Assert.Equal(["", "", "", "n0"], rows.Select(r => r.Format));
        Assert.All(rows, r => Assert.Equal("First", r.Reduce));
    }

    [Fact]
    public void A_probe_without_a_tls_summary_is_not_readable()
    {
        Assert.Null(WrkJob.TlsFigures(Report("s_client-3.0.19-tls12-new.txt"), Report("s_client-3.0.19-tls12-new.txt")));
        var e = Assert.Throws<JobFailure>(() =>
            WrkJob.Run(["--parse-tls", Data("s_client-3.0.19-tls12-new.txt"), Data("s_client-3.0.19-tls12-new.txt")]));
        Assert.Equal(JobFailure.Unreadable, e.ExitCode);
        Assert.Equal($"no TLS protocol and cipher suite in {Data("s_client-3.0.19-tls12-new.txt")}", e.Message);
    }

    [Theory]
    [InlineData("https://127.0.0.1:8443/?s=10", "127.0.0.1:8443", "/?s=10")]
    [InlineData("https://localhost", "localhost:443", "/")]
    [InlineData("https://localhost/a/b", "localhost:443", "/a/b")]
    public void The_probe_s_target(string url, string authority, string path) =>
        Assert.Equal((authority, path), WrkJob.AuthorityAndPath(url));

    [Theory]
    [InlineData(new string[] { }, "missing URL")]
    [InlineData(new[] { "-x", "u" }, "unknown option -x")]
    [InlineData(new[] { "a", "b" }, "more than one URL (a, b)")]
    [InlineData(new[] { "-d", "0", "u" }, "duration must be > 0")]
    [InlineData(new[] { "-c", "1.5", "u" }, "not a whole number: 1.5")]
    [InlineData(new[] { "--warmup-max", "x", "u" }, "not a whole number: x")]
    [InlineData(new[] { "--headers", "chrome", "u" }, "unknown header preset 'chrome' (plaintext|browser|handshake|none)")]
    [InlineData(new[] { "--body-framing", "gzip", "u" }, "--body-framing must be content-length or chunked, not 'gzip'")]
    [InlineData(new[] { "--parse", "/no/such/report" }, "--parse: no file /no/such/report")]
    [InlineData(new[] { "--parse-tls", "/no/such/probe", "/no/such/probe" }, "--parse-tls: no file /no/such/probe")]
    [InlineData(new[] { "u", "-d" }, "-d needs a value")]
    public void Bad_usage_is_one_line_and_exit_2(string[] args, string message)
    {
        var e = Assert.Throws<JobFailure>(() => WrkJob.Run(args));
        Assert.Equal(JobFailure.Usage, e.ExitCode);
        Assert.Equal(message, e.Message);
    }
}
