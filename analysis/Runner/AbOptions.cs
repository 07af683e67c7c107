using System.CommandLine;
using System.Globalization;
using System.Runtime.InteropServices;
using System.Text;

namespace LLRP.Runner;

/// <summary>analysis/ab-options.sh: an interleaved A/B of llrp-llhttp configurations that differ only in the proxy's
/// environment. One published build, fresh origin and proxy per run, rounds in Rounds.Order; each run takes the load
/// lock for itself, so other loads on a shared machine can run between runs, never during one.</summary>
internal static class AbOptions
{

    private static string Env(string name, string fallback) =>
        Environment.GetEnvironmentVariable(name) is { Length: > 0 } v ? v : fallback;

    private static int EnvInt(string name, int fallback) =>
        int.TryParse(Environment.GetEnvironmentVariable(name), NumberStyles.None, CultureInfo.InvariantCulture, out var v) ? v : fallback;

    private static readonly Option<bool> SummaryOnly =
        Cli.Flag("--summary", "run nothing: write OUT_DIR/summary.tsv again from the runs already there (ROUNDS as when they ran)");
    private static readonly Argument<string> OutDir = new("OUT_DIR") { Arity = ArgumentArity.ZeroOrOne, Description = "the results folder" };
    private static readonly Argument<string[]> Configs = new("NAME=K=V...")
    {
        Arity = ArgumentArity.ZeroOrMore,
        Description = "a configuration: NAME='K=V K=V', its extra environment for the proxy ('' = the defaults); a word LLRP_DIR=PATH runs " +
            "that published build instead of the shared one, so two commits can be compared in one sitting; a word CLIENT=NAME runs that " +
            "forwarding variant (LLRP's --client; default llhttp)",
    };

    internal static readonly Command Command = Cli.Command("analysis/ab-options.sh", """
        Interleaved A/B of llrp-llhttp configurations that differ only in the proxy's environment (LLRP options such as
        inlineScheduling=true and runtime settings such as DOTNET_ThreadPool_UnfairSemaphoreSpinLimit=0): one published
        build, fresh origin and proxy per run, rounds interleaved in the runner's order (round 1 runs A B C, round 2
        A C B, round 3 C A B, ...). Each run takes the load lock for itself, so other loads on a shared machine can run
        between runs, never during one.
        Environment: ROUNDS (3), WARMUP_S (15), DURATION_S (10), CONNECTIONS (64), URL_PATH (/; Downstream answers
        /?s=N with N body bytes), REQUEST_BODY_SIZE (0 = GET; N: a POST with an N-byte Content-Length body, as
        run-local's --request-body-size), PROXY_PORT (9780), DS_PORT (9781), LLRP_DIR and DS_DIR (published builds; default:
        published here into OUT_DIR/bin from this checkout), LOCK (/tmp/llrp-load.lock), LOCK_WAIT_S (900: a run
        that cannot take the lock by then is skipped and reported).
        Writes OUT_DIR/<NAME>.r<round>.{warmup,wrk,proc,origin,proxy,downstream}.txt and OUT_DIR/summary.tsv: per run
        requests, RPS, proxy CPU us/request (utime+stime of every thread from /proc over the measured wrk run / wrk's
        requests), the origin's CPU us/request over the same window (a control for the machine's speed during the run,
        docs/methodology.md "The origin as a control"), voluntary and involuntary context switches per request, the
        runtime's socket engine threads (".NET Sockets") and their share of the proxy's CPU, LLHttp's epoll engine threads
        ("LLHttp epoll N": engineThreads when socketEngine=epoll), wrk's 99th percentile latency in ms; then the median
        per configuration.
        """, SummaryOnly, OutDir, Configs);

    public static int Run(IReadOnlyList<string> args, string root) =>
        // --run LABEL CONFIG: one run, as the sitting calls it again under the load lock.
        args is ["--run", ..] ? (args.Count == 3 ? RunOne(args[1], args[2], root) : 2) : Cli.Run("ab-options", Command, args, p => Sitting(p, root));

    private static int Sitting(ParseResult parsed, string root)
    {
        var summaryOnly = parsed.GetValue(SummaryOnly);
        var outDir = parsed.GetValue(OutDir) ?? throw new UsageException("give OUT_DIR and at least one configuration NAME='K=V ...'");
        var configs = parsed.GetValue(Configs) ?? [];
        if (configs.Length == 0)
        {
            throw new UsageException("name at least one configuration NAME='K=V ...'");
        }
        if (configs.FirstOrDefault(c => !c.Contains('=')) is { } bad)
        {
            throw new UsageException($"'{bad}' is not NAME='K=V ...'");
        }
        // Defaults: 3 rounds of 15 s warm-up + 10 s measured at 64 connections; ports away from run-local's; a run that
        // cannot take the load lock within 15 min is skipped and reported.
        var rounds = EnvInt("ROUNDS", 3);
        var (warmup, duration) = (EnvInt("WARMUP_S", 15), EnvInt("DURATION_S", 10));
        var (lockFile, lockWait) = (Env("LOCK", "/tmp/llrp-load.lock"), EnvInt("LOCK_WAIT_S", 900));
        var output = Directory.CreateDirectory(outDir).FullName;
        var llrpDir = Env("LLRP_DIR", "");
        var dsDir = Env("DS_DIR", "");
        if (!summaryOnly && (llrpDir.Length == 0 || dsDir.Length == 0))
        {
            var log = Path.Combine(output, "publish.log");
            File.WriteAllText(log, "");
            (llrpDir, dsDir) = (Path.Combine(output, "bin", "llrp"), Path.Combine(output, "bin", "ds"));
            foreach (var (project, dir) in new[] { ("src/LLRP", llrpDir), ("src/Downstream", dsDir) })
            {
                if (ProcessGroups.Run(["dotnet", "publish", Path.Combine(root, project), "-c", "Release", "-o", dir], TimeSpan.FromMinutes(15), log: log).Code != 0)
                {
                    Console.Error.WriteLine($"ab-options: publishing {project} failed (see {log})");
                    return 1;
                }
            }
        }
        if (Environment.GetEnvironmentVariable("DOTNET_ROOT") is not { Length: > 0 } && Shell.Which("dotnet") is { } dotnet)
        {
            Environment.SetEnvironmentVariable("DOTNET_ROOT", Path.GetDirectoryName(new FileInfo(dotnet).ResolveLinkTarget(true)?.FullName ?? dotnet));
        }
        foreach (var (k, v) in new[] { ("OUT", output), ("LLRP_DIR", llrpDir), ("DS_DIR", dsDir) })
        {
            Environment.SetEnvironmentVariable(k, v);
        }
        for (var r = 1; r <= rounds && !summaryOnly; r++)
        {
            foreach (var config in Rounds.Order(r, configs))
            {
                var eq = config.IndexOf('=');
                var label = $"{config[..eq]}.r{r}";
                if (ProcessGroups.RunAttached(["flock", "-w", $"{lockWait}", lockFile, "timeout", $"{warmup + duration + 90}",
                    Path.Combine(root, "crank", "runner.sh"), "ab-options", "--run", label, config[(eq + 1)..]]) == 0)
                {
                    Console.Out.WriteLine($"{label} done");
                }
                else
                {
                    Console.Error.WriteLine($"ab-options: run {label} failed or did not get the lock within {lockWait} s");
                }
            }
        }
        var tsv = Summary(output, configs, rounds, int.Parse(ProcessGroups.Run(["getconf", "CLK_TCK"], TimeSpan.FromSeconds(5)).Out.Trim(), CultureInfo.InvariantCulture));
        File.WriteAllText(Path.Combine(output, "summary.tsv"), tsv);
        Console.Out.Write(ProcessGroups.Run(["column", "-t", "-s", "\t", Path.Combine(output, "summary.tsv")], TimeSpan.FromSeconds(10)).Out);
        return 0;
    }

    /// <summary>One run (under the lock): origin, proxy with the configuration's environment, warm-up, measured wrk
    /// run between two /proc samples; the origin and the proxy are stopped however the run ends.</summary>
    private static int RunOne(string label, string envWords, string root)
    {
        var output = Env("OUT", ".");
        var (dsPort, proxyPort) = (Env("DS_PORT", "9781"), Env("PROXY_PORT", "9780"));
        var (warmup, duration, connections) = (EnvInt("WARMUP_S", 15), EnvInt("DURATION_S", 10), Env("CONNECTIONS", "64"));
        var groups = new ProcessGroups(m => Console.Error.WriteLine($"ab-options: {m}"));
        using var terminate = PosixSignalRegistration.Create(PosixSignal.SIGTERM, c =>
        {
            c.Cancel = true;
            groups.StopAll();
            Environment.Exit(143);
        });
        try
        {
            string F(string kind) => Path.Combine(output, $"{label}.{kind}.txt");
            var origin = groups.Start(F("downstream"), output,
                ["env", "DOTNET_TieredPGO=1", Path.Combine(Env("DS_DIR", ""), "Downstream"), "--urls", $"http://127.0.0.1:{dsPort}"]);
            if (!WaitPort(dsPort))
            {
                return 1;
            }
            var (llrpDir, client) = (Env("LLRP_DIR", ""), "llhttp");
            List<string> env = [];
            foreach (var word in envWords.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries))
            {
                if (word.StartsWith("LLRP_DIR=", StringComparison.Ordinal))
                {
                    llrpDir = word["LLRP_DIR=".Length..];
                }
                else if (word.StartsWith("CLIENT=", StringComparison.Ordinal))
                {
                    client = word["CLIENT=".Length..];
                }
                else
                {
                    env.Add(word);
                }
            }
            var proxy = groups.Start(F("proxy"), output, ["env", .. env, Path.Combine(llrpDir, "LLRP"), "--urls", $"http://127.0.0.1:{proxyPort}",
                "--downstream", $"http://127.0.0.1:{dsPort}", "--client", client]);
            if (!WaitPort(proxyPort))
            {
                return 1;
            }
            var url = $"http://127.0.0.1:{proxyPort}{Env("URL_PATH", "/")}";
            // A POST with a Content-Length body of REQUEST_BODY_SIZE bytes, built once by run-local's request script.
            var bodySize = EnvInt("REQUEST_BODY_SIZE", 0);
            string[] request = bodySize > 0
                ? ["-s", Path.Combine(root, "crank", "wrk-request.lua"), url, "--", bodySize.ToString(CultureInfo.InvariantCulture), "content-length"]
                : [url];
            bool Wrk(string kind, int seconds)
            {
                File.WriteAllText(F(kind), "");
                return ProcessGroups.Run(["timeout", $"{seconds + 10}", "wrk", "-t1", $"-c{connections}", $"-d{seconds}s", "--latency", .. request],
                    TimeSpan.FromSeconds(seconds + 20), log: F(kind)).Code == 0;
            }
            if (!Wrk("warmup", warmup))
            {
                return 1;
            }
            File.WriteAllText(F("proc"), Sample(proxy.Id) + "\n");
            File.WriteAllText(F("origin"), Sample(origin.Id) + "\n");
            if (!Wrk("wrk", duration))
            {
                return 1;
            }
            File.AppendAllText(F("proc"), Sample(proxy.Id) + "\n");
            File.AppendAllText(F("origin"), Sample(origin.Id) + "\n");
            return 0;
        }
        finally
        {
            groups.StopAll();
        }
    }

    /// <summary>Until the server answers on 127.0.0.1:PORT, at most 30 s.</summary>
    private static bool WaitPort(string port)
    {
        for (var i = 0; i < 300; i++)
        {
            if (ProcessGroups.Run(["curl", "-fsS", "-o", "/dev/null", $"http://127.0.0.1:{port}/"], TimeSpan.FromSeconds(5)).Code == 0)
            {
                return true;
            }
            Thread.Sleep(100);
        }
        Console.Error.WriteLine($"ab-options: port {port} not ready");
        return false;
    }

    /// <summary>"ticks voluntary involuntary engines engine-ticks epoll-threads": the process's CPU ticks (every thread),
    /// its threads' context switches, the runtime's socket engine threads (".NET Sockets") and their ticks, and LLHttp's
    /// epoll engine threads ("LLHttp epoll N").</summary>
    internal static string Sample(int pid)
    {
        static long[] Stat(string path)
        {
            var s = File.ReadAllText(path);
            var f = s[(s.LastIndexOf(") ", StringComparison.Ordinal) + 2)..].Split(' ');
            return [long.Parse(f[11], CultureInfo.InvariantCulture), long.Parse(f[12], CultureInfo.InvariantCulture)];
        }
        var total = Stat($"/proc/{pid}/stat");
        long voluntary = 0, involuntary = 0, engines = 0, engineTicks = 0, loops = 0;
        foreach (var task in Directory.EnumerateDirectories($"/proc/{pid}/task"))
        {
            try
            {
                foreach (var line in File.ReadLines(Path.Combine(task, "status")))
                {
                    var kv = line.Split(':', 2);
                    if (kv[0] == "voluntary_ctxt_switches")
                    {
                        voluntary += long.Parse(kv[1].Trim(), CultureInfo.InvariantCulture);
                    }
                    else if (kv[0] == "nonvoluntary_ctxt_switches")
                    {
                        involuntary += long.Parse(kv[1].Trim(), CultureInfo.InvariantCulture);
                    }
                }
                var comm = File.ReadAllText(Path.Combine(task, "comm")).TrimEnd('\n');
                if (comm.StartsWith("LLHttp epoll ", StringComparison.Ordinal))
                {
                    loops++;
                }
                if (comm == ".NET Sockets")
                {
                    var t = Stat(Path.Combine(task, "stat"));
                    engines++;
                    engineTicks += t[0] + t[1];
                }
            }
            catch (IOException)
            {
                // the thread ended while it was read
            }
        }
        return $"{total[0] + total[1]} {voluntary} {involuntary} {engines} {engineTicks} {loops}";
    }

    private static double Num(string s) => double.Parse(s, CultureInfo.InvariantCulture);

    /// <summary>wrk's 99th percentile in milliseconds from its --latency distribution ("     99%    6.68ms"), or null
    /// when the report has none (runs from before the distribution was asked for).</summary>
    internal static double? P99(IEnumerable<string> wrk)
    {
        var line = wrk.Select(l => l.Trim()).FirstOrDefault(l => l.StartsWith("99%", StringComparison.Ordinal));
        if (line is null)
        {
            return null;
        }
        var value = line[3..].Trim();
        var (number, scale) = value.EndsWith("us", StringComparison.Ordinal) ? (value[..^2], 0.001)
            : value.EndsWith("ms", StringComparison.Ordinal) ? (value[..^2], 1.0)
            : value.EndsWith("m", StringComparison.Ordinal) ? (value[..^1], 60_000.0)
            : value.EndsWith('s') ? (value[..^1], 1000.0)
            : (value, double.NaN);
        return double.IsNaN(scale) ? null : Num(number) * scale;
    }

    /// <summary>summary.tsv: per run requests, RPS, proxy CPU us/request, the origin's CPU us/request over the same
    /// window (a control for the machine's speed, docs/methodology.md "The origin as a control"), context switches per
    /// request, socket engine threads and their CPU share, epoll threads, errors; then the median per configuration.</summary>
    internal static string Summary(string dir, IReadOnlyList<string> configs, int rounds, int hz)
    {
        var s = new StringBuilder("run\trequests\trps\tcpu_us_per_request\torigin_cpu_us_per_request\tvol_per_request\tinvol_per_request\tengines\tengine_cpu_share\tepoll_threads\terrors\tp99_ms\n");
        var rows = new Dictionary<string, List<string[]>>();
        foreach (var name in configs.Select(c => c[..c.IndexOf('=')]))
        {
            rows[name] = [];
            for (var r = 1; r <= rounds; r++)
            {
                var label = $"{name}.r{r}";
                string P(string kind) => Path.Combine(dir, $"{label}.{kind}.txt");
                if (!File.Exists(P("wrk")) || new FileInfo(P("wrk")).Length == 0 || !File.Exists(P("proc")) || File.ReadAllLines(P("proc")).Length != 2)
                {
                    continue;
                }
                var wrk = File.ReadAllLines(P("wrk"));
                var requests = Num(wrk.First(l => l.Contains("requests in", StringComparison.Ordinal)).Trim().Split(' ')[0]);
                var rps = Num(wrk.First(l => l.StartsWith("Requests/sec", StringComparison.Ordinal)).Split(' ', StringSplitOptions.RemoveEmptyEntries)[1]);
                var errors = string.Concat(wrk.Where(l => l.Contains("Non-2xx", StringComparison.Ordinal) || l.Contains("Socket errors", StringComparison.Ordinal)).Select(l => l + " "));
                var proc = File.ReadAllLines(P("proc")).Select(l => l.Split(' ').Select(Num).ToArray()).ToArray();
                double o0 = 0, o1 = -1;
                if (File.Exists(P("origin")) && File.ReadAllLines(P("origin")) is [var first, var second, ..])
                {
                    (o0, o1) = (Num(first.Split(' ')[0]), Num(second.Split(' ')[0]));
                }
                var dt = proc[1][0] - proc[0][0];
                var dOrigin = o1 - o0;
                string[] row =
                [
                    label, $"{requests:0}", $"{rps:0}", $"{dt / hz * 1e6 / requests:0.0}", dOrigin < 0 ? "-" : $"{dOrigin / hz * 1e6 / requests:0.0}",
                    $"{(proc[1][1] - proc[0][1]) / requests:0.00}", $"{(proc[1][2] - proc[0][2]) / requests:0.00}", $"{proc[1][3]:0}",
                    $"{(dt != 0 ? (proc[1][4] - proc[0][4]) / dt : 0):0.00}", $"{proc[1][5]:0}", errors.Length > 0 ? errors : "none", P99(wrk) is double p99 ? $"{p99:0.00}" : "-",
                ];
                rows[name].Add(row);
                s.Append(string.Join('\t', row)).Append('\n');
            }
        }
        foreach (var (name, list) in rows.Where(kv => kv.Value.Count > 0))
        {
            double M(int column) => Stats.Median(list.Select(r => Num(r[column])))!.Value;
            var origins = list.Where(r => r[4] != "-").Select(r => Num(r[4])).ToList();
            var p99s = list.Where(r => r[11] != "-").Select(r => Num(r[11])).ToList();
            s.Append(CultureInfo.InvariantCulture, $"median {name} ({list.Count} runs)\t-\t{M(2):0}\t{M(3):0.0}\t{(origins.Count > 0 ? $"{Stats.Median(origins):0.0}" : "-")}\t{M(5):0.00}\t{M(6):0.00}\t-\t{M(8):0.00}\t-\t-\t{(p99s.Count > 0 ? $"{Stats.Median(p99s):0.00}" : "-")}\n");
        }
        return s.ToString();
    }
}
