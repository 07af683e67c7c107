using System.Text.RegularExpressions;

namespace LLRP.Runner.Tests;

/// <summary>The tests that run the runner's entry point share the process's console: one collection, one at a time.</summary>
[CollectionDefinition("Console", DisableParallelization = true)]
public sealed class ConsoleCollection;

internal static partial class ConsoleCapture
{
    /// <summary>run-local with these arguments on a 2-CPU machine without crank: exit status and stdout + stderr, log times replaced by HH:MM:SS.</summary>
    public static (int Code, string Output) RunLocal(params string[] args)
    {
        var (stdout, stderr) = (Console.Out, Console.Error);
        var both = new StringWriter();
        Console.SetOut(both);
        Console.SetError(both);
        try
        {
            var code = Runner.RunLocal.Run(args, Program.RepositoryRoot(), new Machine(2, null, null));
            return (code, LogTime().Replace(both.ToString(), "[run-local HH:MM:SS]"));
        }
        finally
        {
            Console.SetOut(stdout);
            Console.SetError(stderr);
        }
    }

    /// <summary>analysis/sweep.sh with these arguments: exit status and stdout + stderr, log stamps replaced.</summary>
    public static (int Code, string Output) Sweep(params string[] args)
    {
        var (stdout, stderr) = (Console.Out, Console.Error);
        var both = new StringWriter();
        Console.SetOut(both);
        Console.SetError(both);
        try
        {
            var code = Runner.Sweep.Run(args, Program.RepositoryRoot());
            return (code, SweepStamp().Replace(both.ToString(), "[sweep HH:MM:SS +0s]"));
        }
        finally
        {
            Console.SetOut(stdout);
            Console.SetError(stderr);
        }
    }

    /// <summary>The comparisons with these arguments, on <paramref name="machine"/> (null: this one) with crank's agent
    /// expected on <paramref name="agentPort"/>: exit status and stdout + stderr, log times replaced by HH:MM:SS.</summary>
    public static (int Code, string Output) Comparisons(string root, Machine? machine, int agentPort, params string[] args)
    {
        var (stdout, stderr) = (Console.Out, Console.Error);
        var both = new StringWriter();
        Console.SetOut(both);
        Console.SetError(both);
        try
        {
            var code = Runner.Comparisons.Run(args, root, machine, agentPort);
            return (code, ComparisonsTime().Replace(both.ToString(), "[comparisons HH:MM:SS]"));
        }
        finally
        {
            Console.SetOut(stdout);
            Console.SetError(stderr);
        }
    }

    [GeneratedRegex(@"\[comparisons \d\d:\d\d:\d\d\]")]
    private static partial Regex ComparisonsTime();

    [GeneratedRegex(@"\[sweep \d\d:\d\d:\d\d \+\d+s\]")]
    private static partial Regex SweepStamp();

    [GeneratedRegex(@"\[run-local \d\d:\d\d:\d\d\]")]
    private static partial Regex LogTime();
}
