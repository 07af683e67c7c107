using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Text;

namespace LLRP.Jobs;

/// <summary>The external tools a job runs (wrk, h2load, ab, nginx, HAProxy, the probe and the hook).</summary>
internal static partial class Tools
{
    public const int SigInt = 2;
    public const int SigTerm = 15;

    /// <summary>The tool named by the environment variable <paramref name="variable"/>, else
    /// <paramref name="defaultPath"/> when given (the servers' Debian paths: /usr/sbin is not on every PATH), else
    /// <paramref name="name"/> on PATH; a usage failure naming the Debian package when that is no executable file.
    /// <paramref name="environment"/> reads the variables (default: the process's).</summary>
    public static string Find(string variable, string name, string package, string? defaultPath = null,
        Func<string, string?>? environment = null)
    {
        var given = (environment ?? Environment.GetEnvironmentVariable)(variable);
        var path = string.IsNullOrEmpty(given) ? defaultPath ?? OnPath(name) : given;
        if (path is null || !IsExecutable(path))
        {
            throw JobFailure.BadUsage($"{(defaultPath is null ? name : path)} not found (apt-get install -y {package})");
        }
        return path;
    }

    /// <summary>True for a file with an execute bit (bash's -x, as root).</summary>
    public static bool IsExecutable(string path) =>
        File.Exists(path) && !OperatingSystem.IsWindows() && (File.GetUnixFileMode(path) & (UnixFileMode.UserExecute | UnixFileMode.GroupExecute | UnixFileMode.OtherExecute)) != 0;

    /// <summary>crank/: the folder of the job scripts and the servers' templates. crank uploads it whole to its agent and
    /// builds the jobs inside it (crank/Jobs/bin/...); the tests run the jobs from tests/Jobs.Tests/bin/..., under the
    /// repository root that holds it.</summary>
    public static string CrankDir { get; } = FindCrankDir();

    private static string FindCrankDir()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "jobs.sh")) && Directory.Exists(Path.Combine(dir.FullName, "Jobs")))
            {
                return dir.FullName;
            }
            if (File.Exists(Path.Combine(dir.FullName, "crank", "jobs.sh")))
            {
                return Path.Combine(dir.FullName, "crank");
            }
        }
        throw JobFailure.BadUsage($"no crank/ folder (with jobs.sh) above {AppContext.BaseDirectory}");
    }

    /// <summary>The first executable <paramref name="name"/> on PATH, or null.</summary>
    public static string? OnPath(string name) =>
        (Environment.GetEnvironmentVariable("PATH") ?? "").Split(':', StringSplitOptions.RemoveEmptyEntries)
            .Select(dir => Path.Combine(dir, name))
            .FirstOrDefault(File.Exists);

    /// <summary>Runs <paramref name="file"/> to its end with the job's own stdout and stderr; its exit status.</summary>
    public static int Run(string file, params IEnumerable<string> args)
    {
        using var run = ToolRun.Start(file, args, output: null);
        return run.WaitForExit();
    }

    /// <summary>Runs the executable named by the environment variable <paramref name="variable"/> (when set) with
    /// <paramref name="argument"/>: the runner's hooks and probes.</summary>
    public static void Hook(string variable, string argument)
    {
        var hook = Environment.GetEnvironmentVariable(variable);
        if (!string.IsNullOrEmpty(hook))
        {
            Run(hook, argument);
        }
    }

    /// <summary>Sends <paramref name="signal"/> to <paramref name="pid"/>; false when it is gone.</summary>
    public static bool Signal(int pid, int signal) => Kill(pid, signal) == 0;

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int Kill(int pid, int signal);
}

/// <summary>A run of load that the warm-up starts, waits for and ends early (<see cref="Warmup"/>): a tool's process
/// (<see cref="ToolRun"/>) or a job's own load in-process (the WebSocket job's).</summary>
internal interface ILoadRun : IDisposable
{
    bool HasExited { get; }

    /// <summary>Waits for the end; the exit status.</summary>
    int WaitForExit();

    /// <summary>Waits up to <paramref name="timeout"/>; true when it ended.</summary>
    bool WaitForExit(TimeSpan timeout);

    /// <summary>Asks the load to stop now (a tool gets <paramref name="signal"/>).</summary>
    void Signal(int signal);
}

/// <summary>One run of a tool: its stdout to a file (or the job's own stdout), stderr the job's.</summary>
internal sealed class ToolRun : ILoadRun
{
    private readonly Process _process;
    private readonly Task _copy;
    private readonly Stopwatch _clock = Stopwatch.StartNew();

    private ToolRun(Process process, Task copy)
    {
        _process = process;
        _copy = copy;
        // A job ended by a signal (crank or the runner stopping it) takes its tool along, as the bash jobs' exit traps did.
        AppDomain.CurrentDomain.ProcessExit += KillOnExit;
    }

    public int Id => _process.Id;

    public bool HasExited => _process.HasExited;

    /// <summary>Seconds since the start, whole.</summary>
    public int Seconds => (int)_clock.Elapsed.TotalSeconds;

    /// <summary>Starts <paramref name="file"/>; with <paramref name="output"/> its stdout goes to that file, and with
    /// <paramref name="errorsToo"/> its stderr as well (a shell's "&gt; FILE 2&gt;&amp;1"). <paramref name="input"/>, when
    /// given, is its whole stdin (then closed); else it reads the job's.</summary>
    public static ToolRun Start(string file, IEnumerable<string> args, string? output, bool errorsToo = false, string? input = null)
    {
        var info = new ProcessStartInfo(file)
        {
            UseShellExecute = false,
            RedirectStandardOutput = output is not null,
            RedirectStandardError = output is not null && errorsToo,
            RedirectStandardInput = input is not null,
        };
        foreach (var a in args)
        {
            info.ArgumentList.Add(a);
        }
        var process = Process.Start(info) ?? throw JobFailure.BadUsage($"could not start {file}");
        var copy = Task.CompletedTask;
        if (output is not null)
        {
            var to = File.Create(output);
            // Both streams into one file: whole reads, one at a time.
            async Task CopyAsync(Stream from)
            {
                var buffer = new byte[16 * 1024];
                int n;
                while ((n = await from.ReadAsync(buffer)) > 0)
                {
                    lock (to)
                    {
                        to.Write(buffer, 0, n);
                    }
                }
            }
            var copies = new List<Task> { Task.Run(() => CopyAsync(process.StandardOutput.BaseStream)) };
            if (info.RedirectStandardError)
            {
                copies.Add(Task.Run(() => CopyAsync(process.StandardError.BaseStream)));
            }
            copy = Task.Run(async () =>
            {
                try
                {
                    await Task.WhenAll(copies);
                }
                finally
                {
                    await to.DisposeAsync();
                }
            });
        }
        if (input is not null)
        {
            try
            {
                process.StandardInput.Write(input);
                process.StandardInput.Close();
            }
            catch (IOException)
            {
                // The tool ended (or closed its stdin) before reading it all: its output says what happened.
            }
        }
        return new ToolRun(process, copy);
    }

    /// <summary>Waits for the end (and for its output to be written); the exit status.</summary>
    public int WaitForExit()
    {
        _process.WaitForExit();
        _copy.GetAwaiter().GetResult();
        return _process.ExitCode;
    }

    /// <summary>Waits up to <paramref name="timeout"/>; true when it ended.</summary>
    public bool WaitForExit(TimeSpan timeout) => _process.WaitForExit(timeout);

    public void Signal(int signal)
    {
        if (!_process.HasExited)
        {
            Tools.Signal(_process.Id, signal);
        }
    }

    private void KillOnExit(object? sender, EventArgs e)
    {
        try
        {
            _process.Kill(entireProcessTree: true);
        }
        catch (InvalidOperationException)
        {
            // Already ended.
        }
    }

    public void Dispose()
    {
        AppDomain.CurrentDomain.ProcessExit -= KillOnExit;
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            _process.WaitForExit();
        }
        _process.Dispose();
    }
}
