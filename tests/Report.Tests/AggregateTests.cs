using System.Text.Json.Nodes;
using Xunit;

namespace LLRP.Analysis.Tests;

/// <summary>Report --aggregate: a sitting's per-run files, *.runs.json and run.json / sweep.json folded into sitting.json.</summary>
public sealed class AggregateTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("llrp-aggregate-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Fact]
    public void FoldsRunsWithTheirFileAndRoundWithoutSamplesAndEveryMeta()
    {
        WriteSitting();

        var (path, runs, metas) = Aggregate.Fold(_dir, prune: false);

        Assert.Equal(Path.Combine(_dir, "sitting.json"), path);
        Assert.Equal((4, 2), (runs, metas));
        var sitting = JsonNode.Parse(File.ReadAllText(path))!;
        var folded = sitting["runs"]!.AsArray();
        Assert.Equal(["c64/nginx.runs.json#1", "c64/nginx.runs.json#2", "c64/r1/llrp-llhttp.r1.json", "c64/r2/llrp-llhttp.r2.json"],
            folded.Select(r => (string?)r!["file"]));
        // A run in a round folder r<N> records its round; a *.runs.json element keeps what it had.
        Assert.Equal(["7", null, "1", "2"], folded.Select(r => (string?)r!["jobResults"]!["properties"]?["round"]));
        foreach (var run in folded)
        {
            var load = run!["jobResults"]!["jobs"]!["load"]!.AsObject();
            Assert.False(load.ContainsKey("measurements"));
            Assert.False(load.ContainsKey("metadata"));
            Assert.NotNull(load["results"]!["wrk/rps/mean"]);
        }
        // Numbers as they were written, and the untouched fields of each run.
        Assert.Contains("\"wrk/rps/mean\":1000.50", File.ReadAllText(path), StringComparison.Ordinal);
        Assert.Equal("llrp-llhttp", (string?)folded[2]!["jobResults"]!["properties"]!["scenario"]);
        var m = sitting["metas"]!.AsArray();
        Assert.Equal(["c64/r1/run.json", "sweep.json"], m.Select(x => (string?)x!["file"]));
        Assert.Equal("abc1234", (string?)m[0]!["content"]!["commit"]);
        Assert.Equal("analysis/sweep.sh --rounds 2", (string?)m[1]!["content"]!["command"]);
        // One line per run and per meta.
        var lines = File.ReadAllText(path).Split('\n');
        Assert.Equal("{\"runs\": [", lines[0]);
        Assert.Equal(["],", "\"metas\": ["], lines[5..7]);
        Assert.Equal(["]}", ""], lines[9..]);
    }

    [Fact]
    public void FoldingTwiceChangesNothingAndKeepsTheFirstFolding()
    {
        WriteSitting();
        Aggregate.Fold(_dir, prune: false);
        var first = File.ReadAllText(Path.Combine(_dir, "sitting.json"));

        Aggregate.Fold(_dir, prune: false);
        Assert.Equal(first, File.ReadAllText(Path.Combine(_dir, "sitting.json")));

        // A per-run file changed after folding: sitting.json keeps the run as it was folded.
        File.WriteAllText(Path.Combine(_dir, "c64", "r1", "llrp-llhttp.r1.json"), Run("llrp-llhttp", 1.0));
        Aggregate.Fold(_dir, prune: true);
        Assert.Equal(first, File.ReadAllText(Path.Combine(_dir, "sitting.json")));
        Aggregate.Fold(_dir, prune: true);
        Assert.Equal(first, File.ReadAllText(Path.Combine(_dir, "sitting.json")));
    }

    [Fact]
    public void PruneDeletesWhatWasFoldedRoundMachinesAndChartsAndKeepsLogs()
    {
        WriteSitting();

        Aggregate.Fold(_dir, prune: true);

        Assert.Equal(["c64/r1/logs/llrp-llhttp.r1.a1.json", "c64/r1/logs/llrp-llhttp.r1.log", "c64/r2/logs/run.json",
                "c64/sitting.json", "machine.txt", "notes.txt", "sitting.json"],
            Directory.EnumerateFiles(_dir, "*", SearchOption.AllDirectories)
                .Select(f => Path.GetRelativePath(_dir, f).Replace(Path.DirectorySeparatorChar, '/')).Order(StringComparer.Ordinal));
        // The first round's machine.txt is copied up; the emptied folders (c64/r3) are gone.
        Assert.Equal("machine of r1\n", File.ReadAllText(Path.Combine(_dir, "machine.txt")));
        Assert.False(Directory.Exists(Path.Combine(_dir, "c64", "r3")));
        // What it read is still in sitting.json: ResultsReader finds the same runs and metas.
        var (runs, metas, _) = ResultsReader.ReadAll(_dir, skipDirectory: null);
        Assert.Equal(4, runs.Count);
        Assert.Equal(2, metas.Count);
    }

    [Fact]
    public void PruneKeepsTheSittingsOwnMachine()
    {
        WriteSitting();
        File.WriteAllText(Path.Combine(_dir, "machine.txt"), "the sitting's machine\n");

        Aggregate.Fold(_dir, prune: true);

        Assert.Equal("the sitting's machine\n", File.ReadAllText(Path.Combine(_dir, "machine.txt")));
        Assert.False(File.Exists(Path.Combine(_dir, "c64", "r1", "machine.txt")));
    }

    [Fact]
    public void NothingToFoldIsRefused()
    {
        Directory.CreateDirectory(Path.Combine(_dir, "logs"));
        File.WriteAllText(Path.Combine(_dir, "logs", "nginx.r1.json"), Run("nginx", 1));
        File.WriteAllText(Path.Combine(_dir, "run.json"), "{}");

        var e = Assert.Throws<ReportException>(() => Aggregate.Fold(_dir, prune: true));

        Assert.StartsWith("no <scenario>.r<N>.json, *.runs.json or sitting.json under", e.Message, StringComparison.Ordinal);
        Assert.False(File.Exists(Path.Combine(_dir, "sitting.json")));
        Assert.True(File.Exists(Path.Combine(_dir, "run.json")));
    }

    [Theory]
    [InlineData(new string[0], 2)]
    [InlineData(new[] { "a", "b" }, 2)]
    [InlineData(new[] { "--prune", "/nonexistent/llrp" }, 2)]
    [InlineData(new[] { "--help" }, 0)]
    [InlineData(new[] { "DIR" }, 1)]
    [InlineData(new[] { "DIR", "--prune" }, 1)]
    public void ExitStatusOfItsCommandLine(string[] args, int status) =>
        Assert.Equal(status, ReportCli.Run(["--aggregate", .. args.Select(a => a == "DIR" ? _dir : a)]));

    [Theory]
    [InlineData("r2", "r10")]
    [InlineData("c32-s10/r1/machine.txt", "c256-s10/r1/machine.txt")]
    [InlineData("c64-s10-nopgo/r1", "c64-s10/r1")]
    [InlineData("c64-s10a", "c64-s10-")]
    [InlineData("a/r01", "a/r2")]
    public void VersionOrderPutsNumbersInTheirOrder(string before, string after)
    {
        Assert.True(VersionOrder.Instance.Compare(before, after) < 0);
        Assert.True(VersionOrder.Instance.Compare(after, before) > 0);
        Assert.Equal(0, VersionOrder.Instance.Compare(before, before));
    }

    /// <summary>
    /// A sitting as sweep.sh leaves it: rounds r1, r2 of one point, an earlier *.runs.json, run.json and sweep.json,
    /// logs (an earlier attempt, a run.json) that are no result, round machine.txt files and a chart.
    /// </summary>
    private void WriteSitting()
    {
        var point = Path.Combine(_dir, "c64");
        foreach (var r in new[] { "r1", "r2", "r3" })
        {
            Directory.CreateDirectory(Path.Combine(point, r, "logs"));
            File.WriteAllText(Path.Combine(point, r, "machine.txt"), $"machine of {r}\n");
        }
        File.WriteAllText(Path.Combine(point, "r1", "llrp-llhttp.r1.json"), Run("llrp-llhttp", 1000.50));
        File.WriteAllText(Path.Combine(point, "r2", "llrp-llhttp.r2.json"), Run("llrp-llhttp", 1100));
        File.WriteAllText(Path.Combine(point, "r1", "run.json"), """{ "commit": "abc1234", "origin": "nginx" }""");
        File.WriteAllText(Path.Combine(_dir, "sweep.json"), """{ "command": "analysis/sweep.sh --rounds 2" }""");
        File.WriteAllText(Path.Combine(point, "nginx.runs.json"),
            $"[{Run("nginx", 900).Replace("\"properties\": {", "\"properties\": { \"round\": \"7\",", StringComparison.Ordinal)}, {Run("nginx", 950, properties: false)}]");
        File.WriteAllText(Path.Combine(point, "r1", "logs", "llrp-llhttp.r1.a1.json"), Run("llrp-llhttp", 5));
        File.WriteAllText(Path.Combine(point, "r1", "logs", "llrp-llhttp.r1.log"), "log\n");
        File.WriteAllText(Path.Combine(point, "r2", "logs", "run.json"), "{}");
        File.WriteAllText(Path.Combine(point, "r3", "chart.png"), "png");
        // A sitting.json below the folder is not this folder's.
        File.WriteAllText(Path.Combine(point, "sitting.json"), """{ "runs": [], "metas": [] }""");
        File.WriteAllText(Path.Combine(_dir, "notes.txt"), "kept\n");
    }

    private static string Run(string scenario, double rps, bool properties = true) =>
        $$"""
        { "returnCode": 0,
          "jobResults": {
            {{(properties ? $"\"properties\": {{ \"scenario\": \"{scenario}\" }}," : "")}}
            "jobs": { "load": { "results": { "wrk/rps/mean": {{rps.ToString("0.00", System.Globalization.CultureInfo.InvariantCulture)}} },
                                "measurements": [ { "name": "wrk/rps", "value": 1 } ],
                                "metadata": [ { "name": "wrk/rps/mean", "description": "RPS" } ],
                                "variables": { "connections": 64, "path": "/" } } } } }
        """;
}
