namespace LLRP.Runner.Tests;

/// <summary>run-local.sh and analysis/sweep.sh --dry-run (and their usage errors) print what the bash runner printed for the same command line:
/// DryRun/caseN.args is the command line (shell words), caseN.out and caseN.rc the old runner's output and exit status,
/// recorded before the runner moved to C#.</summary>
[Collection("Console")]
public sealed class DryRunGoldenTests
{
    public static TheoryData<string> Cases()
    {
        var data = new TheoryData<string>();
        foreach (var f in Directory.GetFiles(Path.Combine(AppContext.BaseDirectory, "DryRun"), "case*.args").Order())
        {
            data.Add(Path.GetFileNameWithoutExtension(f));
        }
        return data;
    }

    public static TheoryData<string> SweepCases()
    {
        var data = new TheoryData<string>();
        foreach (var f in Directory.GetFiles(Path.Combine(AppContext.BaseDirectory, "SweepDryRun"), "case*.args").Order())
        {
            data.Add(Path.GetFileNameWithoutExtension(f));
        }
        return data;
    }

    /// <summary>analysis/sweep.sh --dry-run: the same plan, estimate and warnings as the bash sweep printed.</summary>
    [Theory]
    [MemberData(nameof(SweepCases))]
    public void SweepPlansAsTheBashSweep(string name)
    {
        var dir = Path.Combine(AppContext.BaseDirectory, "SweepDryRun");
        var args = Words(File.ReadAllText(Path.Combine(dir, name + ".args")).Trim());
        var expected = File.ReadAllText(Path.Combine(dir, name + ".out"));
        var expectedCode = int.Parse(File.ReadAllText(Path.Combine(dir, name + ".rc")).Trim(), System.Globalization.CultureInfo.InvariantCulture);

        var (code, output) = ConsoleCapture.Sweep(args);

        Assert.Equal(expected, output);
        Assert.Equal(expectedCode, code);
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public void SameOutputAsTheBashRunner(string name)
    {
        var dir = Path.Combine(AppContext.BaseDirectory, "DryRun");
        var args = Words(File.ReadAllText(Path.Combine(dir, name + ".args")).Trim());
        var expected = File.ReadAllText(Path.Combine(dir, name + ".out"));
        var expectedCode = int.Parse(File.ReadAllText(Path.Combine(dir, name + ".rc")).Trim(), System.Globalization.CultureInfo.InvariantCulture);

        var (code, output) = ConsoleCapture.RunLocal(args);

        Assert.Equal(expected, output);
        Assert.Equal(expectedCode, code);
    }

    [Fact]
    public void ThereAreCasesToCompare() => Assert.True(((IEnumerable<object[]>)Cases()).Count() >= 20);

    /// <summary>The recorded command lines hold plain words only (no quotes).</summary>
    private static string[] Words(string line) => line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
}
