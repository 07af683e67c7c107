using Xunit;

namespace LLRP.Analysis.Tests;

/// <summary>Which files of a results folder count as runs.</summary>
public sealed class ResultsReaderTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("llrp-report-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Fact]
    public void KeepsTheRunRunLocalKeptAndSkipsEarlierAttemptsUnderLogs()
    {
        // A run that was unsteady once and run again: run-local.sh keeps attempt 2 beside logs/ (recording both
        // verdicts) and leaves attempt 1 under logs/.
        var round = Path.Combine(_dir, "c64-s10", "r1");
        Directory.CreateDirectory(Path.Combine(round, "logs"));
        File.WriteAllText(Path.Combine(round, "yarp.r1.json"), RunJson(rps: 17_000, attempts: 2, steady: 1));
        File.WriteAllText(Path.Combine(round, "logs", "yarp.r1.a1.json"), RunJson(rps: 19_000, attempts: 1, steady: 0));

        var (runs, _, _) = ResultsReader.ReadAll(_dir, skipDirectory: null);

        var run = Assert.Single(runs);
        Assert.Equal(Path.Combine(round, "yarp.r1.json"), run.File);
        Assert.Equal(17_000d, run.Load.Rps);
        Assert.Equal(2, run.Attempts);
    }

    [Theory]
    [InlineData("c64-s10/r1/logs/yarp.r1.a1.json", true)]
    [InlineData("logs/x.r1.json", true)]
    [InlineData("c64-s10/r1/yarp.r1.json", false)]
    [InlineData("catalogs/yarp.r1.json", false)]
    public void LogsFolderIsRecognisedByItsName(string relative, bool underLogs) =>
        Assert.Equal(underLogs, ResultsReader.IsUnderLogs(_dir, Path.Combine(_dir, relative)));

    [Theory]
    [InlineData("""{ "pinned": true, "pinning": "application=cpu1 load,downstream=cpu0" }""", "application=cpu1 load,downstream=cpu0")]
    [InlineData("""{ "pinned": true }""", "yes")]
    [InlineData("""{ "pinned": false }""", "no")]
    public void PinningIsReadFromRunJsonOfEitherAge(string runJson, string pinning)
    {
        File.WriteAllText(Path.Combine(_dir, "run.json"), runJson);

        var (_, metas, _) = ResultsReader.ReadAll(_dir, skipDirectory: null);

        Assert.Equal(pinning, Assert.Single(metas).Pinned);
    }

    [Theory]
    [InlineData("""{ "origin": "nginx" }""", "nginx")]
    [InlineData("""{ "origin": "downstream" }""", "downstream")]
    [InlineData("""{ "pinned": false }""", "downstream")]
    public void OriginIsReadFromRunJsonAndIsDownstreamWhenNotRecorded(string runJson, string origin)
    {
        File.WriteAllText(Path.Combine(_dir, "run.json"), runJson);

        var (_, metas, _) = ResultsReader.ReadAll(_dir, skipDirectory: null);

        Assert.Equal(origin, Assert.Single(metas).Origin);
    }

    [Fact]
    public void SittingJsonIsReadAsTheFilesItFolded()
    {
        // analysis/aggregate.sh's one file: each run under the path it came from (its round folder names its round),
        // each run.json / sweep.json under its own name.
        var run = RunJson(rps: 21_000, attempts: 1, steady: 1).ReplaceLineEndings(" ");
        File.WriteAllText(Path.Combine(_dir, "sitting.json"), $$"""
            { "runs": [ {{run.TrimEnd()[..^1]}}, "file": "c64-s10/r2/yarp.r1.json" } ],
              "metas": [ { "file": "c64-s10/r2/run.json", "content": { "origin": "nginx", "commit": "abc1234" } },
                         { "file": "sweep.json", "content": { "command": "analysis/sweep.sh --rounds 1" } } ] }
            """);

        var (runs, metas, ignored) = ResultsReader.ReadAll(_dir, skipDirectory: null);

        var r = Assert.Single(runs);
        Assert.Equal("2", r.Round);
        Assert.Equal(21_000d, r.Load.Rps);
        Assert.Equal(["nginx", null], metas.OrderBy(m => m.File, StringComparer.Ordinal).Select(m => m.Origin));
        Assert.Contains(metas, m => m.IsSweep && m.Commands.SequenceEqual(["analysis/sweep.sh --rounds 1"]));
        Assert.Empty(ignored);
    }

    [Fact]
    public void SittingJsonWithoutContentIsRefusedByName()
    {
        File.WriteAllText(Path.Combine(_dir, "sitting.json"), """{ "runs": [], "metas": [ { "file": "run.json" } ] }""");

        var e = Assert.Throws<ReportException>(() => ResultsReader.ReadAll(_dir, skipDirectory: null));

        Assert.Contains("metas[1]", e.Message, StringComparison.Ordinal);
    }

    private static string RunJson(int rps, int attempts, int steady) => $$"""
        {
          "returnCode": 0,
          "jobResults": {
            "properties": { "scenario": "yarp", "steadyAttempts": "{{attempts}}", "steadyHistory": "attempt {{attempts}}: steady {{steady}}" },
            "jobs": { "load": { "results": { "wrk/rps/mean": {{rps}} }, "variables": { "connections": 64, "path": "/" } } }
          }
        }
        """;
}
