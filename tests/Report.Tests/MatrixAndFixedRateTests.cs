using Xunit;

namespace LLRP.Analysis.Tests;

/// <summary>The request matrix and the proxies' thread count in a point, and the open-loop report.</summary>
public sealed class MatrixAndFixedRateTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("llrp-report-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Theory]
    // A newer file: "threads" is the proxies' beside "loadThreads" (wrk's).
    [InlineData("""{ "connections": 64, "path": "/", "loadThreads": 1, "threads": 2, "requestBodySize": 1024, "requestBodyFraming": "chunked", "presetHeaders": "browser", "load": "wrk" }""",
        "proxy threads 2, POST 1 KB chunked, browser headers")]
    [InlineData("""{ "connections": 64, "path": "/", "loadThreads": 1, "threads": 1, "requestBodySize": 0, "presetHeaders": "plaintext", "load": "fixedrate", "rate": 20000 }""",
        "proxy threads 1, fixed rate 20,000/s")]
    [InlineData("""{ "connections": 64, "path": "/ws", "loadThreads": 1, "threads": 1, "requestBodySize": 0, "presetHeaders": "plaintext", "load": "websocket", "messageSize": 32 }""",
        "proxy threads 1, WebSocket echo of 32 B messages (a request is a round trip)")]
    // An older file: "threads" was wrk's, and says nothing about the proxies.
    [InlineData("""{ "connections": 64, "path": "/", "threads": 1, "presetHeaders": "plaintext" }""", "")]
    public void ThePointNamesTheProxyThreadsAndTheRequest(string variables, string request)
    {
        File.WriteAllText(Path.Combine(_dir, "nginx.r1.json"), Result("nginx", variables, """{ "wrk/rps/mean": 1000 }"""));

        var (runs, _, _) = ResultsReader.ReadAll(_dir, skipDirectory: null);

        var point = Assert.Single(runs).Point;
        Assert.Equal(request, point.Request);
        if (request.Contains("WebSocket", StringComparison.Ordinal))
        {
            // The echo's size, not the path's default body.
            Assert.StartsWith("64 connections, 32 B responses (path `/ws`)", point.Label, StringComparison.Ordinal);
        }
        if (request.Length > 0)
        {
            Assert.EndsWith(", " + request, point.Label, StringComparison.Ordinal);
        }
        else
        {
            Assert.DoesNotContain("threads", point.Label, StringComparison.Ordinal);
        }
    }

    [Theory]
    // The proxy served 128 handshakes in its 8 s window and allocated 10,000 B per handshake; the load made 40,000
    // round trips a second: 1,280,000 B over 320,000 messages.
    [InlineData("websocket", 4.0)]
    // Any other load: a request of the load is a request the proxy served, and LLRP's figure stands.
    [InlineData("wrk", 10_000.0)]
    public void TheProxysAllocationIsPerRequestOfTheLoad(string load, double expected)
    {
        var variables = $$"""{ "connections": 64, "path": "/ws", "loadThreads": 1, "threads": 1, "load": "{{load}}", "messageSize": 32 }""";
        File.WriteAllText(Path.Combine(_dir, "llrp-llhttp.r1.json"), $$"""
            {
              "returnCode": 0,
              "jobResults": {
                "properties": { "scenario": "llrp-llhttp" },
                "jobs": {
                  "load": { "results": { "wrk/rps/mean": 40000 }, "variables": {{variables}} },
                  "application": { "results": { "llrp/allocated-per-request": 10000, "llrp/requests": 128, "llrp/window": 8 } }
                }
              }
            }
            """);

        var (runs, _, _) = ResultsReader.ReadAll(_dir, skipDirectory: null);

        Assert.Equal(expected, Assert.Single(runs).Proxy!.AllocatedPerRequest!.Value, 6);
    }

    [Fact]
    public void TheFixedRateReportHasAMedianRowPerScenarioAndShareAndLeavesFailedRunsOut()
    {
        var p50 = Path.Combine(_dir, "p50");
        Directory.CreateDirectory(p50);
        File.WriteAllText(Path.Combine(p50, "nginx.r1.json"), Result("nginx", "{}", FixedRateResults(p999: 4.0)));
        File.WriteAllText(Path.Combine(p50, "nginx.r2.json"), Result("nginx", "{}", FixedRateResults(p999: 6.0)));
        File.WriteAllText(Path.Combine(p50, "nginx.r3.json"), Result("nginx", "{}", FixedRateResults(p999: 900.0), returnCode: 1));
        // A closed-loop run in the same folder is not a fixed-rate run.
        File.WriteAllText(Path.Combine(p50, "haproxy.r1.json"), Result("haproxy", "{}", """{ "wrk/rps/mean": 1000 }"""));

        var runs = FixedRate.Read(_dir);
        var markdown = FixedRate.Build(runs, plan: null, _dir, png: false);

        Assert.Equal(3, runs.Count);
        Assert.All(runs, r => Assert.Equal(("nginx", 50), (r.Scenario, r.Level)));
        Assert.Contains("| nginx | 5.00 |", markdown, StringComparison.Ordinal);
        Assert.Contains("**1 run(s) failed**", markdown, StringComparison.Ordinal);
        Assert.DoesNotContain("haproxy", markdown, StringComparison.Ordinal);
    }

    [Fact]
    public void AFoldedFixedRateStudyReadsAsTheFoldersItCameFrom()
    {
        foreach (var (percent, p999) in new[] { (25, 2.0), (90, 40.0) })
        {
            var folder = Path.Combine(_dir, $"p{percent}");
            Directory.CreateDirectory(folder);
            File.WriteAllText(Path.Combine(folder, "nginx.r1.json"), Result("nginx", "{}", FixedRateResults(p999)));
        }
        var before = FixedRate.Read(_dir).Select(r => (r.Scenario, r.Level, r.Figures["http/latency/99.9"])).ToList();

        Aggregate.Fold(_dir, prune: true);
        var after = FixedRate.Read(_dir).Select(r => (r.Scenario, r.Level, r.Figures["http/latency/99.9"])).ToList();

        Assert.Equal([("nginx", 25, 2.0), ("nginx", 90, 40.0)], before);
        Assert.Equal(before, after);
    }

    private static string FixedRateResults(double p999) => $$"""
        { "fixedrate/rate": 2000, "http/rps/mean": 2000, "http/latency/50": 1, "http/latency/90": 2, "http/latency/99": 3,
          "http/latency/99.9": {{p999.ToString(System.Globalization.CultureInfo.InvariantCulture)}}, "http/latency/max": 10, "fixedrate/missed": 0 }
        """;

    private static string Result(string scenario, string variables, string results, int returnCode = 0) => $$"""
        {
          "returnCode": {{returnCode}},
          "jobResults": {
            "properties": { "scenario": "{{scenario}}" },
            "jobs": { "load": { "results": {{results}}, "variables": {{variables}} } }
          }
        }
        """;
}
