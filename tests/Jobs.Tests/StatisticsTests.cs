using System.Text.Json.Nodes;

namespace LLRP.Jobs.Tests;

public class StatisticsTests
{
    private static readonly DateTime At = new(2026, 11, 29, 7, 30, 1, 234, DateTimeKind.Utc);

    [Fact]
    public void Block_is_three_lines_with_crank_s_markers_and_metadata_once_per_name()
    {
        var block = Statistics.Block("wrk",
        [
            Measurement.Number("ramp/step/rate", "All", "All", "Offered rate", "n0", 1000),
            Measurement.Number("ramp/step/rate", "All", "All", "Offered rate", "n0", 2000),
            new("tls/protocol", "First", "First", "TLS", "The TLS version", "", JsonValue.Create("TLSv1.3")),
        ], At);

        var lines = block.Split('\n');
        Assert.Equal(["#StartJobStatistics", lines[1], "#EndJobStatistics", ""], lines);
        var json = JsonNode.Parse(lines[1])!;
        var metadata = json["Metadata"]!.AsArray();
        Assert.Equal(2, metadata.Count);
        Assert.Equal("wrk", (string?)metadata[0]!["Source"]);
        Assert.Equal("All", (string?)metadata[0]!["Aggregate"]);
        var values = json["Measurements"]!.AsArray().Select(m => m!["Value"]!.ToJsonString()).ToArray();
        Assert.Equal(["1000", "2000", "\"TLSv1.3\""], values);
        Assert.All(json["Measurements"]!.AsArray(), m => Assert.Equal("2026-11-29T07:30:01.234Z", (string?)m!["Timestamp"]));
    }

    [Fact]
    public void Quotes_and_backslashes_in_texts_stay_valid_json()
    {
        var block = Statistics.Block("a\"b", [Measurement.Number("x", "Max", "Sum", "say \"hi\" \\ there", "n2", 0.25)], At);
        var json = JsonNode.Parse(block.Split('\n')[1])!;
        Assert.Equal("say \"hi\" \\ there", (string?)json["Metadata"]![0]!["ShortDescription"]);
        Assert.Equal("a\"b", (string?)json["Metadata"]![0]!["Source"]);
        Assert.Equal(0.25, (double)json["Measurements"]![0]!["Value"]!);
    }
}

public class JobArgsTests
{
    [Theory]
    [InlineData("15", 15)]
    [InlineData("15s", 15)]
    [InlineData("0", 0)]
    public void Whole_numbers_accept_a_seconds_suffix(string text, int expected) =>
        Assert.Equal(expected, JobArgs.WholeNumberOf(text));

    [Theory]
    [InlineData("")]
    [InlineData("s")]
    [InlineData("-1")]
    [InlineData("1.5")]
    [InlineData("99999999999")]
    [InlineData("12x")]
    public void Anything_else_is_bad_usage(string text)
    {
        var e = Assert.Throws<JobFailure>(() => JobArgs.WholeNumberOf(text));
        Assert.Equal(JobFailure.Usage, e.ExitCode);
        Assert.Equal($"not a whole number: {text}", e.Message);
    }

    [Fact]
    public void An_option_at_the_end_lacks_its_value()
    {
        var args = new JobArgs(["-d"]);
        Assert.True(args.Next(out var option));
        var e = Assert.Throws<JobFailure>(() => args.Value(option));
        Assert.Equal("-d needs a value", e.Message);
        Assert.False(args.Next(out _));
    }

    [Theory]
    [InlineData("plaintext", 2)]
    [InlineData("browser", 11)]
    [InlineData("handshake", 2)]
    [InlineData("none", 0)]
    [InlineData("", 0)]
    public void Header_presets(string name, int fields)
    {
        var headers = HeaderPresets.Of(name)!;
        Assert.Equal(fields, headers.Length);
        Assert.All(headers, h => Assert.Matches("^[A-Za-z-]+: .+$", h));
    }

    [Fact]
    public void Unknown_preset_is_null() => Assert.Null(HeaderPresets.Of("chrome"));
}
