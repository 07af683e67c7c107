using System.Globalization;
using System.Text.Json;
using Xunit;

namespace LLRP.Analysis.Tests;

/// <summary>The stepped comparison's report (crank/run-local.sh stepped's folders: s&lt;rate&gt;/&lt;scenario&gt;.r&lt;round&gt;.json).</summary>
public sealed class SteppedTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("llrp-stepped-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Fact]
    public void EachStepHasTheMedianOfItsRunsAndEachProxyItsFailingStep()
    {
        Write(2000, "nginx", 1, achieved: 2000, p99: 2.0, availability: 100, cpu: 20, memory: 10);
        Write(2000, "nginx", 2, achieved: 1990, p99: 4.0, availability: 100, cpu: 30, memory: 12);
        Write(2000, "yarp", 1, achieved: 1500, p99: 250, availability: 99.5, cpu: 100, memory: 90);
        Write(4000, "nginx", 1, achieved: 3000, p99: 80, availability: 100, cpu: 100, memory: 14);
        // A run whose load job failed is counted and left out of the medians.
        Write(4000, "nginx", 2, achieved: 1, p99: 9999, availability: 1, cpu: 1, memory: 1, returnCode: 1);
        // A closed-loop run in a step's folder is not a stepped run.
        File.WriteAllText(Path.Combine(_dir, "s4000", "haproxy.r1.json"), Result("haproxy", """{ "wrk/rps/mean": 1000 }""", null, 0));
        File.WriteAllText(Path.Combine(_dir, "stepped.json"), """
            { "failAchievedPercent": 95, "failAvailabilityPercent": 100, "command": "crank/stepped.sh --steps 2",
              "failedAt": { "yarp": { "rate": 2000, "reason": "achieved 1500/s of 2000/s offered" },
                            "nginx": { "rate": 4000, "reason": "achieved 3000/s of 4000/s offered" } } }
            """);

        var runs = Stepped.Read(_dir);
        var markdown = Stepped.Build(runs, ResultsReader.ReadPlan(_dir, "stepped.json"), _dir, png: true);

        Assert.Equal(5, runs.Count);
        Assert.DoesNotContain("haproxy", markdown, StringComparison.Ordinal);
        Assert.Contains("**1 run(s) failed**", markdown, StringComparison.Ordinal);
        // nginx passed 2,000/s, achieved at most 3,000/s, failed at 4,000/s; yarp passed nothing.
        Assert.Contains("| nginx | 2,000 | 3,000 | 4,000 | achieved 3000/s of 4000/s offered |", markdown, StringComparison.Ordinal);
        Assert.Contains("| yarp | - | 1,500 | 2,000 | achieved 1500/s of 2000/s offered |", markdown, StringComparison.Ordinal);
        // Medians of the rounds: p99 3 ms, CPU 25 %, memory 11 MB at 2,000/s; the failed run is not in the 4,000/s cell.
        Assert.Contains("| nginx | 3.00 | 80.0 |", markdown, StringComparison.Ordinal);
        Assert.Contains("| nginx | 25.0 | 100 |", markdown, StringComparison.Ordinal);
        Assert.Contains("| nginx | 11.0 | 14.0 |", markdown, StringComparison.Ordinal);
        Assert.Contains("| yarp | 99.500 | - |", markdown, StringComparison.Ordinal);
        foreach (var (_, _, file) in Stepped.Figures)
        {
            Assert.True(new FileInfo(Path.Combine(_dir, $"stepped-{file}.png")).Length > 0, file);
            Assert.Contains($"](stepped-{file}.png)", markdown, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void AFoldedStudyReadsAsTheFoldersItCameFrom()
    {
        Write(2000, "nginx", 1, achieved: 2000, p99: 2.0, availability: 100, cpu: 20, memory: 10);
        Write(4000, "nginx", 1, achieved: 3000, p99: 80, availability: 100, cpu: 100, memory: 14);
        Write(4000, "yarp", 2, achieved: 10, p99: 900, availability: 50, cpu: 100, memory: 90, returnCode: 1);
        var before = Stepped.Read(_dir).Select(r => (r.Scenario, r.Level, r.Round, r.Failed, r.Figures["h2load/rps/2xx"])).ToList();

        Aggregate.Fold(_dir, prune: true);
        var after = Stepped.Read(_dir).Select(r => (r.Scenario, r.Level, r.Round, r.Failed, r.Figures["h2load/rps/2xx"])).ToList();

        Assert.Equal(3, before.Count);
        Assert.Equal(before, after);
    }

    [Fact]
    public void AFolderWithoutStepsIsReportedAsSuch()
    {
        Assert.Equal(1, ReportCli.Run(["--stepped", _dir, "--no-png"]));
    }

    private void Write(int rate, string scenario, int round, double achieved, double p99, double availability, double cpu, double memory, int returnCode = 0)
    {
        var folder = Path.Combine(_dir, string.Create(CultureInfo.InvariantCulture, $"s{rate}"));
        Directory.CreateDirectory(folder);
        var load = JsonSerializer.Serialize(new Dictionary<string, double>
        {
            ["h2load/rate"] = rate,
            ["h2load/rps/2xx"] = achieved,
            ["http/latency/99"] = p99,
            ["h2load/availability"] = availability,
        });
        var app = JsonSerializer.Serialize(new Dictionary<string, double> { ["proc/cpu/raw/average"] = cpu, ["benchmarks/working-set"] = memory });
        File.WriteAllText(Path.Combine(folder, string.Create(CultureInfo.InvariantCulture, $"{scenario}.r{round}.json")), Result(scenario, load, app, returnCode));
    }

    private static string Result(string scenario, string load, string? application, int returnCode)
    {
        var app = application is null ? "" : """, "application": { "results": """ + application + " }";
        return $$"""
            {
              "returnCode": {{returnCode}},
              "jobResults": {
                "properties": { "scenario": "{{scenario}}" },
                "jobs": { "load": { "results": {{load}} }{{app}} }
              }
            }
            """;
    }
}
