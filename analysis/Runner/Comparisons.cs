using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;

namespace LLRP.Runner;

/// <summary>The four published proxy comparisons (scaling, sweep, ab, ramp) as runs on one machine, `crank/run-local.sh
/// scaling|sweep|ab|ramp|comparisons`: crank/README.md, "Comparisons", describes each one; <see cref="ComparisonOptions"/> its options.</summary>
internal sealed partial class Comparisons
{
    // Seconds a server has to print its ready text (crank's readyStateText), as run-local.
    private const int ReadyTimeoutSeconds = 60;
    // Slack of a load job's bound beyond its warm-up and measured time (its first request, parsing, the statistics
    // block), as run-local's load limit.
    private const int LoadSlackSeconds = 60;
    // A ramp step's bound: ramp-job.sh gives each h2load step its duration + 30 s, then 5 s more before SIGKILL.
    private const int RampStepSlackSeconds = 35;
    // crank's own time beyond the runs: publishing the apps on the controller, uploading them, starting the jobs on
    // the agent (as run-local's crank bound).
    private const int CrankSlackSeconds = 900;
    // 15 min: a cold publish of the largest app, or the first build of analysis/Report, on the loaded 2-core box.
    private const int PublishTimeoutSeconds = 900, ReportTimeoutSeconds = 900;
    // crank's agent (crank/README.md): the comparisons use a running one and never start their own.
    public const int AgentPort = 5010;

    private readonly ComparisonOptions _o;
    private readonly Machine _machine;
    private readonly string _root, _crankDir, _commandLine, _mode;
    private readonly ProcessGroups _groups;
    private readonly HashSet<string> _published = [];
    private string _jsonDir = "", _gitHead = "unknown", _arch = "";
    private readonly int _agentPort;
    private int _failures;

    private Comparisons(ComparisonOptions o, Machine machine, string root, IEnumerable<string> args, int agentPort)
    {
        _agentPort = agentPort;
        _o = o;
        _machine = machine;
        _root = root;
        _crankDir = Path.Combine(root, "crank");
        _commandLine = "crank/run-local.sh" + ShellWord.Spaced(args);
        _mode = o.UseCrank && machine.CrankBin is not null ? "crank" : "fallback";
        _groups = new ProcessGroups(Warn);
    }

    private static string I(long v) => v.ToString(CultureInfo.InvariantCulture);

    private static void Log(string message) => Console.Out.WriteLine($"[comparisons {DateTime.Now:HH:mm:ss}] {message}");
    private static void Warn(string message) => Console.Error.WriteLine($"[comparisons {DateTime.Now:HH:mm:ss}] WARNING: {message}");

    /// <summary>Exit status: 0 every run succeeded, 1 a run failed, 2 bad usage. <paramref name="machine"/> and
    /// <paramref name="agentPort"/>: what the tests pretend this machine has.</summary>
    public static int Run(IReadOnlyList<string> args, string root, Machine? machine = null, int agentPort = AgentPort)
    {
        ComparisonOptions o;
        try
        {
            o = ComparisonParser.Parse(args);
        }
        catch (UsageException e)
        {
            Console.Error.WriteLine($"comparisons: {e.Message} (see --help)");
            return 2;
        }
        if (o.Help)
        {
            Cli.WriteHelp(ComparisonParser.Command);
            return 0;
        }
        var run = new Comparisons(o, machine ?? DetectMachine(root), root, args, agentPort);
        return run._groups.RunStoppingOnSignals(run.Execute, Warn);
    }

    /// <summary>crank in .tools/crank/ or on PATH (the comparisons need no crank-agent of their own: they use the one
    /// on port 5010).</summary>
    private static Machine DetectMachine(string root)
    {
        var crank = new[] { Path.Combine(root, ".tools", "crank", "crank"), Path.Combine(root, ".tools", "crank") }
            .FirstOrDefault(Shell.IsExecutable) ?? Shell.Which("crank");
        return new Machine(Environment.ProcessorCount, crank, null);
    }

    private string JsonLog(string name) => Path.Combine(_jsonDir, "logs", name);

    private int Execute()
    {
        _jsonDir = _o.JsonDir.Length > 0 ? _o.JsonDir
            : Path.Combine(_root, "artifacts", "crank", $"{DateTime.Now.ToString("yyyyMMdd-HHmmss", CultureInfo.InvariantCulture)}-{_o.What}");
        Directory.CreateDirectory(Path.Combine(_jsonDir, "logs"));
        _jsonDir = Path.GetFullPath(_jsonDir);
        Log($"results go to {Program.Relative(_root, _jsonDir)}");
        InstallTools();
        if (Shell.Which("jq") is null)
        {
            Console.Error.WriteLine("comparisons: jq is required");
            return 1;
        }
        if (Environment.GetEnvironmentVariable("DOTNET_ROOT") is not { Length: > 0 } && Shell.Which("dotnet") is { } dotnet)
        {
            // Lets the published apphosts find the runtime wherever dotnet lives.
            Environment.SetEnvironmentVariable("DOTNET_ROOT", Path.GetDirectoryName(new FileInfo(dotnet).ResolveLinkTarget(true)?.FullName ?? dotnet));
        }
        if (_mode == "crank" && !ProcessGroups.PortBusy(_agentPort))
        {
            Console.Error.WriteLine($"comparisons: crank needs an agent on http://127.0.0.1:{_agentPort} (crank/README.md), or use --fallback");
            return 1;
        }
        var runs = _o.Runs();
        // Without crank the apps run from artifacts/publish/ (crank publishes them itself, benchmarks.yml's beforeJob).
        if (_mode == "fallback")
        {
            var apps = runs.Select(r => r.Proxy switch { "llrp-llhttp" => "llrp", "yarp" => "yarp", _ => null }).OfType<string>().Append("downstream");
            if (!apps.All(Publish))
            {
                return 1;
            }
        }
        Log($"mode: {_mode}; {runs.Count} run(s) x {_o.Rounds} round(s); expected run time ~{_o.ExpectedMinutes(runs)} min");
        _gitHead = ProcessGroups.Run(["git", "-C", _root, "rev-parse", "HEAD"], TimeSpan.FromSeconds(30)) is (0, var h) ? h.Trim() : "unknown";
        _arch = ProcessGroups.Run(["uname", "-m"], TimeSpan.FromSeconds(10)).Out.Trim();
        Program.WriteJson(Path.Combine(_jsonDir, "run.json"), RunMetadata());

        for (var r = 1; r <= _o.Rounds; r++)
        {
            foreach (var run in runs)
            {
                if (_mode == "crank")
                {
                    RunCrank(run, r);
                }
                else
                {
                    RunFallback(run, r);
                }
            }
        }

        if (Aggregate(_jsonDir) is { } aggregated)
        {
            Program.WriteJson(Path.Combine(_jsonDir, "comparisons.json"), aggregated);
            Log($"aggregated: {Program.Relative(_root, _jsonDir)}/comparisons.json");
            if (_o.Report)
            {
                Report();
            }
        }
        if (_failures > 0)
        {
            Warn($"{_failures} run(s) failed");
            return 1;
        }
        Log("all runs succeeded");
        return 0;
    }

    // ------------------------------------------------------------------ tools and apps

    private void InstallTools()
    {
        SortedSet<string> missing = [];
        void Need(bool present, string package)
        {
            if (!present)
            {
                missing.Add(package);
            }
        }
        // jq: results.jq; perl: the process groups (ProcessGroups.OwnGroup); ss: proc-sample.sh's connection count.
        Need(Shell.Which("jq") is not null, "jq");
        Need(Shell.Which("perl") is not null, "perl-base");
        Need(Shell.Which("ss") is not null, "iproute2");
        foreach (var c in _o.Comparisons)
        {
            if (c is "scaling" or "sweep")
            {
                Need(Shell.Which("wrk") is not null, "wrk");
            }
            else if (c == "ab")
            {
                Need(Shell.Which("ab") is not null, "apache2-utils");
            }
            else
            {
                Need(Shell.Which("h2load") is not null, "nghttp2-client");
            }
            foreach (var p in _o.ProxiesFor(c))
            {
                if (p is "nginx" or "nginx-default")
                {
                    Need(File.Exists("/usr/sbin/nginx"), "nginx-light");
                }
                else if (p == "haproxy")
                {
                    Need(File.Exists("/usr/sbin/haproxy"), "haproxy");
                }
            }
        }
        Shell.Install(missing, _o.Install, JsonLog("apt.log"), Log, Warn);
    }

    /// <summary>crank/publish.sh APP, once per invocation; false when it fails.</summary>
    private bool Publish(string app)
    {
        if (_published.Contains(app))
        {
            return true;
        }
        Log($"publishing {app} (logs/publish-{app}.log)");
        var log = JsonLog($"publish-{app}.log");
        File.WriteAllText(log, "");
        if (ProcessGroups.Run([Path.Combine(_crankDir, "publish.sh"), app], TimeSpan.FromSeconds(PublishTimeoutSeconds), log: log).Code != 0)
        {
            Warn($"publishing {app} failed (logs/publish-{app}.log)");
            return false;
        }
        _published.Add(app);
        return true;
    }

    private string PublishedExe(string app) => ProcessGroups.Run([Path.Combine(_crankDir, "publish.sh"), "--exe", app], TimeSpan.FromSeconds(30)).Out.Trim();

    /// <summary>run.json: when, which commit, the command, the mode, the machine and the load tools' versions.</summary>
    private JsonObject RunMetadata()
    {
        // The first line a tool prints about its version ("" when it is not installed).
        string Version(string tool, params string[] args) =>
            (tool.StartsWith('/') ? File.Exists(tool) : Shell.Which(tool) is not null)
                ? ProcessGroups.Run([tool, .. args], TimeSpan.FromSeconds(30)).Out.Split('\n')[0].Trim() : "";
        var cpu = File.ReadLines("/proc/cpuinfo").FirstOrDefault(l => l.StartsWith("model name", StringComparison.Ordinal)) is { } m
            ? m[(m.IndexOf(':') + 1)..].Trim() : "";
        return new JsonObject
        {
            ["date"] = DateTime.UtcNow.ToString("yyyy-MM-dd'T'HH:mm:ss'Z'", CultureInfo.InvariantCulture),
            ["commit"] = _gitHead,
            ["command"] = _commandLine,
            ["mode"] = _mode,
            ["nproc"] = _machine.Nproc,
            ["cpuModel"] = cpu,
            ["tools"] = new JsonObject
            {
                ["wrk"] = Version("wrk", "-v"),
                ["ab"] = Version("ab", "-V"),
                ["h2load"] = Version("h2load", "--version"),
                ["nginx"] = Version("/usr/sbin/nginx", "-v"),
                ["haproxy"] = Version("/usr/sbin/haproxy", "-v"),
            },
        };
    }

    // ------------------------------------------------------------------ one run

    /// <summary>The request path of <paramref name="comparison"/>'s load.</summary>
    private string PathOf(string comparison) => comparison switch { "sweep" => "/json", "ab" => _o.AbPath, _ => "/" };

    /// <summary>One run without crank: the replicas, the proxy, the load job, one result file
    /// (&lt;tag&gt;.json) and the logs under logs/&lt;tag&gt;.*.</summary>
    private void RunFallback(ComparisonRun run, int round)
    {
        var tag = run.Tag(round);
        var logs = Path.Combine(_jsonDir, "logs");
        var path = PathOf(run.Comparison);
        var measured = _o.DurationOf(run.Comparison);

        var busy = Enumerable.Range(_o.DownstreamPort, run.Replicas).ToList();
        if (run.Proxy != "direct")
        {
            busy.Add(_o.ProxyPort);
        }
        busy = [.. busy.Where(ProcessGroups.PortBusy)];
        if (busy.Count > 0)
        {
            Warn($"{tag}: port(s){string.Concat(busy.Select(p => " " + I(p)))} already in use; run skipped");
            StartFailed(run, round);
            return;
        }

        // 1. the replicas (Downstream --name d1...d5: responses carry X-Downstream), replica i on --downstream-port + i - 1
        var dsExe = PublishedExe("downstream");
        List<Process> replicas = [];
        List<string> addresses = [];
        for (var i = 1; i <= run.Replicas; i++)
        {
            var port = _o.DownstreamPort + i - 1;
            var log = Path.Combine(logs, $"{tag}.downstream{i}.log");
            var ds = _groups.Start(log, Path.GetDirectoryName(dsExe)!, [dsExe, "--urls", $"http://127.0.0.1:{port}", "--name", $"d{i}"]);
            replicas.Add(ds);
            addresses.Add($"127.0.0.1:{port}");
            if (!_groups.WaitReady(ds, log, "Application started.", TimeSpan.FromSeconds(ReadyTimeoutSeconds)))
            {
                _groups.StopAll();
                StartFailed(run, round);
                return;
            }
        }

        // 2. the proxy, with every replica as a downstream
        var threads = I(_o.ProxyThreads);
        var urls = string.Join(';', addresses.Select(a => $"http://{a}"));
        var targetPort = _o.ProxyPort;
        var appDir = _crankDir;
        List<string> appCmd = [];
        var ready = "";
        switch (run.Proxy)
        {
            case "direct":
                targetPort = _o.DownstreamPort;
                break;
            case "llrp-llhttp":
                var llrp = PublishedExe("llrp");
                appDir = Path.GetDirectoryName(llrp)!;
                appCmd = [llrp, "--urls", $"http://127.0.0.1:{_o.ProxyPort}", "--downstream", urls, "--client", "llhttp", "--engineThreads", threads];
                // ConnectionRoundRobin is LLRP's default: a build without the option runs it too.
                if (run.Policy is not ("-" or "ConnectionRoundRobin"))
                {
                    appCmd.AddRange(["--loadBalancing", run.Policy]);
                }
                ready = "Application started.";
                break;
            case "yarp":
                var yarp = PublishedExe("yarp");
                appDir = Path.GetDirectoryName(yarp)!;
                // Equal threads: the runtime sizes YARP's thread pool and Kestrel's I/O from the processors it sees.
                appCmd = ["env", $"DOTNET_PROCESSOR_COUNT={threads}", yarp, "--urls", $"http://127.0.0.1:{_o.ProxyPort}", "--downstream", urls];
                if (run.Policy is not ("-" or ""))
                {
                    appCmd.AddRange(["--loadBalancing", run.Policy]);
                }
                ready = "Application started.";
                break;
            case "nginx" or "nginx-default":
                Directory.CreateDirectory(Path.Combine(logs, $"{tag}.nginx"));
                appCmd = ["env", "LISTEN_ADDRESS=127.0.0.1", $"LISTEN_PORT={_o.ProxyPort}", $"DOWNSTREAMS={string.Join(' ', addresses)}",
                    $"JOB_WORK_DIR={logs}/{tag}.nginx", $"NGINX_CONFIG={(run.Proxy == "nginx" ? "nginx.conf" : "nginx-default.conf")}",
                    $"NGINX_WORKERS={threads}", Path.Combine(_crankDir, "nginx-job.sh")];
                ready = "nginx-job: ready";
                break;
            case "haproxy":
                appCmd = ["env", "LISTEN_ADDRESS=127.0.0.1", $"LISTEN_PORT={_o.ProxyPort}", $"DOWNSTREAMS={string.Join(' ', addresses)}",
                    $"HAPROXY_THREADS={threads}", Path.Combine(_crankDir, "haproxy-job.sh")];
                ready = "haproxy-job: ready";
                break;
        }
        Process? proxy = null;
        var appLog = Path.Combine(logs, $"{tag}.application.log");
        if (run.Proxy != "direct")
        {
            proxy = _groups.Start(appLog, appDir, appCmd);
            if (!_groups.WaitReady(proxy, appLog, ready, TimeSpan.FromSeconds(ReadyTimeoutSeconds)))
            {
                _groups.StopAll();
                StartFailed(run, round);
                return;
            }
        }

        // 3. the load, with proc-sample.sh around the measured run (the proxy's figures, or the origin's for direct)
        var url = $"http://127.0.0.1:{targetPort}{path}";
        var samples = Path.Combine(logs, $"{tag}.samples");
        // The sampled process is the server: nginx and HAProxy run as their job's child (##ChildProcessId in the log).
        var sampled = proxy is null ? $"downstream={replicas[0].Id}" : $"application={ProcessGroups.MeasuredPid(proxy, appLog)}";
        string[] sampling = [$"SAMPLE_PIDS={sampled}", $"SAMPLE_OUT={samples}"];
        List<string> loadCmd = run.Comparison switch
        {
            "scaling" or "sweep" =>
            [
                "env", .. sampling, $"WRK_JOB_HOOK={_crankDir}/proc-sample.sh", Path.Combine(_crankDir, "wrk-job.sh"),
                "-w", I(_o.Warmup), "-d", I(measured), "-t", "1", "-c", I(run.Connections), "--headers", "plaintext", "--max-errors", "0", url,
            ],
            "ab" =>
            [
                "env", .. sampling, $"AB_JOB_HOOK={_crankDir}/proc-sample.sh", Path.Combine(_crankDir, "ab-job.sh"),
                "-w", I(_o.Warmup), "-d", I(measured), "-c", I(run.Connections), url,
            ],
            _ =>
            [
                Path.Combine(_crankDir, "ramp-job.sh"), "-w", I(_o.Warmup), "-d", I(measured), "-c", I(run.Connections),
                "--start", I(_o.RampStart), "--step", I(_o.RampStep), "--steps", I(_o.RampSteps), "--proxy-pid", I(proxy is null ? replicas[0].Id : ProcessGroups.MeasuredPid(proxy, appLog)), url,
            ],
        };
        var bound = run.Comparison == "ramp"
            ? _o.Warmup + ((long)_o.RampSteps * (measured + RampStepSlackSeconds)) + LoadSlackSeconds
            : _o.Warmup + measured + LoadSlackSeconds;
        var shape = run.Comparison == "ramp" ? $"{_o.RampSteps} steps of {measured}s" : $"{measured}s measured";
        Log($"{tag}: load on {url} ({run.Comparison}: {_o.Warmup}s warm-up, then {shape})");
        var loadLog = Path.Combine(logs, $"{tag}.load.log");
        var load = _groups.Start(loadLog, _crankDir, ["timeout", "--kill-after=5", I(bound), .. loadCmd]);
        load.WaitForExit();
        var loadRc = load.ExitCode;
        _groups.Stop(load, 1);
        _groups.Stop(proxy, 10);
        foreach (var ds in replicas)
        {
            _groups.Stop(ds, 10);
        }

        // 4. the load job's results, in the shape of crank's --json output (crank/results.jq)
        var vars = new JsonObject
        {
            ["connections"] = run.Connections,
            ["warmup"] = _o.Warmup,
            ["duration"] = measured,
            ["path"] = path,
            ["downstreams"] = run.Replicas,
        };
        if (run.Policy != "-")
        {
            vars["loadBalancing"] = run.Policy;
        }
        var output = Path.Combine(_jsonDir, $"{tag}.json");
        WriteResult(output, LoadJob(tag, loadLog, vars), run, round, "fallback", I(loadRc));
        if (loadRc != 0)
        {
            Warn($"{tag}: load job failed with exit code {loadRc} (logs/{tag}.load.log)");
            _failures++;
        }
        else
        {
            Log($"{tag}: {Summary(JsonNode.Parse(File.ReadAllText(output))!)}");
        }
    }

    /// <summary>The load job's JobResult: the statistics blocks of its log aggregated by crank's rules (crank/results.jq).</summary>
    private JsonNode LoadJob(string tag, string loadLog, JsonObject vars)
    {
        var blocks = StatisticsBlocks.Parse(StatisticsBlocks.Of(File.Exists(loadLog) ? ProcessGroups.ReadShared(loadLog) : ""));
        if (blocks is null)
        {
            Warn($"{tag}: the load printed a statistics block that is not valid JSON; ignored (logs/{tag}.load.log)");
            blocks = [];
        }
        var blocksFile = JsonLog($"{tag}.blocks");
        File.WriteAllLines(blocksFile, blocks.Select(b => b.ToJsonString()));
        var environment = new JsonObject { ["os"] = "linux", ["arch"] = _arch, ["proc"] = _machine.Nproc, ["runner"] = "run-local" };
        var (code, text) = ProcessGroups.Run(["jq", "-n", "--slurpfile", "blocks", blocksFile, "--argjson", "vars", vars.ToJsonString(),
            "--argjson", "env", environment.ToJsonString(), "-f", Path.Combine(_crankDir, "results.jq")], TimeSpan.FromSeconds(60));
        File.Delete(blocksFile);
        return code == 0 ? JsonNode.Parse(text)! : throw new InvalidOperationException($"crank/results.jq failed: {text}");
    }

    /// <summary>A run that never reached its load still has a result file (returnCode 1, no figures), so the report
    /// counts it.</summary>
    private void StartFailed(ComparisonRun run, int round)
    {
        WriteResult(Path.Combine(_jsonDir, $"{run.Tag(round)}.json"), new JsonObject(), run, round, "fallback", "not-started");
        _failures++;
    }

    private void WriteResult(string output, JsonNode? load, ComparisonRun run, int round, string mode, string loadExitCode) =>
        Program.WriteJson(output, Result(load, run, round, mode, loadExitCode, _gitHead));

    /// <summary>One run's result file: crank's --json shape with the load job and the run's properties.</summary>
    internal static JsonObject Result(JsonNode? load, ComparisonRun run, int round, string mode, string loadExitCode, string commit) => new()
    {
        ["returnCode"] = loadExitCode == "0" ? 0 : 1,
        ["jobResults"] = new JsonObject
        {
            ["jobs"] = new JsonObject { ["load"] = load },
            ["properties"] = new JsonObject
            {
                ["comparison"] = run.Comparison,
                ["scenario"] = run.Proxy,
                ["loadBalancing"] = run.Policy,
                ["downstreams"] = I(run.Replicas),
                ["connections"] = I(run.Connections),
                ["round"] = I(round),
                ["runner"] = "crank/run-local.sh",
                ["mode"] = mode,
                ["commit"] = commit,
                ["loadExitCode"] = loadExitCode,
            },
        },
        ["benchmarks"] = new JsonArray(),
    };

    /// <summary>The line a finished run logs: the ramp's highest rate, ab's rate, time per request and failures, or
    /// wrk's rate, p90 and p95.</summary>
    internal static string Summary(JsonNode result)
    {
        var r = result["jobResults"]?["jobs"]?["load"]?["results"];
        string Raw(string name) => r?[name] is { } v ? Text(v) : "null";
        string Or(string name, string fallback) => r?[name] is JsonNode v && !IsFalse(v) ? Text(v) : fallback;
        string Floor(string name) => r?[name] is JsonValue v && v.TryGetValue<double>(out var d) ? Math.Floor(d).ToString(CultureInfo.InvariantCulture) : "0";
        if (r?["ramp/rps/max"] is not null)
        {
            return $"max {Floor("ramp/rps/max")} rps over {(r["ramp/offered"] as JsonArray)?.Count ?? 0} steps";
        }
        if (r?["ab/rps/mean"] is not null)
        {
            return $"{Floor("ab/rps/mean")} rps, {Raw("ab/time-per-request/mean")} ms/request, failed {Raw("ab/failed")}";
        }
        return $"{Floor("wrk/rps/mean")} rps, p90 {Or("wrk/latency/90", "?")} ms, p95 {Or("wrk/latency/95", "?")} ms";
    }

    private static bool IsFalse(JsonNode v) => v is JsonValue b && b.TryGetValue<bool>(out var f) && !f;

    /// <summary>A value as jq's string interpolation writes it: a string as it is, anything else as JSON.</summary>
    private static string Text(JsonNode v) => v is JsonValue s && s.TryGetValue<string>(out var text) ? text : v.ToJsonString();

    // ------------------------------------------------------------------ crank

    /// <summary>One run as the comparison's benchmarks.yml scenario with the same variables (crank/README.md,
    /// "Comparisons"): the sweep's are the ordinary scenarios with path=/json, the others &lt;comparison&gt;-&lt;proxy&gt;.</summary>
    private void RunCrank(ComparisonRun run, int round)
    {
        var tag = run.Tag(round);
        var duration = _o.DurationOf(run.Comparison);
        var crankJson = Path.Combine(_jsonDir, $"{tag}.crank.json");
        var args = CrankArgs(run, tag, duration);
        Log($"{tag}: crank {string.Join(' ', args)}");
        // The controller resolves beforeJob commands and localFolder paths from the repository root.
        var timeout = _o.Warmup + ((long)duration * (_o.RampSteps + 1)) + CrankSlackSeconds;
        var log = JsonLog($"{tag}.crank.log");
        File.WriteAllText(log, "");
        var rc = ProcessGroups.Run([_machine.CrankBin!, .. args], TimeSpan.FromSeconds(timeout), _root, log).Code;
        if (File.Exists(crankJson))
        {
            var load = JsonNode.Parse(File.ReadAllText(crankJson))?["jobResults"]?["jobs"]?["load"]?.DeepClone();
            WriteResult(Path.Combine(_jsonDir, $"{tag}.json"), load, run, round, "crank", I(rc));
        }
        if (rc != 0)
        {
            Warn($"{tag}: crank failed (logs/{tag}.crank.log)");
            _failures++;
        }
    }

    /// <summary>crank's command line for one run (without the crank executable).</summary>
    private List<string> CrankArgs(ComparisonRun run, string tag, int duration)
    {
        List<string> args = [];
        string scenario;
        if (run.Comparison == "sweep")
        {
            scenario = run.Proxy;
            args.AddRange(["--variable", "path=/json"]);
        }
        else
        {
            scenario = $"{run.Comparison}-{run.Proxy}";
        }
        args.AddRange(["--config", Path.Combine(_root, "benchmarks.yml"), "--scenario", scenario, "--profile", "local",
            "--json", Path.Combine(_jsonDir, $"{tag}.crank.json")]);
        foreach (var (k, v) in new[]
        {
            ("connections", I(run.Connections)), ("warmup", I(_o.Warmup)), ("duration", I(duration)), ("serverPort", I(_o.ProxyPort)),
            ("downstreamPort", I(_o.DownstreamPort)), ("downstreams", I(run.Replicas)), ("threads", I(_o.ProxyThreads)),
        })
        {
            args.AddRange(["--variable", $"{k}={v}"]);
        }
        if (run.Policy != "-")
        {
            args.AddRange(["--variable", $"loadBalancing={run.Policy}"]);
        }
        if (run.Comparison == "ab")
        {
            args.AddRange(["--variable", $"abPath={_o.AbPath}"]);
        }
        if (run.Comparison == "ramp")
        {
            args.AddRange(["--variable", $"rampStart={_o.RampStart}", "--variable", $"rampStep={_o.RampStep}", "--variable", $"rampSteps={_o.RampSteps}"]);
        }
        return args;
    }

    // ------------------------------------------------------------------ aggregate and report

    /// <summary>comparisons.json: run.json and one row per result file (&lt;tag&gt;.json, in name order): the run's
    /// properties, ok, and the load's results. Null when there is no result file.</summary>
    internal static JsonObject? Aggregate(string jsonDir)
    {
        var files = Directory.EnumerateFiles(jsonDir, "*.json")
            .Where(f => IsResultFile(Path.GetFileName(f)))
            .Order(StringComparer.Ordinal)
            .ToList();
        if (files.Count == 0)
        {
            return null;
        }
        var rows = new JsonArray();
        foreach (var f in files)
        {
            var result = JsonNode.Parse(File.ReadAllText(f));
            if (result?["jobResults"] is not JsonObject jobResults)
            {
                continue;
            }
            var row = jobResults["properties"]?.DeepClone() as JsonObject ?? [];
            row["ok"] = result["returnCode"] is JsonValue rc && rc.TryGetValue<int>(out var code) && code == 0;
            row["results"] = jobResults["jobs"]?["load"]?["results"]?.DeepClone() ?? new JsonObject();
            rows.Add(row);
        }
        var runJson = Path.Combine(jsonDir, "run.json");
        return new JsonObject
        {
            ["run"] = File.Exists(runJson) ? JsonNode.Parse(File.ReadAllText(runJson)) : null,
            ["rows"] = rows,
        };
    }

    /// <summary>&lt;tag&gt;.json (the bash's glob *.r[0-9]*.json), not crank's own &lt;tag&gt;.crank.json.</summary>
    internal static bool IsResultFile(string name) =>
        ResultFilePattern().IsMatch(name) && !name.EndsWith(".crank.json", StringComparison.Ordinal);

    [GeneratedRegex(@"^.*\.r[0-9].*\.json$")]
    private static partial Regex ResultFilePattern();

    /// <summary>comparisons.md and its PNG charts (analysis/Report --comparisons).</summary>
    private void Report()
    {
        var log = JsonLog("report.log");
        File.WriteAllText(log, "");
        if (ProcessGroups.Run(["dotnet", "run", "--project", "analysis/Report/Report.csproj", "-c", "Release", "--", "--comparisons", _jsonDir],
                TimeSpan.FromSeconds(ReportTimeoutSeconds), _root, log).Code == 0)
        {
            Log($"report: {Program.Relative(_root, _jsonDir)}/comparisons.md");
        }
        else
        {
            Warn("the report failed; last lines of logs/report.log:");
            Console.Error.Write(ProcessGroups.Tail(log, 15));
            _failures++;
        }
    }
}
