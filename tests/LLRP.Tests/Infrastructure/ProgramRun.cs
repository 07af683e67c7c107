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
    internal static readonly TimeSpan s_cap = TimeSpan.FromSeconds(60);

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

    /// <summary>Starts LLRP and returns at once: the test drives it (requests, signals) and waits for its end.</summary>
    public static RunningProgram Start(IEnumerable<string> args)
    {
        var (process, output, errors) = Start(args, null);
        return new RunningProgram(process, output, errors);
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
                || LLRP.CommandLine.Known.Any(o => o.Name.Equals(name, StringComparison.OrdinalIgnoreCase)))
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

    internal static List<string> Snapshot(List<string> lines)
    {
        lock (lines)
        {
            return [.. lines];
        }
    }
}

/// <summary>An LLRP process a test drives; killed on dispose if it is still running.</summary>
internal sealed class RunningProgram(Process process, List<string> output, List<string> errors) : IAsyncDisposable
{
    public IReadOnlyList<string> Output => ProgramRun.Snapshot(output);

    public int ProcessId => process.Id;

    /// <summary>Waits (bounded) until standard output satisfies <paramref name="condition"/>; false if it never does.</summary>
    public async Task<bool> WaitForOutputAsync(Func<IReadOnlyList<string>, bool> condition)
    {
        var deadline = DateTime.UtcNow + ProgramRun.s_cap;
        while (!condition(Output))
        {
            if (process.HasExited || DateTime.UtcNow > deadline)
            {
                return condition(Output);
            }
            await Task.Delay(20);
        }
        return true;
    }

    /// <summary>The address of the first "Now listening on:" line (the listener of --urls http://127.0.0.1:0).</summary>
    public async Task<Uri> ListeningAsync()
    {
        const string marker = "Now listening on: ";
        Assert.True(await WaitForOutputAsync(lines => lines.Any(l => l.Contains(marker, StringComparison.Ordinal))),
            $"LLRP did not start: {string.Join(" | ", Output)} {string.Join(" | ", ProgramRun.Snapshot(errors))}");
        var line = Output.First(l => l.Contains(marker, StringComparison.Ordinal));
        return new Uri(line[(line.IndexOf(marker, StringComparison.Ordinal) + marker.Length)..].Trim());
    }

    /// <summary>Sends SIGTERM, as a service manager or `kill` does.</summary>
    public void Terminate()
    {
        using var kill = Process.Start("kill", ["-TERM", process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]);
        kill!.WaitForExit();
    }

    /// <summary>Waits (bounded) for the process to end on its own.</summary>
    public async Task<ProgramResult> WaitForExitAsync()
    {
        using var cap = new CancellationTokenSource(ProgramRun.s_cap);
        try
        {
            await process.WaitForExitAsync(cap.Token);
        }
        catch (OperationCanceledException)
        {
            Assert.Fail($"LLRP did not exit within {ProgramRun.s_cap.TotalSeconds} s: {string.Join(" | ", Output)}");
        }
        process.WaitForExit();
        return new ProgramResult(process.ExitCode, Output, ProgramRun.Snapshot(errors));
    }

    public async ValueTask DisposeAsync()
    {
        if (!process.HasExited)
        {
            process.Kill(entireProcessTree: true);
            await process.WaitForExitAsync();
        }
        process.Dispose();
    }
}
