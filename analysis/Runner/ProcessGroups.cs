using System.Diagnostics;
using System.Runtime.InteropServices;

namespace LLRP.Runner;

/// <summary>The processes of a run without crank (origin, proxy, load job, crank's agent), each started as its own
/// process group so that stopping it stops everything it started (wrapper scripts, probes, children); every group
/// still running is stopped on exit, Ctrl-C or SIGTERM.</summary>
internal sealed partial class ProcessGroups(Action<string> warn)
{
    private const int SigKill = 9, SigTerm = 15;
    private readonly List<Process> _started = [];
    private readonly Lock _lock = new();

    /// <summary>Each job in a session (and scheduler autogroup) of its own (--own-sessions), instead of one session.</summary>
    public bool OwnSessions { get; set; }

    // Not setsid by default: a new session is also a new scheduler autogroup wherever kernel.sched_autogroup_enabled is
    // 1 (Debian's default), and the scheduler then shares the cores between autogroups first and between their threads
    // second. With the load, the proxy and the origin in three autogroups on two cores, each gets about a third of the
    // box, and a proxy that runs two busy threads (llhttp's engine loops) waits for its group's turn: measured here,
    // llhttp's p99 rose from ~3.5 to 69-80 ms and every proxy lost 9-31 % of its RPS
    // (analysis/results/20261126-1525-sessions-ab). crank's agent starts its jobs in its own session, so one session is
    // also what crank measures. perl is Essential in Debian (perl-base); util-linux has no tool for setpgid.
    private static readonly string[] OwnGroup = ["perl", "-e", "setpgrp(0, 0) or die \"setpgrp: $!\\n\"; exec { $ARGV[0] } @ARGV or die \"exec $ARGV[0]: $!\\n\""];

    /// <summary>Runs <paramref name="command"/> in <paramref name="dir"/> as a new process group, its output in
    /// <paramref name="log"/>; the process's id is the group's.</summary>
    public Process Start(string log, string dir, IEnumerable<string> command)
    {
        // sh redirects and execs the launcher, which execs the command: one PID throughout.
        string[] launcher = OwnSessions ? ["setsid"] : OwnGroup;
        string[] shell = ["-c", "cd \"$1\" && l=\"$2\" && shift 2 && exec \"$@\" > \"$l\" 2>&1 < /dev/null", "sh", dir, log];
        var psi = new ProcessStartInfo("/bin/sh", [.. shell, .. launcher, .. command]) { UseShellExecute = false };
        var p = Process.Start(psi) ?? throw new InvalidOperationException("cannot start /bin/sh");
        lock (_lock)
        {
            _started.Add(p);
        }
        return p;
    }

    /// <summary>Until <paramref name="text"/> appears in <paramref name="log"/> (crank's readyStateText), the process
    /// exits, or <paramref name="timeout"/> passes.</summary>
    public bool WaitReady(Process p, string log, string text, TimeSpan timeout)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (DateTime.UtcNow < deadline)
        {
            if (File.Exists(log) && ReadShared(log).Contains(text, StringComparison.Ordinal))
            {
                return true;
            }
            if (p.HasExited)
            {
                warn($"process {p.Id} exited before printing '{text}'; last lines of {log}:");
                Console.Error.Write(Tail(log, 15));
                return false;
            }
            Thread.Sleep(100);
        }
        warn($"no '{text}' from process {p.Id} within {timeout.TotalSeconds:0}s; last lines of {log}:");
        Console.Error.Write(Tail(log, 15));
        return false;
    }

    /// <summary>SIGTERM to the group, up to <paramref name="seconds"/> to exit, then SIGKILL to what is left; returns
    /// the exit status (128 + signal when a signal ended it).</summary>
    public int Stop(Process? p, int seconds = 10)
    {
        if (p is null)
        {
            return 0;
        }
        _ = Kill(-p.Id, SigTerm);
        if (!p.WaitForExit(TimeSpan.FromSeconds(seconds)))
        {
            warn($"process group {p.Id} ignored SIGTERM for {seconds}s; killing it");
        }
        _ = Kill(-p.Id, SigKill);
        p.WaitForExit();
        lock (_lock)
        {
            _started.Remove(p);
        }
        return p.ExitCode;
    }

    /// <summary>Stops every group still running (5 s each before SIGKILL).</summary>
    public void StopAll()
    {
        List<Process> left;
        lock (_lock)
        {
            left = [.. _started];
        }
        foreach (var p in left)
        {
            Stop(p, 5);
        }
    }

    /// <summary>True when something accepts connections on 127.0.0.1:<paramref name="port"/>.</summary>
    public static bool PortBusy(int port)
    {
        try
        {
            using var c = new System.Net.Sockets.TcpClient();
            return c.ConnectAsync("127.0.0.1", port).Wait(TimeSpan.FromSeconds(2)) && c.Connected;
        }
        catch (AggregateException)
        {
            return false;
        }
    }

    /// <summary>Runs a command to its end (bounded by <paramref name="timeout"/>: then it is killed and the status is
    /// 124, as timeout(1) says) and returns its exit status and output (stdout + stderr). With <paramref name="log"/>
    /// the output is appended to that file instead, by the shell: no pipe stays open in a build server that
    /// outlives the command (dotnet build and publish leave some behind).</summary>
    public static (int Code, string Out) Run(IEnumerable<string> command, TimeSpan timeout, string? workDir = null, string? log = null)
    {
        var cmd = command.ToList();
        if (log is not null)
        {
            cmd = ["/bin/sh", "-c", "l=\"$1\" && shift && exec \"$@\" >> \"$l\" 2>&1 < /dev/null", "sh", log, .. cmd];
        }
        var psi = new ProcessStartInfo(cmd[0], cmd.Skip(1)) { UseShellExecute = false, RedirectStandardOutput = log is null, RedirectStandardError = log is null };
        psi.WorkingDirectory = workDir ?? "";
        using var p = Process.Start(psi) ?? throw new InvalidOperationException($"cannot start {cmd[0]}");
        var stdout = log is null ? p.StandardOutput.ReadToEndAsync() : Task.FromResult("");
        var stderr = log is null ? p.StandardError.ReadToEndAsync() : Task.FromResult("");
        if (!p.WaitForExit(timeout))
        {
            p.Kill(entireProcessTree: true);
            p.WaitForExit(TimeSpan.FromSeconds(10));
            return (124, "");
        }
        return (p.ExitCode, stdout.Result + stderr.Result);
    }

    /// <summary>Runs <paramref name="execute"/> (a whole run) so that Ctrl-C or SIGTERM stops every process it started
    /// (after <paramref name="warn"/> says why) and exits 130 or 143, as a shell does; every group is stopped at the end
    /// in any case.</summary>
    public int RunStoppingOnSignals(Func<int> execute, Action<string> warn)
    {
        void Abort(PosixSignalContext context, string what, int code)
        {
            context.Cancel = true;
            warn(what);
            StopAll();
            Environment.Exit(code);
        }
        using var interrupt = PosixSignalRegistration.Create(PosixSignal.SIGINT, c => Abort(c, "interrupted", 130));
        using var terminate = PosixSignalRegistration.Create(PosixSignal.SIGTERM, c => Abort(c, "terminated", 143));
        try
        {
            return execute();
        }
        finally
        {
            StopAll();
        }
    }

    /// <summary>Runs a command to its end on this console (its output is the user's to read, as a bash script's child's
    /// is) and returns its exit status. No bound: the command bounds itself (run-local.sh bounds every run).</summary>
    public static int RunAttached(IEnumerable<string> command, string? workDir = null)
    {
        var cmd = command.ToList();
        var psi = new ProcessStartInfo(cmd[0], cmd.Skip(1)) { UseShellExecute = false, WorkingDirectory = workDir ?? "" };
        using var p = Process.Start(psi) ?? throw new InvalidOperationException($"cannot start {cmd[0]}");
        p.WaitForExit();
        return p.ExitCode;
    }

    /// <summary>The process a job measures: the child it announced in <paramref name="log"/> with crank's
    /// "##ChildProcessId:&lt;pid&gt;" line (the last one), else the job's own process. A crank agent switches its CPU and
    /// memory tracking to that child too (docs/crank-offline.md): the nginx and HAProxy jobs run their server as one,
    /// and the job process itself (a waiting .NET host) is no part of the server's CPU or memory.</summary>
    public static int MeasuredPid(Process job, string log)
    {
        const string Marker = "##ChildProcessId:";
        var pid = job.Id;
        if (File.Exists(log))
        {
            foreach (var line in ReadShared(log).Split('\n'))
            {
                if (line.StartsWith(Marker, StringComparison.Ordinal) && int.TryParse(line.AsSpan(Marker.Length).Trim(), out var child))
                {
                    pid = child;
                }
            }
        }
        return pid;
    }

    /// <summary>The file's text while another process may be writing it.</summary>
    public static string ReadShared(string path)
    {
        using var f = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
        using var r = new StreamReader(f);
        return r.ReadToEnd();
    }

    public static string Tail(string path, int lines)
    {
        if (!File.Exists(path))
        {
            return "";
        }
        var all = ReadShared(path).TrimEnd('\n').Split('\n');
        return string.Join('\n', all.Skip(Math.Max(0, all.Length - lines))) + "\n";
    }

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int Kill(int pid, int signal);
}
