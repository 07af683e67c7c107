using System.Text.Json.Nodes;

namespace LLRP.Jobs.Tests;

/// <summary>The ab job on recorded reports (crank/tests/data/README.md says where each comes from).</summary>
public class AbJobTests
{
    private static string Data(string file) => Path.Combine(AppContext.BaseDirectory, "data", file);

    private static JsonNode Json(string file) =>
        JsonNode.Parse(Statistics.Block("ab", AbJob.Figures(File.ReadAllText(Data(file)))!, DateTime.UtcNow).Split('\n')[1])!;

    private static JsonObject ResultsOf(string file)
    {
        var results = new JsonObject();
        foreach (var m in Json(file)["Measurements"]!.AsArray())
        {
            results[((string)m!["Name"]!).Split(';')[0]] = m["Value"]!.DeepClone();
        }
        return results;
    }

    [Fact]
    public void A_recorded_report_gives_crank_s_figures() =>
        Assert.Equal(
            """{"ab/rps/mean":435.58,"ab/time-per-request/mean":459.16,"ab/requests":1335,"ab/failed":0,"ab/non2xx":0,"ab/latency/50":338,"ab/latency/90":693,"ab/latency/95":770,"ab/latency/99":899,"ab/latency/max":900}""",
            ResultsOf("ab-2.3.txt").ToJsonString());

    [Fact]
    public void Crank_s_names()
    {
        var names = Json("ab-2.3.txt")["Metadata"]!.AsArray().Select(m => (string)m!["Name"]!).ToArray();
        Assert.Contains("ab/rps/mean;http/rps/mean", names);
        Assert.Contains("ab/failed;http/requests/errors", names);
        Assert.Contains("ab/time-per-request/mean", names);
    }

    [Fact]
    public void Failed_and_non_2xx_requests()
    {
        var results = ResultsOf("ab-2.3-failures.txt");
        Assert.Equal("[3,7]", new JsonArray(results["ab/failed"]!.DeepClone(), results["ab/non2xx"]!.DeepClone()).ToJsonString());
        Assert.Equal(10, AbJob.ErrorsOf(File.ReadAllText(Data("ab-2.3-failures.txt"))));
        Assert.Equal(0, AbJob.ErrorsOf(File.ReadAllText(Data("ab-2.3.txt"))));
    }

    [Fact]
    public void Another_tool_s_report_is_not_readable()
    {
        Assert.Null(AbJob.Figures(File.ReadAllText(Data("h2load-1.52.txt"))));
        var e = Assert.Throws<JobFailure>(() => AbJob.Run(["--parse", Data("h2load-1.52.txt")]));
        Assert.Equal(JobFailure.Unreadable, e.ExitCode);
        Assert.Equal($"could not parse the ab report {Data("h2load-1.52.txt")}", e.Message);
    }

    [Fact]
    public void Only_the_mean_time_per_request_counts_not_the_one_across_all_requests()
    {
        var rows = AbJob.Figures("""
            Complete requests:      10
            Requests per second:    8103.456789012 [#/sec] (mean)
            Time per request:       0.123 [ms] (mean, across all concurrent requests)
            Time per request:       24.681 [ms] (mean)
            """)!;
        Assert.Equal(24.681, rows.Single(r => r.Name == "ab/time-per-request/mean").Value.GetValue<double>());
        Assert.Equal("8103.456789012", rows[0].Value.ToJsonString());
        Assert.DoesNotContain(rows, r => r.Name.StartsWith("ab/latency", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData(new string[] { }, "missing URL")]
    [InlineData(new[] { "-x", "http://h/" }, "unknown option -x")]
    [InlineData(new[] { "http://a/", "http://b/" }, "more than one URL (http://a/, http://b/)")]
    [InlineData(new[] { "-c", "0", "http://h/" }, "duration and clients must be > 0")]
    [InlineData(new[] { "-d", "0", "http://h/" }, "duration and clients must be > 0")]
    [InlineData(new[] { "-w", "1m", "http://h/" }, "not a whole number: 1m")]
    [InlineData(new[] { "http://h:1" }, "URL must be http://HOST:PORT/PATH: http://h:1")]
    [InlineData(new[] { "https://h:1/" }, "URL must be http://HOST:PORT/PATH: https://h:1/")]
    [InlineData(new[] { "--parse" }, "--parse needs a saved ab report")]
    [InlineData(new[] { "--parse", "/no/such/report" }, "--parse needs a saved ab report")]
    public void Bad_usage_is_one_line_and_exit_2(string[] args, string message)
    {
        var e = Assert.Throws<JobFailure>(() => AbJob.Run(args));
        Assert.Equal(JobFailure.Usage, e.ExitCode);
        Assert.Equal(message, e.Message);
    }
}

public class ToolTextTests
{
    // A computed figure goes into the statistics block as computed; a whole one without a point.
    [Theory]
    [InlineData(24683.12, "24683.12")]
    [InlineData(1335, "1335")]
    [InlineData(1.0 / 3, "0.3333333333333333")]
    public void Figures_are_written_as_computed(double value, string json) =>
        Assert.Equal(json, ToolText.Row("x", "Max", "Sum", "x", "x", "n2", value).Value.ToJsonString());

    [Theory]
    [InlineData("12.57k", 12.57)]
    [InlineData("  42", 42)]
    [InlineData("1e3", 1000)]
    [InlineData(".5", 0.5)]
    [InlineData("k12", 0)]
    [InlineData("", 0)]
    public void Leading_numbers_of_a_field(string text, double value) => Assert.Equal(value, ToolText.Number(text));
}
