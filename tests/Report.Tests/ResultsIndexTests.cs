using Xunit;

namespace LLRP.Analysis.Tests;

/// <summary>Report --index: docs/results.md's row for each folder of analysis/results/ and its place between the markers.</summary>
public sealed class ResultsIndexTests : IDisposable
{
    private readonly string _results = Directory.CreateTempSubdirectory("llrp-index-").FullName;

    public void Dispose() => Directory.Delete(_results, recursive: true);

    [Fact]
    public void ASittingGetsItsNoteAndRatiosAndAStudyItsTitleAndCommit()
    {
        var sitting = Folder("20261127-1716-2cpu-pin-proxy", "# Sitting of 17:16\n");
        Sitting(sitting, ("llrp-llhttp", 2000), ("nginx", 1600), ("haproxy", 1000), ("yarp", 800));
        // An A/B of other variants: no llrp-llhttp, so its title and nothing from the note.
        Sitting(Folder("20261127-0313-pgo-ab", "# PGO A/B\n"), ("nginx", 1000));
        Folder("20261128-0555-tls-handshake", "# TLS handshakes | resumed\n\nMeasured at **Commit**: `0123456789abcdef` and later.\n**Commit**: `1111111`\n");
        var soak = Folder("20261129-0310-soak", readme: null);
        File.WriteAllText(Path.Combine(soak, "machine.txt"), "nproc: 2\ncommit: fedcba9876543210 (clean)\n");

        var (table, missing) = ResultsIndex.Rows(_results);

        Assert.Equal(["20261129-0310-soak"], missing);
        Assert.Equal(
            [
                "| sitting (UTC) | kind | commit | command | topology | per point, llrp-llhttp ÷ best of nginx/HAProxy (RPS) / ÷ full YARP (RPS) / full YARP ÷ llrp-llhttp (CPU), or the study |",
                "|---|---|---|---|---|---|",
                "| [2026-11-27 03:13](../analysis/results/20261127-0313-pgo-ab/README.md) | pgo-ab | ? | `?` | ? | PGO A/B |",
                "| [2026-11-27 17:16](../analysis/results/20261127-1716-2cpu-pin-proxy/README.md) | 2cpu-pin-proxy | `f3d8547` (dirty) | " +
                    "`analysis/sweep.sh --pin-proxy --origin nginx --rounds 1 direct` | proxy alone on CPU 1, origin nginx | 64 c, 10 B: 1.25 (nginx) / 2.50 / n/a |",
                "| [2026-11-28 05:55](../analysis/results/20261128-0555-tls-handshake/README.md) | tls-handshake | `0123456` | see README | see README | TLS handshakes \\| resumed |",
                "| 2026-11-29 03:10 | soak | `fedcba9` | see README | see README | ? |",
                "",
            ],
            table.Split('\n'));
    }

    [Fact]
    public void TheRowsReplaceWhatIsBetweenTheMarkersAndNothingElse()
    {
        const string doc = "# Results\n\n<!-- index:start -->\n| old |\n| rows |\n<!-- index:end -->\n\n## Notes\n";

        Assert.Equal("# Results\n\n<!-- index:start -->\n| new |\n<!-- index:end -->\n\n## Notes\n", ResultsIndex.Replace(doc, "| new |\n"));
        // Written again with the same rows, the page is the same.
        Assert.Equal(doc, ResultsIndex.Replace(doc, "| old |\n| rows |\n"));
        // The last line gains the newline it lacked; markers must be whole lines.
        Assert.Equal("<!-- index:start -->\nx\n<!-- index:end -->\n", ResultsIndex.Replace("<!-- index:start -->\n<!-- index:end -->", "x\n"));
        Assert.Null(ResultsIndex.Replace("# Results\n<!-- index:start -->\n", "x\n"));
        Assert.Null(ResultsIndex.Replace("# Results\n <!-- index:start -->\n<!-- index:end -->\n", "x\n"));
    }

    private string Folder(string name, string? readme)
    {
        var dir = Path.Combine(_results, name);
        Directory.CreateDirectory(dir);
        if (readme is not null)
        {
            File.WriteAllText(Path.Combine(dir, "README.md"), readme);
        }
        return dir;
    }

    /// <summary>A sitting of one round at 64 connections, folded as it is committed.</summary>
    private static void Sitting(string dir, params (string Scenario, int Rps)[] runs)
    {
        var round = Path.Combine(dir, "c64-s10", "r1");
        Directory.CreateDirectory(round);
        foreach (var (scenario, rps) in runs)
        {
            File.WriteAllText(Path.Combine(round, $"{scenario}.r1.json"), $$"""
                { "returnCode": 0, "jobResults": { "properties": { "scenario": "{{scenario}}" },
                  "jobs": { "load": { "results": { "wrk/rps/mean": {{rps}} }, "variables": { "connections": 64, "path": "/" } } } } }
                """);
        }
        File.WriteAllText(Path.Combine(round, "run.json"),
            """{ "pinned": true, "pinning": "application=cpu1 load,downstream=cpu0", "origin": "nginx", "dirty": true }""");
        File.WriteAllText(Path.Combine(dir, "sweep.json"), """
            { "date": "2026-11-27T17:16:07Z", "commit": "f3d8547aaaabbbb",
              "command": "analysis/sweep.sh --pin-proxy --origin nginx --rounds 1 --out /tmp/sit3 --json-dir /tmp/j direct" }
            """);
        Aggregate.Fold(dir, prune: true);
    }
}
