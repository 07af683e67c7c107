using System.Diagnostics;

namespace LLRP.Tests.Infrastructure;

/// <summary>What a program run printed and how it ended.</summary>
public sealed record ProgramResult(int ExitCode, IReadOnlyList<string> Output, IReadOnlyList<string> Errors)
{
    public override string ToString() =>
        $"exit {ExitCode}; stdout: [{string.Join(" | ", Output)}]; stderr: [{string.Join(" | ", Errors)}]";
}

/// <summary>
/// Runs LLRP as its own process (`dotnet exec LLRP.dll`, the assembly the test project builds next to itself), so
/// exit codes and everything printed are the real ones.
/// </summary>
internal static class ProgramRun
{
    // Start-up of the runtime and host on a busy machine; a hang guard, not a measurement.
    private static readonly TimeSpan s_cap = TimeSpan.FromSeconds(60);

    /// <summary>Runs to its end (killed and failed at the cap).</summary>
    public static async Task<ProgramResult> RunAsync(IEnumerable<string> args, IReadOnlyDictionary<string, string>? environment = null)
    {
        var (process, output, errors) = Start(args, environment);
        using (process)
        {
            using var cap = new CancellationTokenSource(s_cap);
            try
            {
                await process.WaitForExitAsync(cap.Token);
            }
            catch (OperationCanceledException)
            {
                process.Kill(entireProcessTree: true);
                Assert.Fail($"LLRP did not exit within {s_cap.TotalSeconds} s: {Snapshot(output)} {Snapshot(errors)}");
            }
            // The exit can be seen before the last redirected line; this second wait drains the streams.
            process.WaitForExit();
            return new ProgramResult(process.ExitCode, Snapshot(output), Snapshot(errors));
        }
    }

    /// <summary>Runs until a line of standard output contains <paramref name="ready"/>, then kills it.</summary>
    public static async Task<ProgramResult> RunUntilAsync(IEnumerable<string> args, string ready, IReadOnlyDictionary<string, string>? environment = null)
    {
        var (process, output, errors) = Start(args, environment);
        using (process)
        {
            var deadline = DateTime.UtcNow + s_cap;
            while (!Snapshot(output).Any(l => l.Contains(ready, StringComparison.Ordinal)) && !process.HasExited && DateTime.UtcNow < deadline)
            {
                await Task.Delay(50);
            }
            var exited = process.HasExited;
            if (!exited)
            {
                process.Kill(entireProcessTree: true);
            }
            await process.WaitForExitAsync();
            return new ProgramResult(exited ? process.ExitCode : -1, Snapshot(output), Snapshot(errors));
        }
    }

    private static (Process, List<string>, List<string>) Start(IEnumerable<string> args, IReadOnlyDictionary<string, string>? environment)
    {
        var assembly = Path.Combine(AppContext.BaseDirectory, "LLRP.dll");
        var info = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
            UseShellExecute = false,
        };
        info.ArgumentList.Add("exec");
        info.ArgumentList.Add(assembly);
        foreach (var arg in args)
        {
            info.ArgumentList.Add(arg);
        }
        info.Environment["ASPNETCORE_ENVIRONMENT"] = "Production";
        info.Environment["DOTNET_ENVIRONMENT"] = "Production";
        // Whatever the runner's environment holds, only the variables a test names may be LLRP options.
        foreach (var name in info.Environment.Keys.ToList())
        {
            if (name.Equals("ASPNETCORE_URLS", StringComparison.OrdinalIgnoreCase)
                || LLRP.ProxyOptions.Known.Any(o => o.Name.Equals(name, StringComparison.OrdinalIgnoreCase)))
            {
                info.Environment.Remove(name);
            }
        }
        foreach (var (name, value) in environment ?? new Dictionary<string, string>())
        {
            info.Environment[name] = value;
        }

        var process = Process.Start(info) ?? throw new InvalidOperationException($"dotnet could not start {assembly}");
        List<string> output = [];
        List<string> errors = [];
        process.OutputDataReceived += (_, e) => Add(output, e.Data);
        process.ErrorDataReceived += (_, e) => Add(errors, e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return (process, output, errors);
    }

    private static void Add(List<string> lines, string? line)
    {
        if (line is null)
        {
            return;
        }
        lock (lines)
        {
            lines.Add(line);
        }
    }

    private static List<string> Snapshot(List<string> lines)
    {
        lock (lines)
        {
            return [.. lines];
        }
    }
}
