using System.Diagnostics;
using LLRP.Tests.Infrastructure;

namespace LLRP.Tests;

/// <summary>The full YARP baseline's --loadBalancing: YARP's five policy names, case-insensitive; anything else is refused.</summary>
public sealed class BaselineOptionsTests
{
    // Start-up of the runtime on a busy machine; a hang guard, not a measurement.
    private static readonly TimeSpan s_cap = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task An_unknown_load_balancing_policy_is_one_line_and_exit_2()
    {
        var (exitCode, output, errors) = await RunYarpAsync("--urls", "http://127.0.0.1:0", "--downstream", "http://127.0.0.1:1", "--loadBalancing", "Fastest");

        Assert.True(exitCode == 2, $"exit {exitCode}: {output} {errors}");
        Assert.Equal("", output);
        Assert.Equal("YarpProxy: --loadBalancing 'Fastest' is not one of PowerOfTwoChoices, FirstAlphabetical, Random, RoundRobin, LeastRequests.", errors.Trim());
    }

    private static async Task<(int ExitCode, string Output, string Errors)> RunYarpAsync(params string[] args)
    {
        var start = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        start.ArgumentList.Add("exec");
        start.ArgumentList.Add(Baseline.Yarp.AssemblyPath());
        foreach (var a in args)
        {
            start.ArgumentList.Add(a);
        }
        using var process = Process.Start(start)!;
        var output = process.StandardOutput.ReadToEndAsync();
        var errors = process.StandardError.ReadToEndAsync();
        using var cap = new CancellationTokenSource(s_cap);
        try
        {
            await process.WaitForExitAsync(cap.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            Assert.Fail($"YarpProxy did not exit within {s_cap.TotalSeconds} s");
        }
        return (process.ExitCode, await output, await errors);
    }
}
