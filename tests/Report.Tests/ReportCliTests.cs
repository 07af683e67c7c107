using Xunit;

namespace LLRP.Analysis.Tests;

/// <summary>Report's command line: each command reaches its report, bad usage is one line and exit status 2.</summary>
[CollectionDefinition("ReportConsole", DisableParallelization = true)]
public sealed class ReportConsoleCollection;

[Collection("ReportConsole")]
public sealed class ReportCliTests
{
    private static (int Code, string Out, string Err) Run(params string[] args)
    {
        var (stdout, stderr) = (Console.Out, Console.Error);
        var (o, e) = (new StringWriter(), new StringWriter());
        Console.SetOut(o);
        Console.SetError(e);
        try
        {
            return (ReportCli.Run(args), o.ToString(), e.ToString());
        }
        finally
        {
            Console.SetOut(stdout);
            Console.SetError(stderr);
        }
    }

    [Theory]
    [InlineData("", "report: give the results folder (see --help)")]
    [InlineData("a b", "report: unexpected argument 'b' (see --help)")]
    [InlineData("--frobnicate", "report: unknown option --frobnicate (see --help)")]
    [InlineData("--headline", "report: Required argument missing for command: '--headline'. (see --help)")]
    [InlineData("--index --print x", "report: unexpected argument 'x' (see --help)")]
    [InlineData("--tls-layer a b", "report: Option '--out' is required. (see --help)")]
    [InlineData("--stepped a --print-table", "report: unknown option --print-table (see --help)")]
    public void BadUsageIsOneLineAndExit2(string line, string message)
    {
        var (code, _, err) = Run(line.Split(' ', StringSplitOptions.RemoveEmptyEntries));
        Assert.Equal(2, code);
        Assert.Equal(message + "\n", err);
    }

    [Theory]
    [InlineData("--help", "--print-table")]
    [InlineData("--aggregate --help", "--prune")]
    [InlineData("--tls-layer -h", "--out <DIR> (REQUIRED)")]
    public void HelpIsEachCommandsOwn(string line, string option)
    {
        var (code, output, _) = Run(line.Split(' '));
        Assert.Equal(0, code);
        Assert.Contains(option, output, StringComparison.Ordinal);
    }

    /// <summary>The command's folder reaches its report, which names what it misses there (exit status 1).</summary>
    [Theory]
    [InlineData("--comparisons", "comparisons.json: not found")]
    [InlineData("--fixed-rate", "no fixed-rate results")]
    [InlineData("--stepped", "no stepped results")]
    [InlineData("", "no result files")]
    public void EachCommandReadsItsFolder(string command, string problem)
    {
        var dir = Directory.CreateTempSubdirectory("report-cli-").FullName;
        try
        {
            var (code, _, err) = Run([.. command.Split(' ', StringSplitOptions.RemoveEmptyEntries), dir, "--out", Path.Combine(dir, "out"), "--no-png"]);
            Assert.Equal(1, code);
            Assert.StartsWith("report: error: ", err, StringComparison.Ordinal);
            Assert.Contains(problem, err, StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }
}
