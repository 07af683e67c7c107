using System.Globalization;
using System.Runtime.InteropServices;
using System.Text.Json.Nodes;

namespace LLRP.Runner;

/// <summary>crank/run-local.sh: LLRP's benchmark driver on one machine. crank when it is installed, otherwise the jobs
/// of benchmarks.yml run directly with the same executables, arguments, ready texts and load job (crank/README.md).</summary>
internal sealed class RunLocal
{
    // Seconds a server has to print its ready text (crank's readyStateText).
    private const int ReadyTimeoutSeconds = 60;
    private static readonly string[] Roles = ["load", "application", "downstream"];

    /// <summary>The load jobs, by --load: the job script and its arguments. A new load generator is one entry here and
    /// one value of --load (Options.cs).</summary>
    private static readonly Dictionary<string, Func<RunLocal, string, List<string>, List<string>>> LoadJobs = new()
    {
        ["wrk"] = (rl, url, common) =>
        [
            Path.Combine(rl._crankDir, "wrk-job.sh"), "-w", I(rl._o.Warmup), .. rl._warmArgs, "-d", I(rl._o.Duration),
            "-t", I(rl._o.LoadThreads), "-c", I(rl._o.Connections), .. common, url,
        ],
        // A fixed warm-up at its rate: an adaptive one would need a load that keeps running until the probe says warm,
        // which h2load's timed runs are not.
        ["fixedrate"] = (rl, url, common) =>
        [
            Path.Combine(rl._crankDir, "fixedrate-job.sh"), "-w", I(rl._o.Warmup), "-d", I(rl._o.Duration),
            "-c", I(rl._o.Connections), "--rate", rl._o.Rate, .. common, url,
        ],
        // HTTP/2: closed loop of -c connections x -m streams, or open loop at --rate; the adaptive warm-up as wrk's.
        // Bodies go in DATA frames, so the framing option is wrk's alone.
        ["h2load"] = (rl, url, _) =>
        [
            Path.Combine(rl._crankDir, "h2load-job.sh"), "-w", I(rl._o.Warmup), .. rl._warmArgs, "-d", I(rl._o.Duration),
            "-t", I(rl._o.LoadThreads), "-c", I(rl._o.Connections), "-m", I(rl._o.Streams),
            .. rl._o.Rate.Length > 0 ? ["--rate", rl._o.Rate] : Array.Empty<string>(),
            "--headers", rl._o.Headers, "--body-size", I(rl._o.BodySize), "--max-errors", rl._yml["maxErrors"], url,
        ],
        // WebSocket echo: messages through the proxy's Upgrade tunnel, the adaptive warm-up as wrk's; ws:// for http,
        // wss:// trusting the run's authority for https.
        ["websocket"] = (rl, url, _) =>
        [
            Path.Combine(rl._crankDir, "websocket-job.sh"), "-w", I(rl._o.Warmup), .. rl._warmArgs, "-d", I(rl._o.Duration),
            "-c", I(rl._o.Connections), "--message-size", I(rl._o.MessageSize), "--max-errors", rl._yml["maxErrors"],
            .. url.StartsWith("https://", StringComparison.Ordinal) ? ["--trust", Path.Combine(rl._tlsDir, "ca.pem")] : Array.Empty<string>(),
            WebSocketUrl(url),
        ],
    };

    /// <summary>The WebSocket URL of an http(s) URL: ws:// for http://, wss:// for https://.</summary>
    internal static string WebSocketUrl(string url) =>
        url.StartsWith("https://", StringComparison.Ordinal) ? "wss://" + url["https://".Length..]
        : url.StartsWith("http://", StringComparison.Ordinal) ? "ws://" + url["http://".Length..]
        : url;

    // The first request of a WebSocket run is a handshake: curl (7.88) has no WebSocket, so it sends the handshake's
    // fields itself (RFC 6455 §4.1; the key is the RFC's example nonce) and prints the 101 once its --max-time is up.
    // HTTP/1.1 even where ALPN offers h2 (an upgrade is HTTP/1.1's; the job's ClientWebSocket offers http/1.1 only);
    // it comes after any --http2 of the proxy's protocols, and curl takes the last.
    private static readonly string[] CurlHandshake =
    [
        "--http1.1", "-H", "Connection: Upgrade", "-H", "Upgrade: websocket", "-H", "Sec-WebSocket-Version: 13",
        "-H", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    ];

    private readonly Options _o;
    private readonly Plan _plan;
    private readonly string _root, _crankDir, _commandLine;
    private readonly ProcessGroups _groups;
    private readonly Dictionary<string, string> _yml = new() { ["serverListenAddress"] = "", ["downstreamListenAddress"] = "", ["maxErrors"] = "0" };
    private readonly Dictionary<string, string> _publishState = [];
    private readonly HashSet<string> _unavailable = [];
    private Progress? _progress;
    private readonly List<string> _runnable = [];
    private string[] _inLoad = [], _inApplication = [], _inDownstream = [];
    private string _jsonDir = "", _tlsDir = "", _gitHead = "", _srvTarget = "", _dsTarget = "", _srvListen = "", _dsListen = "";
    private List<string> _warmArgs = [];
    private int _failures, _retriesDone, _unsteadyRuns, _ticksPerSecond = 100;

    private RunLocal(Options o, Plan plan, string root, IEnumerable<string> args)
    {
        _o = o;
        _plan = plan;
        _root = root;
        _crankDir = Path.Combine(root, "crank");
        _commandLine = "crank/run-local.sh" + ShellWord.Spaced(args);
        _groups = new ProcessGroups(Warn) { OwnSessions = o.OwnSessions };
    }

    private static string I(int v) => v.ToString(CultureInfo.InvariantCulture);
    private static string D(double v) => v.ToString(CultureInfo.InvariantCulture);

    public static void Log(string message) => Progress.Write(Console.Out, $"[run-local {DateTime.Now:HH:mm:ss}] {message}");
    public static void Warn(string message) => Progress.Write(Console.Error, $"[run-local {DateTime.Now:HH:mm:ss}] WARNING: {message}");

    /// <summary>Exit status: 0 if every run that was attempted succeeded, 1 otherwise, 2 on bad usage.</summary>
    public static int Run(IReadOnlyList<string> args, string root, Machine? machine = null)
    {
        Options o;
        Plan plan;
        try
        {
            o = OptionParser.Parse(args);
            if (o.Help)
            {
                Cli.WriteHelp(OptionParser.Command);
                return 0;
            }
            CheckNamespaces(o);
            plan = new Plan(o, machine ?? DetectMachine(root));
        }
        catch (UsageException e)
        {
            Console.Error.WriteLine($"run-local: {e.Message}{(e.SeeHelp ? " (see --help)" : "")}");
            return 2;
        }
        var run = new RunLocal(o, plan, root, args);
        if (!run.ResolveAddresses())
        {
            return 2;
        }
        Log($"topology: {plan.TopologyText}");
        Log(plan.Estimate(o.Scenarios));
        if (o.DryRun)
        {
            Console.Out.Write(plan.DryRun());
            return 0;
        }
        return run._groups.RunStoppingOnSignals(run.Execute, Warn);
    }

    private static Machine DetectMachine(string root)
    {
        string? crank = null, agent = null;
        foreach (var d in new[] { Path.Combine(root, ".tools", "crank"), Path.Combine(root, ".tools") })
        {
            if (Shell.IsExecutable(Path.Combine(d, "crank")) && Shell.IsExecutable(Path.Combine(d, "crank-agent")))
            {
                (crank, agent) = (Path.Combine(d, "crank"), Path.Combine(d, "crank-agent"));
                break;
            }
        }
        if (crank is null && Shell.Which("crank") is { } c && Shell.Which("crank-agent") is { } a)
        {
            (crank, agent) = (c, a);
        }
        return new Machine(Environment.ProcessorCount, crank, agent);
    }

    private static void CheckNamespaces(Options o)
    {
        if (o.Netns.Count == 0)
        {
            return;
        }
        if (ProcessGroups.Run(["id", "-u"], TimeSpan.FromSeconds(5)).Out.Trim() != "0")
        {
            throw new UsageException("--netns needs root (ip netns exec)", seeHelp: false);
        }
        var listed = ProcessGroups.Run(["ip", "netns", "list"], TimeSpan.FromSeconds(10)).Out
            .Split('\n').Select(l => l.Split(' ')[0]).ToHashSet();
        foreach (var r in Roles)
        {
            if (!listed.Contains(o.Netns[r]))
            {
                throw new UsageException($"--netns: namespace '{o.Netns[r]}' ({r}) does not exist (crank/hosts.sh up)", seeHelp: false);
            }
        }
    }

    /// <summary>benchmarks.yml's address variables, with the multimachine profile's rules (crank/require-address.sh)
    /// applied before anything is published or started: across machines no address has a default.</summary>
    private bool ResolveAddresses()
    {
        if (_o.Netns.Count > 0)
        {
            _inLoad = ["ip", "netns", "exec", _o.Netns["load"]];
            _inApplication = ["ip", "netns", "exec", _o.Netns["application"]];
            _inDownstream = ["ip", "netns", "exec", _o.Netns["downstream"]];
        }
        if (!_o.Multimachine)
        {
            _yml["serverAddress"] = _yml["downstreamAddress"] = "127.0.0.1";
        }
        foreach (var (k, v) in _o.GivenVariables)
        {
            _yml[k] = v;
        }
        _dsTarget = _yml.GetValueOrDefault("downstreamAddress", "");
        _srvTarget = _yml.GetValueOrDefault("serverAddress", "");
        _dsListen = _yml["downstreamListenAddress"] is { Length: > 0 } dl ? dl : _dsTarget;
        _srvListen = _yml["serverListenAddress"] is { Length: > 0 } sl ? sl : _srvTarget;
        List<string> checks = [Path.Combine(_crankDir, "require-address.sh")];
        if (_o.Multimachine)
        {
            checks.Add("--remote");
        }
        checks.AddRange(["--target", $"downstreamAddress={_dsTarget}", "--listen", $"downstreamListenAddress={_yml["downstreamListenAddress"]}"]);
        if (_o.Scenarios.Any(s => s != "direct"))
        {
            checks.AddRange(["--target", $"serverAddress={_srvTarget}", "--listen", $"serverListenAddress={_yml["serverListenAddress"]}"]);
        }
        var (code, output) = ProcessGroups.Run(checks, TimeSpan.FromSeconds(30));
        if (code != 0)
        {
            Console.Error.Write(output);
            Console.Error.WriteLine("run-local: no job started: fix the address variables above");
            return false;
        }
        return true;
    }

    private int Execute()
    {
        _jsonDir = _o.JsonDir.Length > 0 ? _o.JsonDir : Path.Combine(_root, "artifacts", "crank", DateTime.Now.ToString("yyyyMMdd-HHmmss", CultureInfo.InvariantCulture));
        Directory.CreateDirectory(Path.Combine(_jsonDir, "logs"));
        _jsonDir = Path.GetFullPath(_jsonDir);
        Log($"results go to {Program.Relative(_root, _jsonDir)}");
        // TLS on either side: one certificate for every proxy and origin of the run, for the addresses they are reached at.
        _tlsDir = Path.Combine(_jsonDir, "tls");
        if (_o.ServerScheme == "https" || _o.DownstreamScheme == "https")
        {
            var (_, lines) = ProcessGroups.Run([Path.Combine(_crankDir, "tls-cert.sh"), _tlsDir, _srvTarget, _dsTarget], TimeSpan.FromSeconds(60));
            foreach (var line in lines.TrimEnd('\n').Split('\n'))
            {
                Log(line);
            }
        }
        if (!InstallTools())
        {
            return 1;
        }
        if (Environment.GetEnvironmentVariable("DOTNET_ROOT") is not { Length: > 0 } && Shell.Which("dotnet") is { } dotnet)
        {
            // Lets the published apphosts find the runtime wherever dotnet lives.
            Environment.SetEnvironmentVariable("DOTNET_ROOT", Path.GetDirectoryName(new FileInfo(dotnet).ResolveLinkTarget(true)?.FullName ?? dotnet));
        }
        if (_plan.Pin != "none" && _plan.Machine.Nproc < 2)
        {
            Warn("--pin and --pin-proxy need 2 CPUs; not pinning");
            _plan.Pin = "none";
        }
        if (!PublishAndSelect())
        {
            return 1;
        }
        if (_plan.Mode == "crank" && _plan.Pin != "none")
        {
            Warn("--pin and --pin-proxy apply to the fallback only (--fallback); not pinning");
            _plan.Pin = "none";
        }
        if (_plan.Mode == "crank" && _plan.Origin != "downstream")
        {
            Warn("--origin nginx applies to the fallback only (--fallback); the origin is Downstream");
            _plan.Origin = "downstream";
        }
        if (_o.Agents.Count > 0 && _plan.Mode != "crank")
        {
            Console.Error.WriteLine("run-local: --agents needs crank (crank and crank-agent on PATH or in .tools/crank/; crank/README.md)");
            return 1;
        }
        WriteRunMetadata();
        var body = _o.Load == "websocket" ? "WebSocket" : _o.BodySize == 0 ? "GET" : $"POST {_o.BodySize} B ({_o.BodyFraming})";
        Log($"mode: {_plan.Mode}; scenarios: {string.Join(' ', _runnable)}; {_o.Rounds} round(s) of {_o.Warmup}s warm-up + {_o.Duration}s, "
            + $"{_plan.LoadText}, path {_o.Path}, {body}, headers {_o.Headers}; proxy threads {_o.ProxyThreads}; "
            + $"{_o.ServerScheme} to the proxy, {_o.DownstreamScheme} to the origin");

        _progress = Progress.Current = Progress.OnConsole("run-local", _o.Rounds * _runnable.Count, TimeSpan.FromSeconds(_plan.ExpectedSeconds(_runnable)));
        if (_plan.Mode == "crank")
        {
            RunCrank();
        }
        else
        {
            Log("crank is not available: Microsoft.Crank.Controller/Agent are not installable from this machine's package source (NuGet answers 404), so the job scripts of benchmarks.yml run directly");
            _ticksPerSecond = int.TryParse(ProcessGroups.Run(["getconf", "CLK_TCK"], TimeSpan.FromSeconds(5)).Out.Trim(), out var t) ? t : 100;
            for (var r = 1; r <= _o.Rounds; r++)
            {
                foreach (var s in Rounds.Order(r + _o.RoundOffset, _runnable))
                {
                    if (!_unavailable.Contains(s))
                    {
                        RunSteady(s, r);
                    }
                }
            }
        }
        _progress.Finish();
        Progress.Current = null;
        Report();
        if (_plan.Mode == "fallback")
        {
            Log($"steadiness: {_retriesDone} retry(ies); {_unsteadyRuns} run(s) still not steady after every attempt");
        }
        if (_failures > 0)
        {
            Warn($"{_failures} run(s) failed");
            return 1;
        }
        Log("all runs succeeded");
        return 0;
    }

    private string JsonLog(string name) => Path.Combine(_jsonDir, "logs", name);

    // ------------------------------------------------------------------ tools and apps

    private bool InstallTools()
    {
        var needNginx = _plan.Origin != "downstream" || _o.Scenarios.Contains("nginx");
        var needHaproxy = _o.Scenarios.Contains("haproxy");
        List<string> missing = [];
        void Need(bool needed, bool present, string package)
        {
            if (needed && !present)
            {
                missing.Add(package);
            }
        }
        Need(true, Shell.Which("jq") is not null, "jq");
        // The WebSocket load is crank/Jobs' own (ClientWebSocket): neither wrk nor h2load.
        Need(_o.Load != "websocket", Shell.Which("wrk") is not null, "wrk");
        Need(_o.Load is "fixedrate" or "h2load", Shell.Which("h2load") is not null, "nghttp2-client");
        Need(true, Shell.Which("perl") is not null, "perl-base");
        Need(_o.OwnSessions, Shell.Which("setsid") is not null, "util-linux");
        Need(needNginx, File.Exists("/usr/sbin/nginx"), "nginx-light");
        Need(needHaproxy, File.Exists("/usr/sbin/haproxy"), "haproxy");
        // The peers run only when named (Peers): installed then, like HAProxy.
        foreach (var peer in Peers.All.Where(p => p.Name is not ("nginx" or "haproxy")))
        {
            Need(_o.Scenarios.Contains(peer.Name), File.Exists(peer.Binary), peer.Package);
        }
        Shell.Install(missing, _o.Install, JsonLog("apt.log"), Log, Warn);
        string? fatal = Shell.Which("jq") is null ? "jq is required"
            : _o.Load != "websocket" && Shell.Which("wrk") is null ? "wrk is required (apt-get install -y wrk)"
            : _o.Load is "fixedrate" or "h2load" && Shell.Which("h2load") is null ? $"--load {_o.Load} needs h2load (apt-get install -y nghttp2-client)"
            : null;
        if (_plan.Origin == "nginx" && !File.Exists("/usr/sbin/nginx"))
        {
            if (!_plan.OriginDefaulted)
            {
                fatal ??= "--origin nginx needs nginx (apt-get install -y nginx-light)";
            }
            else
            {
                // The default topology's origin: without nginx, Downstream, said loudly (the headline's ratios need nginx).
                Warn("nginx is not installed: Downstream is the origin, not the README headline's nginx (apt-get install -y nginx-light)");
                _plan.Origin = "downstream";
                _plan.TopologyNote = " (nginx missing)";
            }
        }
        if (fatal is not null)
        {
            Console.Error.WriteLine($"run-local: {fatal}");
            return false;
        }
        return true;
    }

    private static string? AppOf(string scenario) => scenario switch
    {
        "direct" => null,
        _ when Peers.Is(scenario) => null,
        "httpclientproxy" => "httpclientproxy",
        "yarp" => "yarp",
        _ => "llrp",
    };

    /// <summary>Publishes an app once per invocation: ok, failed or absent (no such project in this checkout).</summary>
    private void Publish(string app)
    {
        if (_publishState.ContainsKey(app))
        {
            return;
        }
        var publish = Path.Combine(_crankDir, "publish.sh");
        if (ProcessGroups.Run([publish, "--project", app], TimeSpan.FromSeconds(30)).Code != 0)
        {
            _publishState[app] = "absent";
            return;
        }
        Log($"publishing {app}");
        var log = JsonLog($"publish-{app}.log");
        File.WriteAllText(log, "");
        // 15 min: a cold publish of the largest app on the loaded 2-core box takes a few minutes.
        if (ProcessGroups.Run([publish, app], TimeSpan.FromSeconds(900), log: log).Code == 0)
        {
            _publishState[app] = "ok";
        }
        else
        {
            _publishState[app] = "failed";
            Warn($"publishing {app} failed; last lines of logs/publish-{app}.log:");
            Console.Error.Write(ProcessGroups.Tail(log, 10));
        }
    }

    private bool PublishAndSelect()
    {
        Publish("downstream");
        if (_publishState["downstream"] != "ok")
        {
            Console.Error.WriteLine("run-local: src/Downstream must publish (see logs/publish-downstream.log)");
            return false;
        }
        foreach (var s in _o.Scenarios)
        {
            string? reason = null;
            if (Peers.Of(s) is { } peer && !File.Exists(peer.Binary))
            {
                reason = $"{s} is not installed";
            }
            else if (AppOf(s) is { } app)
            {
                Publish(app);
                reason = _publishState[app] switch
                {
                    "absent" => $"the {app} project does not exist",
                    "failed" => $"{app} does not build (logs/publish-{app}.log)",
                    _ => null,
                };
            }
            if (reason is null)
            {
                _runnable.Add(s);
            }
            else if (_o.ExplicitScenarios)
            {
                // A default scenario is skipped quietly, a requested one fails the run.
                Warn($"{s} cannot run: {reason}");
                _failures++;
            }
            else
            {
                Log($"skipping {s}: {reason}");
            }
        }
        if (_runnable.Count == 0)
        {
            Warn("no scenario can run");
            return false;
        }
        if (_runnable.Count != _o.Scenarios.Count)
        {
            Log($"{_plan.Estimate(_runnable)} (the scenarios that can run here)");
        }
        return true;
    }

    private string PublishedExe(string app) => ProcessGroups.Run([Path.Combine(_crankDir, "publish.sh"), "--exe", app], TimeSpan.FromSeconds(30)).Out.Trim();

    // ------------------------------------------------------------------ run metadata

    private void WriteRunMetadata()
    {
        string Cmd(string[] cmd) => ProcessGroups.Run(cmd, TimeSpan.FromSeconds(30)).Out.Split('\n')[0].Trim();
        _gitHead = ProcessGroups.Run(["git", "-C", _root, "rev-parse", "HEAD"], TimeSpan.FromSeconds(30)) is (0, var h) ? h.Trim() : "unknown";
        // Leaving out analysis/results/: results folders hold no code a run builds, and a sitting (analysis/sweep.sh)
        // writes its own output folder there before each of its run-local.sh invocations.
        var dirty = ProcessGroups.Run(["git", "-C", _root, "status", "--porcelain", "--", ".", ":(exclude)analysis/results"], TimeSpan.FromSeconds(60)).Out.Trim().Length > 0;
        var cpu = File.ReadLines("/proc/cpuinfo").FirstOrDefault(l => l.StartsWith("model name", StringComparison.Ordinal)) is { } m
            ? m[(m.IndexOf(':') + 1)..].Trim() : "";
        var kernel = Cmd(["uname", "-r"]);
        var dotnet = Shell.Which("dotnet") is null ? "none" : Cmd(["dotnet", "--version"]);
        var wrk = Cmd(["wrk", "-v"]);
        var nginx = File.Exists("/usr/sbin/nginx") ? Cmd(["/usr/sbin/nginx", "-v"]) : "none";
        var haproxy = File.Exists("/usr/sbin/haproxy") ? Cmd(["/usr/sbin/haproxy", "-v"]) : "none";
        var (caddy, h2o) = (Peers.Version(Peers.Of("caddy")!), Peers.Version(Peers.Of("h2o")!));
        var started = DateTime.UtcNow.ToString("yyyy-MM-dd'T'HH:mm:ss'Z'", CultureInfo.InvariantCulture);
        var run = new JsonObject
        {
            ["date"] = started,
            ["commit"] = _gitHead,
            ["dirty"] = dirty,
            ["nproc"] = _plan.Machine.Nproc,
            ["cpuModel"] = cpu,
            ["kernel"] = kernel,
            ["dotnetVersion"] = dotnet,
            ["wrk"] = wrk,
            ["nginx"] = nginx,
            ["haproxy"] = haproxy,
            ["caddy"] = caddy,
            ["h2o"] = h2o,
            ["command"] = _commandLine,
            ["mode"] = _plan.Mode,
            ["rounds"] = _o.Rounds,
            ["duration"] = _o.Duration,
            ["warmup"] = _o.Warmup,
            ["connections"] = _o.Connections,
            ["loadThreads"] = _o.LoadThreads,
            ["threads"] = _o.ProxyThreads,
            ["requestBodySize"] = _o.BodySize,
            ["requestBodyFraming"] = _o.BodyFraming,
            ["presetHeaders"] = _o.Headers,
            ["load"] = _o.Load,
            ["rate"] = _o.Rate.Length == 0 ? null : JsonValue.Create(int.Parse(_o.Rate, CultureInfo.InvariantCulture)),
            ["streams"] = _o.Load == "h2load" ? _o.Streams : null,
            ["messageSize"] = _o.Load == "websocket" ? _o.MessageSize : null,
            ["protocols"] = _o.Protocols,
            ["frontEnd"] = _o.FrontEnd,
            ["path"] = _o.Path,
            ["pinned"] = _plan.PinningShort != "none",
            ["pinning"] = _plan.PinningShort,
            ["origin"] = _plan.Origin,
            ["ownSessions"] = _o.OwnSessions,
            ["profile"] = _o.Pgo,
            ["applicationEnvironment"] = new JsonArray([.. _o.AppEnv.Select(e => JsonValue.Create(e))]),
            ["scenarios"] = new JsonArray([.. _runnable.Select(s => JsonValue.Create(s))]),
            ["steadyTolerancePercent"] = _o.SteadyTolerance,
            ["steadyJitSharePercent"] = double.Parse(_o.SteadyJitShare, CultureInfo.InvariantCulture),
            ["steadyRetries"] = _o.SteadyRetries,
            ["warmupMax"] = _o.WarmupMax,
            ["warmQuietMethods"] = _o.WarmJit,
            ["warmQuietSeconds"] = Plan.WarmQuietSeconds,
        };
        Program.WriteJson(Path.Combine(_jsonDir, "run.json"), run);
        var sessions = _o.OwnSessions ? "one per job (setsid: an autogroup each)" : "one for every job (as crank's agent)";
        File.WriteAllText(Path.Combine(_jsonDir, "machine.txt"), string.Join('\n',
            $"date:        {started}",
            $"commit:      {_gitHead}{(dirty ? " (work tree has uncommitted changes)" : "")}",
            $"nproc:       {_plan.Machine.Nproc}",
            $"cpu:         {cpu}",
            $"kernel:      {kernel}",
            $"dotnet:      {dotnet}",
            $"wrk:         {wrk}",
            $"nginx:       {nginx}",
            $"haproxy:     {haproxy}",
            $"caddy:       {caddy}",
            $"h2o:         {h2o}",
            $"mode:        {_plan.Mode}",
            $"pinning:     {_plan.PinningText}",
            $"origin:      {_plan.OriginText}",
            $"sessions:    {sessions}",
            $"command:     {_commandLine}") + "\n");
    }

    // ------------------------------------------------------------------ crank mode

    private void RunCrank()
    {
        // One local agent (--profile local), or the three agents of --agents (--profile multimachine).
        List<string> machineArgs = ["--profile", "local"];
        if (_o.Agents.Count > 0)
        {
            machineArgs = ["--profile", "multimachine", "--variable", $"loadAgent={_o.Agents["load"]}",
                "--variable", $"applicationAgent={_o.Agents["application"]}", "--variable", $"downstreamAgent={_o.Agents["downstream"]}"];
            Log($"crank across the agents load={_o.Agents["load"]} application={_o.Agents["application"]} downstream={_o.Agents["downstream"]}");
        }
        foreach (var (k, v) in _o.GivenVariables)
        {
            machineArgs.AddRange(["--variable", $"{k}={v}"]);
        }
        System.Diagnostics.Process? agent = null;
        if (_o.Agents.Count == 0 && ProcessGroups.PortBusy(5010))
        {
            Log("a crank agent already listens on 127.0.0.1:5010; using it");
        }
        else if (_o.Agents.Count == 0)
        {
            agent = StartAgent();
            if (agent is null)
            {
                _failures++;
                return;
            }
        }
        for (var r = 1; r <= _o.Rounds; r++)
        {
            foreach (var s in Rounds.Order(r + _o.RoundOffset, _runnable))
            {
                CrankRun(s, r, machineArgs);
            }
        }
        _groups.Stop(agent, 30);
    }

    /// <summary>crank-agent with the offline hook (crank/OfflineAgentHook, docs/crank-offline.md): without it an agent
    /// with no internet dies on its first job trying to download dotnet-install.sh.</summary>
    private System.Diagnostics.Process? StartAgent()
    {
        var hookDir = Path.Combine(_root, "artifacts", "offline-agent-hook");
        Log("building the offline agent hook (logs/hook-build.log)");
        if (ProcessGroups.Run(["dotnet", "build", Path.Combine(_crankDir, "OfflineAgentHook", "OfflineAgentHook.csproj"), "-c", "Release", "-o", hookDir, "-nologo"],
                TimeSpan.FromSeconds(600), log: JsonLog("hook-build.log")).Code != 0)
        {
            Warn("the offline agent hook does not build (logs/hook-build.log)");
            return null;
        }
        Log("starting crank-agent on http://127.0.0.1:5010 with the offline hook (log: logs/agent.log)");
        // net8.0 tools on a .NET 10-only machine need DOTNET_ROLL_FORWARD=Major to start; the hook then removes it,
        // DOTNET_STARTUP_HOOKS and its own variables from the agent's environment, so jobs inherit none.
        var agent = _groups.Start(JsonLog("agent.log"), _root,
        [
            "env", "DOTNET_ROLL_FORWARD=Major", $"DOTNET_STARTUP_HOOKS={hookDir}/OfflineAgentHook.dll",
            $"LLRP_CRANK_DOTNET_INSTALL_DIR={hookDir}/dotnet-install", "LLRP_CRANK_HOOK_CLEAR=DOTNET_ROLL_FORWARD",
            _plan.Machine.AgentBin!, "--url", "http://127.0.0.1:5010", "--hostname", "127.0.0.1",
            "--dotnethome", Environment.GetEnvironmentVariable("DOTNET_ROOT") is { Length: > 0 } d ? d : "/usr/share/dotnet",
        ]);
        var deadline = DateTime.UtcNow.AddSeconds(60);
        while (!ProcessGroups.PortBusy(5010))
        {
            if (DateTime.UtcNow >= deadline || agent.HasExited)
            {
                Warn("crank-agent did not start (logs/agent.log)");
                _groups.Stop(agent, 5);
                return null;
            }
            Thread.Sleep(500);
        }
        return agent;
    }

    private void CrankRun(string s, int r, List<string> machineArgs)
    {
        var output = Path.Combine(_jsonDir, $"{s}.r{r}.json");
        // The fixed-rate, h2load and websocket loads have their own scenarios in benchmarks.yml (fixedrate-<scenario>,
        // h2load-<scenario>, websocket-<scenario>).
        var scenario = _o.Load == "wrk" ? s : $"{_o.Load}-{s}";
        List<string> args =
        [
            "--config", Path.Combine(_root, "benchmarks.yml"), "--scenario", scenario, "--json", output, .. machineArgs,
        ];
        foreach (var (k, v) in CrankVariables())
        {
            args.AddRange(["--variable", $"{k}={v}"]);
        }
        args.AddRange(["--property", $"scenario={s}", "--property", $"round={r}", "--property", "runner=crank/run-local.sh"]);
        if (_o.Pgo.Length > 0)
        {
            args.AddRange(["--profile", _o.Pgo]);
        }
        foreach (var kv in _o.AppEnv)
        {
            args.AddRange(["--application.environmentVariables", kv]);
        }
        Log($"{s} round {r}: crank {string.Join(' ', args)}");
        // The controller resolves beforeJob commands and localFolder paths from the repository root.
        if (ProcessGroups.Run([_plan.Machine.CrankBin!, .. args], TimeSpan.FromSeconds(_o.Warmup + _o.Duration + 900), _root, JsonLog($"{s}.r{r}.crank.log")).Code == 0)
        {
            var rps = File.Exists(output) ? JsonNode.Parse(File.ReadAllText(output))?["jobResults"]?["jobs"]?["load"]?["results"]?["http/rps/mean"]?.ToJsonString() : null;
            Log($"{s} round {r}: done ({rps ?? "?"} rps)");
            _progress?.Completed($"{s}.r{r}", $"{rps ?? "?"} RPS");
        }
        else
        {
            Warn($"{s} round {r}: crank failed (logs/{s}.r{r}.crank.log)");
            _failures++;
            _progress?.Completed($"{s}.r{r}", "failed");
        }
    }

    /// <summary>benchmarks.yml's variables of a crank run, in one table.</summary>
    private IEnumerable<(string, string)> CrankVariables()
    {
        yield return ("connections", I(_o.Connections));
        yield return ("loadThreads", I(_o.LoadThreads));
        yield return ("threads", I(_o.ProxyThreads));
        yield return ("requestBodySize", I(_o.BodySize));
        yield return ("requestBodyFraming", _o.BodyFraming);
        yield return ("presetHeaders", _o.Headers);
        yield return ("serverScheme", _o.ServerScheme);
        yield return ("downstreamScheme", _o.DownstreamScheme);
        yield return ("tlsDir", _tlsDir);
        if (_o.Rate.Length > 0)
        {
            yield return ("rate", _o.Rate);
        }
        yield return ("warmup", I(_o.Warmup));
        yield return ("duration", I(_o.Duration));
        yield return ("path", _o.Path);
        yield return ("streams", I(_o.Streams));
        if (_o.Load == "websocket")
        {
            yield return ("messageSize", I(_o.MessageSize));
        }
        // Only when given: an empty value would override the scenario's own (h2load-*'s protocols, llrp-kestrel-h1's frontEnd).
        if (_o.Protocols.Length > 0)
        {
            yield return ("protocols", _o.Protocols);
        }
        if (_o.FrontEnd.Length > 0)
        {
            yield return ("frontEnd", _o.FrontEnd);
        }
        yield return ("serverPort", I(_o.ProxyPort));
        yield return ("downstreamPort", I(_o.DownstreamPort));
    }

    // ------------------------------------------------------------------ fallback mode

    /// <summary>Runs one scenario until it is steady, at most 1 + --steady-retries attempts. An unsteady attempt's
    /// JSON moves to logs/&lt;scenario&gt;.r&lt;round&gt;.a&lt;attempt&gt;.json; the last attempt's stays, with the
    /// number of attempts and each one's verdict in its properties (steadyAttempts, steadyHistory).</summary>
    private void RunSteady(string s, int r)
    {
        var output = Path.Combine(_jsonDir, $"{s}.r{r}.json");
        var history = new List<string>();
        double? verdict;
        var attempt = 1;
        while (true)
        {
            var before = _failures;
            File.Delete(output);
            RunFallback(s, r, attempt);
            // A run that failed outright (or wrote nothing) is a failure, not an unsteady run: no retry.
            if (!File.Exists(output) || _failures != before)
            {
                _progress?.Completed($"{s}.r{r}", _unavailable.Contains(s) ? "skipped from now on" : "failed");
                return;
            }
            var results = MainResults(JsonNode.Parse(File.ReadAllText(output))!);
            verdict = Num(results, "steady/ok");
            var change = Num(results, "steady/change") is { } c ? D(Math.Round(c * 10) / 10) : "";
            var jit = Num(results, "steady/jit-share") is { } j ? D(Math.Round(j * 100) / 100) : "";
            history.Add($"attempt {attempt}: steady {(verdict is { } v ? D(v) : "n/a")}, halves {change} %{(jit.Length > 0 ? $", JIT {jit} % of CPU" : "")}");
            if (!Steadiness.Retry(verdict, attempt, _o.SteadyRetries))
            {
                break;
            }
            File.Move(output, JsonLog($"{s}.r{r}.a{attempt}.json"), overwrite: true);
            attempt++;
            _retriesDone++;
            Log($"{s}.r{r}: not steady; attempt {attempt} of {_o.SteadyRetries + 1}");
        }
        if (verdict == 0)
        {
            _unsteadyRuns++;
            Warn($"{s}.r{r}: NOT steady after {attempt} attempt(s); the run stays flagged");
        }
        var json = JsonNode.Parse(File.ReadAllText(output))!;
        var properties = json["jobResults"]!["properties"]!.AsObject();
        properties["steadyAttempts"] = I(attempt);
        properties["steadyHistory"] = string.Join("; ", history);
        Program.WriteJson(output, json);
        var rps = Num(json["jobResults"]?["jobs"]?["load"]?["results"], "http/rps/mean");
        _progress?.Completed($"{s}.r{r}", $"{(rps is { } mean ? mean.ToString("N0", CultureInfo.InvariantCulture) : "?")} RPS, " +
            $"{(verdict switch { 1 => "steady", 0 => "NOT steady", _ => "steadiness n/a" })} after {attempt} attempt(s)");
    }

    /// <summary>The results of the process under test: the proxy's, or the origin's for direct.</summary>
    private static JsonNode? MainResults(JsonNode run)
    {
        var jobs = run["jobResults"]?["jobs"];
        return (jobs?["application"] ?? jobs?["downstream"])?["results"];
    }

    private static double? Num(JsonNode? results, string name) =>
        results?[name] is JsonValue v && v.TryGetValue<double>(out var d) ? d : null;

    private bool Listening(string[] inNamespace, string address, int port) =>
        ProcessGroups.Run([.. inNamespace, "bash", "-c", $"(exec 3<>/dev/tcp/{address}/{port}) 2>/dev/null"], TimeSpan.FromSeconds(10)).Code == 0;

    /// <summary>One run: writes &lt;scenario&gt;.r&lt;round&gt;.json and its logs under
    /// logs/&lt;scenario&gt;.r&lt;round&gt;[.a&lt;attempt&gt;].* (attempt 1 without the suffix). Mirrors benchmarks.yml:
    /// same executables, arguments, ready texts and load job; this plays the agent's part (start in order, wait for
    /// readiness, collect statistics, stop with SIGTERM).</summary>
    private void RunFallback(string s, int r, int attempt)
    {
        var tag = attempt == 1 ? $"{s}.r{r}" : $"{s}.r{r}.a{attempt}";
        var logs = Path.Combine(_jsonDir, "logs");
        var output = Path.Combine(_jsonDir, $"{s}.r{r}.json");
        var samples = Path.Combine(logs, $"{tag}.samples");
        var kind = s switch { "direct" => "none", _ when Peers.Is(s) => s, _ => "dotnet" };
        var app = AppOf(s);
        var client = s switch
        {
            "llrp-llhttp" => "llhttp",
            "llrp-httpclient" => "httpclient",
            "llrp-httpclientwithcontext" => "httpclient-httpcontext",
            "llrp-yarp" => "yarp",
            "llrp-kestrel-h1" => "llhttp",
            _ => "",
        };
        // LLRP's front end: the scenario's own (llrp-kestrel-h1), else --front-end.
        var frontEnd = s == "llrp-kestrel-h1" ? "kestrel" : _o.FrontEnd;
        // --protocols and the front end, as each kind of proxy takes them.
        var (protoEnv, protoArgs) = Protocols.ProxyArgs(kind, app, _o.Protocols, frontEnd, Protocols.FrontEndOption);
        var targetPort = kind == "none" ? _o.DownstreamPort : _o.ProxyPort;
        // --pin: the load on CPU 0, proxy and origin on CPU 1; --pin-proxy: the proxy alone on CPU 1.
        string[] cpu0 = ["taskset", "-c", "0"], cpu1 = ["taskset", "-c", "1"];
        string[] pinApp = _plan.Pin == "none" ? [] : cpu1;
        string[] pinDs = _plan.Pin == "load" ? cpu1 : _plan.Pin == "proxy" ? cpu0 : [];
        string[] pinLoad = _plan.Pin == "none" ? [] : cpu0;

        // Each port is checked where it will listen (in its namespace with --netns).
        var busy = Listening(_inDownstream, _dsTarget, _o.DownstreamPort) ? $"{_dsTarget}:{_o.DownstreamPort}"
            : kind != "none" && Listening(_inApplication, _srvTarget, _o.ProxyPort) ? $"{_srvTarget}:{_o.ProxyPort}" : null;
        if (busy is not null)
        {
            Warn($"{tag}: {busy} is already in use; run skipped");
            _failures++;
            return;
        }
        File.WriteAllText(samples, "");

        // TLS (--server-scheme / --downstream-scheme https): the run's certificate, as each kind of server takes it. The
        // .NET apps take an https --urls certificate from Kestrel's configuration; the baselines trust the run's
        // authority through SSL_CERT_FILE (the file the runtime reads its roots from on Linux), LLRP through --downstreamTrust.
        string[] kestrelTls = [$"--Kestrel:Certificates:Default:Path={_tlsDir}/cert.pem", $"--Kestrel:Certificates:Default:KeyPath={_tlsDir}/key.pem"];
        string[] serverTls = _o.ServerScheme == "http" ? [] : [$"TLS_CERT={_tlsDir}/cert.pem", $"TLS_KEY={_tlsDir}/key.pem"];
        string[] downstreamCa = _o.DownstreamScheme == "http" ? [] : [$"DOWNSTREAM_TLS_CA={_tlsDir}/ca.pem"];
        string[] originTls = _o.DownstreamScheme == "http" ? [] : [$"TLS_CERT={_tlsDir}/cert.pem", $"TLS_KEY={_tlsDir}/key.pem"];

        // 1. downstream (crank job "downstream"): the Downstream app, or nginx as the origin (--origin nginx)
        var dsLog = Path.Combine(logs, $"{tag}.downstream.log");
        var dsReady = "Application started.";
        System.Diagnostics.Process ds;
        if (_plan.Origin == "nginx")
        {
            Directory.CreateDirectory(Path.Combine(logs, $"{tag}.origin"));
            ds = _groups.Start(dsLog, _crankDir,
            [
                .. _inDownstream, .. pinDs, "env", $"LISTEN_ADDRESS={_dsListen}", $"LISTEN_PORT={_o.DownstreamPort}", "NGINX_CONFIG=origin.conf",
                $"JOB_WORK_DIR={logs}/{tag}.origin", .. originTls, Path.Combine(_crankDir, "nginx-job.sh"),
            ]);
            dsReady = "nginx-job: ready";
        }
        else
        {
            var exe = PublishedExe("downstream");
            string[] dsTls = _o.DownstreamScheme == "http" ? [] : kestrelTls;
            ds = _groups.Start(dsLog, Path.GetDirectoryName(exe)!,
                [.. _inDownstream, .. pinDs, exe, "--urls", $"{_o.DownstreamScheme}://{_dsListen}:{_o.DownstreamPort}", .. dsTls]);
        }
        if (!_groups.WaitReady(ds, dsLog, dsReady, TimeSpan.FromSeconds(ReadyTimeoutSeconds)))
        {
            _groups.Stop(ds, 5);
            _failures++;
            return;
        }

        // 2. application (the proxy), with the pgo/nopgo profile and --app-env variables
        List<string> env = _o.Pgo switch
        {
            "pgo" => ["DOTNET_TieredPGO=1", "DOTNET_ReadyToRun=0", "DOTNET_TC_QuickJitForLoops=1"],
            "nopgo" => ["DOTNET_TieredPGO=0"],
            _ => [],
        };
        env.AddRange(_o.AppEnv);
        var appDir = _crankDir;
        List<string> appCmd = [];
        var ready = "";
        var threads = I(_o.ProxyThreads);
        switch (kind)
        {
            case "nginx":
                Directory.CreateDirectory(Path.Combine(logs, $"{tag}.nginx"));
                appCmd = ["env", $"LISTEN_ADDRESS={_srvListen}", $"LISTEN_PORT={_o.ProxyPort}", $"DOWNSTREAM_ADDRESS={_dsTarget}",
                    $"DOWNSTREAM_PORT={_o.DownstreamPort}", $"JOB_WORK_DIR={logs}/{tag}.nginx", $"NGINX_WORKERS={threads}",
                    .. serverTls, .. downstreamCa, .. protoEnv, Path.Combine(_crankDir, "nginx-job.sh")];
                ready = "nginx-job: ready";
                break;
            case "haproxy":
                appCmd = ["env", $"LISTEN_ADDRESS={_srvListen}", $"LISTEN_PORT={_o.ProxyPort}", $"DOWNSTREAM_ADDRESS={_dsTarget}",
                    $"DOWNSTREAM_PORT={_o.DownstreamPort}", $"HAPROXY_THREADS={threads}", .. serverTls, .. downstreamCa,
                    .. protoEnv, Path.Combine(_crankDir, "haproxy-job.sh")];
                ready = "haproxy-job: ready";
                break;
            case "caddy" or "h2o":
                // As HAProxy: the job's own thread variable (Caddy's GOMAXPROCS, h2o's num-threads); h2o refuses
                // DOWNSTREAM_TLS_CA (crank/h2o-job.sh --help).
                appCmd = ["env", $"LISTEN_ADDRESS={_srvListen}", $"LISTEN_PORT={_o.ProxyPort}", $"DOWNSTREAM_ADDRESS={_dsTarget}",
                    $"DOWNSTREAM_PORT={_o.DownstreamPort}", $"{Peers.Of(kind)!.ThreadsVariable}={threads}", .. serverTls, .. downstreamCa,
                    .. protoEnv, Path.Combine(_crankDir, $"{kind}-job.sh")];
                ready = $"{kind}-job: ready";
                break;
            case "dotnet":
                var exe = PublishedExe(app!);
                appDir = Path.GetDirectoryName(exe)!;
                appCmd = [exe, "--urls", $"{_o.ServerScheme}://{_srvListen}:{_o.ProxyPort}", "--downstream", $"{_o.DownstreamScheme}://{_dsTarget}:{_o.DownstreamPort}"];
                if (app == "llrp")
                {
                    if (_o.ServerScheme != "http")
                    {
                        appCmd.AddRange(["--certificate", $"{_tlsDir}/cert.pem", "--certificateKey", $"{_tlsDir}/key.pem"]);
                    }
                    if (_o.DownstreamScheme != "http")
                    {
                        appCmd.AddRange(["--downstreamTrust", $"{_tlsDir}/ca.pem"]);
                    }
                }
                else
                {
                    if (_o.ServerScheme != "http")
                    {
                        appCmd.AddRange(kestrelTls);
                    }
                    if (_o.DownstreamScheme != "http")
                    {
                        env.Add($"SSL_CERT_FILE={_tlsDir}/ca.pem");
                    }
                }
                // Every .NET process reports over the last --duration seconds with load, i.e. the measured window: LLRP
                // its own figures (src/LLRP/Diagnostics/SelfReport.cs) and the methods JIT-compiled, the baselines the
                // methods JIT-compiled (src/Baselines/Shared/JitActivity.cs).
                if (client.Length > 0)
                {
                    appCmd.AddRange(["--client", client]);
                }
                // Equal threads (benchmarks.yml's "threads"): LLRP's epoll loops; the baselines have no count of their
                // own, and the runtime sizes their thread pool, socket engine and Kestrel's I/O queues from the
                // processors it sees.
                if (app == "llrp")
                {
                    appCmd.AddRange(["--engineThreads", threads]);
                }
                else
                {
                    env.Add($"DOTNET_PROCESSOR_COUNT={threads}");
                }
                appCmd.AddRange(["--statsInterval", "1", "--statsWindow", I(_o.Duration), .. protoArgs]);
                ready = "Application started.";
                break;
        }
        System.Diagnostics.Process? proxy = null;
        var appLog = Path.Combine(logs, $"{tag}.application.log");
        if (kind != "none")
        {
            proxy = _groups.Start(appLog, appDir, [.. _inApplication, "env", .. env, .. pinApp, .. appCmd]);
            if (!_groups.WaitReady(proxy, appLog, ready, TimeSpan.FromSeconds(ReadyTimeoutSeconds)))
            {
                var appExit = _groups.Stop(proxy, 5);
                _groups.Stop(ds, 5);
                // LLRP exits with 2 when it rejects its options, e.g. a --client this build does not have yet: for a
                // scenario that was only a default, that means "cannot run here", not a failed run.
                if (appExit == 2 && !_o.ExplicitScenarios)
                {
                    Log($"skipping {s} from now on: the proxy rejected its options (exit code 2)");
                    _unavailable.Add(s);
                }
                else
                {
                    _failures++;
                }
                return;
            }
        }

        // 3. load (crank job "load"), with a hook that samples /proc around the measured run.
        var (targetAddress, targetScheme) = kind == "none" ? (_dsTarget, _o.DownstreamScheme) : (_srvTarget, _o.ServerScheme);
        var url = $"{targetScheme}://{targetAddress}:{targetPort}{_o.Path}";
        var firstStatus = "";
        if (Shell.Which("curl") is not null)
        {
            string[] curlTls = targetScheme == "http" ? [] : ["--cacert", $"{_tlsDir}/ca.pem"];
            if (kind != "none")
            {
                curlTls = [.. curlTls, .. Protocols.Curl(_o.Protocols, targetScheme)];
            }
            var websocket = _o.Load == "websocket";
            // A handshake's 101 is printed only at --max-time (curl waits for a final answer): 2 s, not 5, then.
            firstStatus = ProcessGroups.Run([.. _inLoad, "curl", "-s", .. curlTls, .. websocket ? CurlHandshake : [], "-o", "/dev/null", "-w", "%{http_code}",
                "--max-time", websocket ? "2" : "5", url], TimeSpan.FromSeconds(15)).Out.Trim();
            if (websocket ? firstStatus != "101" : !firstStatus.StartsWith('2'))
            {
                Warn($"{tag}: first request to {url} answered '{(firstStatus.Length > 0 ? firstStatus : "nothing")}'");
            }
        }
        // The servers the samples cover: the nginx and HAProxy jobs run theirs as a child and name it in their log
        // (##ChildProcessId); nginx's workers, when NGINX_WORKERS > 1, are that child's children, which proc-sample.sh counts.
        var dsPid = ProcessGroups.MeasuredPid(ds, dsLog);
        var samplePids = proxy is null ? $"downstream={dsPid}" : $"application={ProcessGroups.MeasuredPid(proxy, appLog)} downstream={dsPid}";
        // .NET proxies: adaptive warm-up, ended by the proxy's JIT going quiet (crank/jit-quiet.sh reads its log).
        _warmArgs = [];
        List<string> warmEnv = [];
        var loadLimit = _o.Warmup + _o.Duration + 60;
        if (kind == "dotnet" && _o.WarmupMax > 0 && _o.Load != "fixedrate")
        {
            File.Delete(Path.Combine(logs, $"{tag}.jit-state"));
            _warmArgs = ["--warmup-max", I(_o.WarmupMax)];
            warmEnv = [$"WRK_JOB_WARM_PROBE={_crankDir}/jit-quiet.sh", $"JIT_LOG={appLog}", $"JIT_STATE={logs}/{tag}.jit-state",
                $"JIT_QUIET_METHODS={_o.WarmJit}", $"JIT_QUIET_SECONDS={Plan.WarmQuietSeconds}"];
            loadLimit = _o.WarmupMax + _o.Duration + 60;
            Log($"{tag}: load {_o.Warmup}-{_o.WarmupMax}s (until the JIT is quiet) + {_o.Duration}s on {url}");
        }
        else
        {
            Log($"{tag}: load {_o.Warmup}s + {_o.Duration}s on {url}");
        }
        // With --netns the server under load listens in another namespace than the load: SAMPLE_NETNS points
        // proc-sample.sh's connection count there.
        var sampleNetns = _o.Netns.GetValueOrDefault(kind == "none" ? "downstream" : "application", "");
        var maxErrors = _yml["maxErrors"];
        // The request matrix (benchmarks.yml's requestBodySize, requestBodyFraming, presetHeaders) goes to every load job.
        List<string> common = ["--headers", _o.Headers, "--body-size", I(_o.BodySize), "--body-framing", _o.BodyFraming, "--max-errors", maxErrors];
        var loadLog = Path.Combine(logs, $"{tag}.load.log");
        var load = _groups.Start(loadLog, _crankDir,
        [
            .. _inLoad, "env", $"SAMPLE_PIDS={samplePids}", $"SAMPLE_OUT={samples}", $"SAMPLE_PORT={targetPort}", $"SAMPLE_NETNS={sampleNetns}",
            $"WRK_JOB_HOOK={_crankDir}/proc-sample.sh", .. warmEnv, "timeout", "--kill-after=5", I(loadLimit), .. pinLoad,
            .. LoadJobs[_o.Load](this, url, common),
        ]);
        load.WaitForExit();
        var loadRc = load.ExitCode;
        _groups.Stop(load, 1);

        // 4. stop: application first, then downstream (crank stops jobs with SIGTERM, too)
        var appRc = proxy is null ? "" : I(_groups.Stop(proxy, 10));
        var dsRc = I(_groups.Stop(ds, 10));

        // 5. results, in the shape of crank's --json output
        var loadBlocks = StatisticsBlocks.Parse(StatisticsBlocks.Of(ProcessGroups.ReadShared(loadLog)));
        var requests = loadBlocks is null ? 0 : StatisticsBlocks.Last(loadBlocks, "http/requests") ?? 0;
        var vars = new JsonObject
        {
            ["serverScheme"] = _o.ServerScheme,
            ["downstreamScheme"] = _o.DownstreamScheme,
            ["serverAddress"] = _srvTarget,
            ["serverListenAddress"] = _yml["serverListenAddress"],
            ["serverPort"] = _o.ProxyPort,
            ["downstreamAddress"] = _dsTarget,
            ["downstreamListenAddress"] = _yml["downstreamListenAddress"],
            ["maxErrors"] = int.Parse(maxErrors, CultureInfo.InvariantCulture),
            ["downstreamPort"] = _o.DownstreamPort,
            ["connections"] = _o.Connections,
            ["loadThreads"] = _o.LoadThreads,
            ["threads"] = _o.ProxyThreads,
            ["warmup"] = _o.Warmup,
            ["duration"] = _o.Duration,
            ["path"] = _o.Path,
            ["responseSize"] = _o.ResponseSize,
            ["requestBodySize"] = _o.BodySize,
            ["requestBodyFraming"] = _o.BodyFraming,
            ["presetHeaders"] = _o.Headers,
            ["load"] = _o.Load,
        };
        if (_o.Rate.Length > 0)
        {
            vars["rate"] = int.Parse(_o.Rate, CultureInfo.InvariantCulture);
        }
        if (client.Length > 0)
        {
            vars["client"] = client;
        }
        if (_o.Load == "h2load")
        {
            vars["streams"] = _o.Streams;
        }
        if (_o.Load == "websocket")
        {
            vars["messageSize"] = _o.MessageSize;
        }
        if (_o.Protocols.Length > 0)
        {
            vars["protocols"] = _o.Protocols;
        }
        if (frontEnd.Length > 0 && app == "llrp")
        {
            vars["frontEnd"] = frontEnd;
        }
        var sampleLines = File.ReadAllLines(samples);
        var loadJob = JobJson("load", loadLog, null, requests, vars);
        var dsJob = JobJson("downstream", dsLog, sampleLines, requests, vars);
        var jobs = proxy is null
            ? new JsonObject { ["load"] = loadJob, ["downstream"] = dsJob }
            : new JsonObject { ["downstream"] = dsJob, ["application"] = JobJson("application", appLog, sampleLines, requests, vars), ["load"] = loadJob };
        string Edge(string phase) => sampleLines.Select(l => l.Split(' ')).FirstOrDefault(f => f.Length > 2 && f[0] == phase)?[2] ?? "";
        var run = new JsonObject
        {
            ["returnCode"] = loadRc == 0 ? 0 : 1,
            ["jobResults"] = new JsonObject
            {
                ["jobs"] = jobs,
                ["properties"] = new JsonObject
                {
                    ["scenario"] = s,
                    ["round"] = I(r),
                    ["runner"] = "crank/run-local.sh",
                    ["mode"] = "fallback",
                    ["commit"] = _gitHead,
                    ["pinning"] = _plan.PinningShort,
                    ["origin"] = _plan.Origin,
                    ["ownSessions"] = _o.OwnSessions,
                    ["profile"] = _o.Pgo,
                    ["applicationEnvironment"] = string.Join(' ', _o.AppEnv),
                    ["firstRequestStatus"] = firstStatus,
                    ["loadExitCode"] = I(loadRc),
                    ["applicationExitCode"] = appRc,
                    ["downstreamExitCode"] = dsRc,
                    ["measureStartEpochNs"] = Edge("measure-start"),
                    ["measureEndEpochNs"] = Edge("measure-end"),
                    ["attempt"] = I(attempt),
                },
            },
            ["benchmarks"] = new JsonArray(),
        };
        Program.WriteJson(output, run);

        if (loadRc != 0)
        {
            Warn($"{tag}: load job failed with exit code {loadRc} (logs/{tag}.load.log)");
            _failures++;
            return;
        }
        var who = proxy is null ? "downstream" : "proxy";
        Log($"{tag}: {RunSummary.Line(run, who)}");
        var main = MainResults(run);
        if (Num(main, "steady/cpu-ok") == 0)
        {
            Warn($"{tag}: NOT steady: the {who}'s CPU us/request changed by more than {_o.SteadyTolerance}% between the halves of the measured window");
        }
        if (Num(main, "steady/jit-ok") == 0)
        {
            Warn($"{tag}: NOT steady: the {who} spent more than {_o.SteadyJitShare}% of its CPU time in the measured window JIT-compiling (still tiering up: a longer --warmup-max may help)");
        }
    }

    /// <summary>crank's JobResult for one service: the statistics blocks its log holds and, with samples, its process
    /// figures over the measured window, aggregated by crank's rules (crank/results.jq).</summary>
    private JsonNode JobJson(string role, string logFile, string[]? samples, double requests, JsonObject vars)
    {
        List<JsonNode> blocks = [];
        var raw = StatisticsBlocks.Of(File.Exists(logFile) ? ProcessGroups.ReadShared(logFile) : "");
        if (StatisticsBlocks.Parse(raw) is { } parsed)
        {
            blocks.AddRange(parsed);
        }
        else
        {
            Warn($"{role} printed a statistics block that is not valid JSON; ignored (see {logFile})");
        }
        if (samples is not null)
        {
            var jit = StatisticsBlocks.Last(blocks, "jit/interior-share");
            var rows = Window.Figures(role, samples, requests, _ticksPerSecond, _plan.Machine.Nproc, _o.SteadyTolerance, jit,
                double.Parse(_o.SteadyJitShare, CultureInfo.InvariantCulture));
            if (rows.Count > 0)
            {
                blocks.Add(StatisticsBlocks.Block("run-local", rows, DateTime.UtcNow));
            }
        }
        var blocksFile = JsonLog($"{role}.{Environment.ProcessId}.blocks");
        File.WriteAllLines(blocksFile, blocks.Select(b => b.ToJsonString()));
        var environment = new JsonObject
        {
            ["hw"] = "Unspecified",
            ["env"] = "Unspecified",
            ["os"] = "linux",
            ["arch"] = RuntimeInformation.OSArchitecture == Architecture.X64 ? "x86_64" : RuntimeInformation.OSArchitecture.ToString().ToLowerInvariant(),
            ["proc"] = _plan.Machine.Nproc,
            ["runner"] = "run-local",
        };
        var (code, text) = ProcessGroups.Run(["jq", "-n", "--slurpfile", "blocks", blocksFile, "--argjson", "vars", vars.ToJsonString(),
            "--argjson", "env", environment.ToJsonString(), "-f", Path.Combine(_crankDir, "results.jq")], TimeSpan.FromSeconds(60));
        File.Delete(blocksFile);
        return code == 0 ? JsonNode.Parse(text)! : throw new InvalidOperationException($"crank/results.jq failed: {text}");
    }

    // ------------------------------------------------------------------ report

    /// <summary>The README's table and the PNG charts, from the JSON files just written (analysis/Report).</summary>
    private void Report()
    {
        if (!_o.Report || !Directory.EnumerateFiles(_jsonDir, "*.r*.json").Any())
        {
            return;
        }
        var log = JsonLog("report.log");
        Log($"report: dotnet run --project analysis/Report -c Release -- {Program.Relative(_root, _jsonDir)} (log: logs/report.log)");
        File.WriteAllText(log, "");
        // 15 min: the first build of analysis/Report on a loaded 2-core box, then the charts.
        if (ProcessGroups.Run(["dotnet", "run", "--project", Path.Combine(_root, "analysis", "Report", "Report.csproj"), "-c", "Release", "--", _jsonDir, "--print-table"],
                TimeSpan.FromSeconds(900), _root, log).Code == 0)
        {
            var inside = false;
            foreach (var line in File.ReadLines(log))
            {
                if (line.StartsWith("<!-- table:end -->", StringComparison.Ordinal))
                {
                    break;
                }
                if (inside)
                {
                    Console.Out.WriteLine(line);
                }
                inside |= line.StartsWith("<!-- table:start -->", StringComparison.Ordinal);
            }
            Log($"report: {Program.Relative(_root, _jsonDir)}/report.md");
        }
        else
        {
            Warn("the report failed; last lines of logs/report.log:");
            Console.Error.Write(ProcessGroups.Tail(log, 15));
            _failures++;
        }
    }
}
