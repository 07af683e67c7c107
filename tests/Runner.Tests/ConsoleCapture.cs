using System.Text.RegularExpressions;

namespace LLRP.Runner.Tests;

/// <summary>The tests that run the runner's entry point share the process's console: one collection, one at a time.</summary>
[CollectionDefinition("Console", DisableParallelization = true)]
public sealed class ConsoleCollection;

internal static partial class ConsoleCapture
{
    /// <summary>Runs <paramref name="run"/> with stdout and stderr captured together: its exit status and that output.</summary>
    private static (int Code, string Output) Capture(Func<int> run)
    {
        var (stdout, stderr) = (Console.Out, Console.Error);
        var both = new StringWriter();
        Console.SetOut(both);
        Console.SetError(both);
        try
        {
            return (run(), both.ToString());
        }
        finally
        {
            Console.SetOut(stdout);
            Console.SetError(stderr);
        }
    }

    /// <summary>run-local with these arguments on a 2-CPU machine without crank: exit status and stdout + stderr, log times replaced by HH:MM:SS.</summary>
    public static (int Code, string Output) RunLocal(params string[] args)
    {
        var (code, output) = Capture(() => Runner.RunLocal.Run(args, Checkout.Root(), new Machine(2, null, null)));
        return (code, LogTime().Replace(output, "[run-local HH:MM:SS]"));
    }

    /// <summary>analysis/sweep.sh with these arguments: exit status and stdout + stderr, log stamps replaced.</summary>
    public static (int Code, string Output) Sweep(params string[] args)
    {
        var (code, output) = Capture(() => Runner.Sweep.Run(args, Checkout.Root()));
        return (code, SweepStamp().Replace(output, "[sweep HH:MM:SS +0s]"));
    }

    /// <summary>The comparisons with these arguments, on <paramref name="machine"/> (null: this one) with crank's agent
    /// expected on <paramref name="agentPort"/>: exit status and stdout + stderr, log times replaced by HH:MM:SS.</summary>
    public static (int Code, string Output) Comparisons(string root, Machine? machine, int agentPort, params string[] args)
    {
        var (code, output) = Capture(() => Runner.Comparisons.Run(args, root, machine, agentPort));
        return (code, ComparisonsTime().Replace(output, "[comparisons HH:MM:SS]"));
    }

    /// <summary>analysis/ab-options.sh with these arguments: exit status and stdout + stderr.</summary>
    public static (int Code, string Output) AbOptions(params string[] args) => Capture(() => Runner.AbOptions.Run(args, Checkout.Root()));

    [GeneratedRegex(@"\[comparisons \d\d:\d\d:\d\d\]")]
    private static partial Regex ComparisonsTime();

    [GeneratedRegex(@"\[sweep \d\d:\d\d:\d\d \+\d+s\]")]
    private static partial Regex SweepStamp();

    [GeneratedRegex(@"\[run-local \d\d:\d\d:\d\d\]")]
    private static partial Regex LogTime();
}
