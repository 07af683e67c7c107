using Xunit;

namespace LLRP.Analysis.Tests;

/// <summary>The peers in the report: Caddy and h2o count with nginx and HAProxy for "vs best peer", the ratio to the
/// best median among the peers that ran at the point.</summary>
public sealed class PeersReportTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("llrp-report-peers-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Fact]
    public void TheBestPeerMayBeCaddyOrH2o()
    {
        Write("nginx", 1000);
        Write("haproxy", 1100);
        Write("caddy", 1500);
        Write("h2o", 2000);
        Write("llrp-llhttp", 3000);

        var (runs, metas, _) = ResultsReader.ReadAll(_dir, skipDirectory: null);
        var analysis = new Analysis(runs);
        var point = Assert.Single(analysis.Points);
        var markdown = new MarkdownReport(_dir, _dir, runs, metas, drawCharts: false).Build();

        Assert.Equal("h2o", analysis.BestNative(point)?.Scenario);
        Assert.Equal(1.5, analysis.VsBestNative(analysis.Get(point, "llrp-llhttp")!));
        // The peers come right after nginx and HAProxy, before the .NET proxies.
        Assert.Equal(["nginx", "haproxy", "caddy", "h2o", "llrp-llhttp"], analysis.Scenarios);
        Assert.Contains("best peer h2o 2,000 RPS.", markdown, StringComparison.Ordinal);
        Assert.Contains("| vs best peer |", markdown, StringComparison.Ordinal);
        Assert.DoesNotContain("nginx/HAProxy", markdown, StringComparison.Ordinal);
    }

    [Fact]
    public void WithoutAnyPeerTheRatioIsNa()
    {
        Write("llrp-llhttp", 3000);

        var (runs, metas, _) = ResultsReader.ReadAll(_dir, skipDirectory: null);
        var markdown = new MarkdownReport(_dir, _dir, runs, metas, drawCharts: false).Build();

        Assert.Contains("best peer n/a (no `nginx`/`haproxy`/`caddy`/`h2o` runs).", markdown, StringComparison.Ordinal);
        Assert.Contains("No `nginx`/`haproxy`/`caddy`/`h2o` runs: \"vs best peer\" is n/a.", markdown, StringComparison.Ordinal);
    }

    private void Write(string scenario, int rps) => File.WriteAllText(Path.Combine(_dir, $"{scenario}.r1.json"), $$"""
        {
          "returnCode": 0,
          "jobResults": {
            "properties": { "scenario": "{{scenario}}", "round": "1" },
            "jobs": {
              "load": { "results": { "wrk/rps/mean": {{rps}} },
                        "variables": { "connections": 64, "path": "/", "loadThreads": 1, "threads": 1, "presetHeaders": "plaintext", "load": "wrk" } },
              "application": { "results": { "proc/cpu/per-request": 10 } },
              "downstream": { "results": { "proc/cpu/per-request": 5 } }
            }
          }
        }
        """);
}
