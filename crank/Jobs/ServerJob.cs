using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Text.RegularExpressions;

namespace LLRP.Jobs;

/// <summary>A server job's environment (benchmarks.yml's environmentVariables). Where the bash jobs wrote
/// "${NAME=default}", a variable that is set but empty stays empty and is then refused, so that a forgotten
/// benchmarks.yml variable is never replaced by a default; where they wrote "${NAME:-default}", empty is the default.</summary>
internal sealed class ServerEnv(Func<string, string?> get)
{
    /// <summary>The process's own environment.</summary>
    public static ServerEnv Current { get; } = new(Environment.GetEnvironmentVariable);

    public Func<string, string?> Get => get;

    /// <summary>The value; <paramref name="fallback"/> only when the variable is unset ("${NAME=default}").</summary>
    public string UnsetOr(string name, string fallback) => get(name) ?? fallback;

    /// <summary>The value; <paramref name="fallback"/> when unset or empty ("${NAME:-default}").</summary>
    public string EmptyOr(string name, string fallback) => get(name) is { Length: > 0 } v ? v : fallback;

    /// <summary>The value when set and not empty, else null.</summary>
    public string? NonEmpty(string name) => get(name) is { Length: > 0 } v ? v : null;
}

/// <summary>What the server jobs (nginx, HAProxy, Caddy, h2o) share: the checks of the variables all take and the run of the
/// server as the job's child.</summary>
internal static partial class ServerJob
{
    // The defaults of the address variables are the local profile's (benchmarks.yml: the proxy on 8080, the origin on
    // 8081, both on loopback).
    public const string DefaultListenAddress = "127.0.0.1";
    public const string DefaultListenPort = "8080";
    public const string DefaultDownstreamAddress = "127.0.0.1";
    public const string DefaultDownstreamPort = "8081";

    /// <summary>READY_TIMEOUT's default, seconds to wait for the port before reporting failure: the bash jobs' 30 s, well
    /// inside crank's startTimeout (3 min) and the runner's ready wait.</summary>
    public const int DefaultReadyTimeoutSeconds = 30;

    public const string CleartextHttp1H2 =
        "PROTOCOLS=http1,h2 needs TLS (ALPN chooses); a cleartext port speaks http1 or prior-knowledge h2c (h2)";

    /// <summary>Prints <paramref name="help"/> for -h/--help (true: the job is done); the jobs take no other argument.</summary>
    public static bool Help(string[] args, string help)
    {
        if (args is ["-h" or "--help"])
        {
            Console.Out.Write(help);
            return true;
        }
        if (args.Length > 0)
        {
            throw JobFailure.BadUsage($"unknown argument '{args[0]}' (the job takes its settings from the environment; --help lists them)");
        }
        return false;
    }

    /// <summary>DOWNSTREAMS, "ADDRESS:PORT ADDRESS:PORT ...": the replicas, or null when unset or blank.</summary>
    public static IReadOnlyList<string>? Replicas(ServerEnv env)
    {
        var list = env.NonEmpty("DOWNSTREAMS")?.Split([' ', '\t', '\n'], StringSplitOptions.RemoveEmptyEntries);
        if (list is null || list.Length == 0)
        {
            return null;
        }
        foreach (var d in list)
        {
            if (!Replica().IsMatch(d))
            {
                throw JobFailure.BadUsage($"DOWNSTREAMS entry '{d}' is not ADDRESS:PORT");
            }
        }
        return list;
    }

    /// <summary>PROTOCOLS, what the listener speaks: http1 (also when unset or empty), h2 or http1,h2.</summary>
    public static string Protocols(ServerEnv env)
    {
        var protocols = env.EmptyOr("PROTOCOLS", "http1");
        return protocols is "http1" or "h2" or "http1,h2"
            ? protocols
            : throw JobFailure.BadUsage($"PROTOCOLS='{protocols}' is not http1, h2 or http1,h2");
    }

    /// <summary>TLS_CERT and TLS_KEY (serverScheme=https): null when TLS_CERT is unset or empty.</summary>
    public static (string Cert, string Key)? Tls(ServerEnv env)
    {
        if (env.NonEmpty("TLS_CERT") is not { } cert)
        {
            return null;
        }
        var key = env.NonEmpty("TLS_KEY");
        return Readable(cert) && key is not null && Readable(key)
            ? (cert, key)
            : throw JobFailure.BadUsage("TLS_CERT and TLS_KEY must be readable files");
    }

    /// <summary>DOWNSTREAM_TLS_CA (downstreamScheme=https): null when unset or empty.</summary>
    public static string? DownstreamCa(ServerEnv env) => env.NonEmpty("DOWNSTREAM_TLS_CA") switch
    {
        null => null,
        var ca when Readable(ca) => ca,
        _ => throw JobFailure.BadUsage("DOWNSTREAM_TLS_CA must be a readable file"),
    };

    /// <summary>LISTEN_ADDRESS must not be empty (the bash jobs' wording).</summary>
    public static void RequireListenAddress(string listenAddress)
    {
        if (listenAddress.Length == 0)
        {
            throw JobFailure.BadUsage("LISTEN_ADDRESS is empty (benchmarks.yml: serverListenAddress / serverAddress)");
        }
    }

    /// <summary>benchmarks.yml's address rules (crank/require-address.sh, which the runner applies too): its lines on
    /// stderr and exit 2 when an address breaks one.</summary>
    public static void RequireAddresses(string listenAddress, string downstreamAddress)
    {
        var status = Tools.Run(Path.Combine(Tools.CrankDir, "require-address.sh"),
            "--listen", $"LISTEN_ADDRESS={listenAddress}", "--target", $"DOWNSTREAM_ADDRESS={downstreamAddress}");
        if (status != 0)
        {
            throw JobFailure.Reported(status);
        }
    }

    /// <summary>True for one or more ASCII digits (bash's ^[0-9]+$).</summary>
    public static bool IsDigits(string value) => value.Length > 0 && value.All(char.IsAsciiDigit);

    /// <summary>READY_TIMEOUT in seconds (unset or empty: the default).</summary>
    public static int ReadyTimeout(ServerEnv env)
    {
        var value = env.EmptyOr("READY_TIMEOUT", $"{DefaultReadyTimeoutSeconds}");
        return IsDigits(value) && int.TryParse(value, out var seconds)
            ? seconds
            : throw JobFailure.BadUsage($"READY_TIMEOUT='{value}' is not a whole number of seconds");
    }

    /// <summary>True for a file this process can open for reading (bash's -r).</summary>
    public static bool Readable(string path)
    {
        try
        {
            using var f = File.OpenRead(path);
            return true;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException or NotSupportedException)
        {
            return false;
        }
    }

    [GeneratedRegex(@"^[^:\s]+:[0-9]+$")]
    private static partial Regex Replica();
}

/// <summary>The server binary of a job with the environment the job gives it: its configuration check, its version,
/// and the server itself. The bash jobs exec'd the server, so that the PID crank tracks was the server's; this job
/// starts it as a child instead and announces it with "##ChildProcessId:&lt;pid&gt;" on stderr, the line that switches
/// a crank agent's CPU and memory tracking and its stop signals to that PID (docs/crank-offline.md), and that the
/// runner reads for its /proc samples (analysis/Runner: ProcessGroups.MeasuredPid). The job passes the signals a
/// server gives a meaning to on to it, waits for it and exits with its status.</summary>
internal sealed class ServerTool(string path, IReadOnlyDictionary<string, string?> environment)
{
    // The signals passed on. nginx: TERM/INT fast stop, QUIT graceful stop, HUP reload, USR1 reopen logs; HAProxy: TERM
    // hard stop, USR1 soft stop. The job stays up until the server exits, so that its exit status is the job's.
    private static readonly (PosixSignal Signal, int Number)[] Forwarded =
    [
        (PosixSignal.SIGTERM, Tools.SigTerm), (PosixSignal.SIGINT, Tools.SigInt), (PosixSignal.SIGQUIT, 3),
        (PosixSignal.SIGHUP, 1), ((PosixSignal)10, 10), ((PosixSignal)12, 12),
    ];

    private readonly Lock _lock = new();
    private int _serverPid;
    private bool _serverGone;
    private int _pending;

    public string Path => path;

    /// <summary>The configuration check (nginx -t, haproxy -c) with the job's output; its own lines on stderr and its
    /// exit status as the job's when it refuses the configuration.</summary>
    public void Check(params string[] args)
    {
        using var p = Process.Start(Info(args, redirect: false)) ?? throw JobFailure.BadUsage($"could not start {path}");
        p.WaitForExit();
        if (p.ExitCode != 0)
        {
            throw JobFailure.Reported(p.ExitCode);
        }
    }

    /// <summary>What the binary prints for <paramref name="args"/> (stdout, then stderr), without the final line
    /// breaks, as bash's $(...) gives it.</summary>
    public string Output(params string[] args)
    {
        using var p = Process.Start(Info(args, redirect: true)) ?? throw JobFailure.BadUsage($"could not start {path}");
        var stderr = p.StandardError.ReadToEndAsync();
        var stdout = p.StandardOutput.ReadToEnd();
        p.WaitForExit();
        return (stdout + stderr.GetAwaiter().GetResult()).TrimEnd('\n');
    }

    /// <summary>Runs the server with <paramref name="args"/> as the job's child: "##ChildProcessId:PID" on stderr, then
    /// the ready line once <paramref name="address"/>:<paramref name="port"/> accepts connections; signals passed on;
    /// returns the server's exit status (128 + the signal's number when a signal ended it).</summary>
    public int Serve(string job, string[] args, string address, string port, int readyTimeoutSeconds)
    {
        // Registered before the start: a stop signal that arrives meanwhile reaches the server once it runs.
        var registrations = Forwarded.Select(f => PosixSignalRegistration.Create(f.Signal, c => Pass(c, f.Number))).ToList();
        try
        {
            using var server = Process.Start(Info(args, redirect: false)) ?? throw JobFailure.BadUsage($"could not start {path}");
            Console.Out.Flush();
            Console.Error.WriteLine($"##ChildProcessId:{server.Id}");
            Attach(server.Id);
            using var stop = new CancellationTokenSource();
            var probe = ReadyProbe.AnnounceAsync(job, address, port, readyTimeoutSeconds, Console.Out, Console.Error, stop.Token);
            server.WaitForExit();
            lock (_lock)
            {
                _serverGone = true;
            }
            stop.Cancel();
            probe.GetAwaiter().GetResult();
            return server.ExitCode;
        }
        finally
        {
            foreach (var r in registrations)
            {
                r.Dispose();
            }
        }
    }

    private void Pass(PosixSignalContext context, int number)
    {
        context.Cancel = true;
        lock (_lock)
        {
            if (_serverGone)
            {
                return;
            }
            if (_serverPid == 0)
            {
                _pending = number;
                return;
            }
            Tools.Signal(_serverPid, number);
        }
    }

    private void Attach(int pid)
    {
        lock (_lock)
        {
            _serverPid = pid;
            if (_pending != 0)
            {
                Tools.Signal(pid, _pending);
            }
        }
    }

    private ProcessStartInfo Info(string[] args, bool redirect)
    {
        var info = new ProcessStartInfo(path) { UseShellExecute = false, RedirectStandardOutput = redirect, RedirectStandardError = redirect };
        foreach (var a in args)
        {
            info.ArgumentList.Add(a);
        }
        foreach (var (name, value) in environment)
        {
            if (value is null)
            {
                info.Environment.Remove(name);
            }
            else
            {
                info.Environment[name] = value;
            }
        }
        return info;
    }
}
