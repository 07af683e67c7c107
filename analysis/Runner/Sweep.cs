using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;

namespace LLRP.Runner;

/// <summary>One run-local invocation per round: its name, connections, path, profile and scenarios.</summary>
internal sealed record SweepPoint(string Name, int Connections, string Path, string Profile, IReadOnlyList<string> Scenarios);

/// <summary>analysis/sweep.sh's options (null: the default of --quick or of a sitting, Sweep.MakePlan).</summary>
internal sealed class SweepOptions
{
    public bool Quick, DryRun, Report, Install, Fallback, Shared, Help;
    public int? Budget, Rounds, Duration, Warmup, WarmupMax, SteadyRetries;
    public string? Connections, Sizes, PgoConnections;
    public bool? Pgo;
    public int BaseConnections, ProxyPort, OriginPort;
    public string Pin = "", Origin = "", Out = "";
    public readonly List<string> MatrixArgs = [];
    public readonly List<string> Scenarios = [];
}

/// <summary>analysis/sweep.sh: connection counts and response sizes (and PGO profiles), repeated in interleaved rounds
/// through run-local, then analysis/Report on the saved JSON. Keeps to a time budget by cutting rounds, never the
/// warm-up: every point of a sitting gets the same warm-up and duration, so the default, pgo and nopgo points are
/// comparable.</summary>
internal sealed partial class Sweep
{
    // Seconds a run costs beyond warm-up + measured time (start origin and proxy, readiness, stop, JSON), and a run-local
    // invocation beyond its runs (publishing the apps, up to date). Measured on the 2-core box; the running averages
    // replace them once the sweep has timed its own invocations.
    private const int RunOverhead = 6, InvocationOverhead = 10;
    // The expected cost of steadiness on top of that, per run: the adaptive warm-up of a .NET run past its 20 s minimum
    // (assumed 10 s) and retries (assumed one run in eight, so an eighth of a run is added to every run).
    private const int AdaptiveExtra = 10, RetryShare = 8;
    // Seconds kept at the end of the budget for the report.
    private const int ReportReserve = 45;

    private readonly SweepOptions _o;
    private readonly string _root, _command;
    private readonly DateTime _started = DateTime.Now;
    private readonly List<SweepPoint> _points = [];
    private readonly List<string> _commands = [], _warnings = [];
    private readonly Lock _outputLock = new();
    private int _rounds, _budgetMinutes, _warmup, _duration, _warmupMax, _retries, _runsPerRound, _dotnetRunsPerRound;
    private string _out = "", _gitHead = "", _startState = "", _cpuModel = "", _sdk = "", _runtime = "", _kernel = "";
    private bool _dirty;
    private StreamWriter? _logFile;
    private Process? _child;

    private Sweep(SweepOptions o, string root, IEnumerable<string> args)
    {
        _o = o;
        _root = root;
        _command = "analysis/sweep.sh" + ShellWord.Spaced(args);
    }

    private static string I(int v) => v.ToString(CultureInfo.InvariantCulture);

    private void Write(TextWriter console, string line)
    {
        lock (_outputLock)
        {
            Progress.Write(console, line);
            _logFile?.WriteLine(line);
            _logFile?.Flush();
        }
    }

    private string Stamp => $"[sweep {DateTime.Now:HH:mm:ss} +{(int)(DateTime.Now - _started).TotalSeconds}s]";
    private void Log(string message) => Write(Console.Out, $"{Stamp} {message}");
    private void Warn(string message) => Write(Console.Error, $"{Stamp} WARNING: {message}");

    public static int Run(IReadOnlyList<string> args, string root)
    {
        SweepOptions o;
        try
        {
            o = Parse(args);
        }
        catch (UsageException e)
        {
            Console.Error.WriteLine($"sweep: {e.Message} (see --help)");
            return 2;
        }
        if (o.Help)
        {
            Cli.WriteHelp(Command);
            return 0;
        }
        return new Sweep(o, root, args).Execute();
    }

    private static bool IsDotnet(string s) => s.StartsWith("llrp-", StringComparison.Ordinal) || s is "httpclientproxy" or "yarp";

    private static readonly Binder<SweepOptions> B = new();
    private static readonly Argument<string[]> ScenarioArgument = new("SCENARIO")
    {
        Arity = ArgumentArity.ZeroOrMore,
        Description = "default: every scenario of benchmarks.yml (direct nginx haproxy yarp, the four llrp-* variants, httpclientproxy)",
    };

    /// <summary>A list of whole numbers; empty: none (--sizes '').</summary>
    private static Option<string> List(string name, string description) => Cli.Text(name, "", description, "LIST",
        v => v.Length == 0 && name == "--sizes" || ListPattern().IsMatch(v) ? null : $"{name} needs a comma-separated list of whole numbers, got '{v}'");

    /// <summary>An option passed on to run-local.sh as given (crank/README.md, "The matrix").</summary>
    private static Option<T> Pass<T>(Option<T> option) => B.Bind(option, (o, v, given) =>
    {
        if (given)
        {
            o.MatrixArgs.AddRange([option.Name, Convert.ToString(v, CultureInfo.InvariantCulture)!]);
        }
    });

    private static Option<bool> PinFlag(string name, string description) => B.Bind(Cli.Flag(name, description), (o, v) =>
        o.Pin = !v ? o.Pin : o.Pin.Length == 0 ? name : throw new UsageException("--pin and --pin-proxy exclude each other"));

    internal static readonly Command Command = Cli.Command("analysis/sweep.sh", """
        Benchmark sweep: connection counts and response sizes (and PGO profiles), repeated in interleaved rounds through
        crank/run-local.sh, then analysis/Report on the saved JSON (the same report run-local.sh writes). Keeps to a time
        budget by cutting rounds, never the warm-up: every point of a sitting gets the same warm-up and duration, so the
        default, pgo and nopgo points are comparable. Topology: run-local.sh's default unless --pin, --pin-proxy, --origin
        or --shared is given.
        Output: DIR/<point>/r<round>/ (run-local.sh's JSON, run.json, machine.txt, logs/), DIR/sitting.json (every run,
        run.json and sweep.json folded by analysis/aggregate.sh; `analysis/aggregate.sh --prune DIR` leaves only it before a
        sitting is committed), DIR/sweep.json (machine, commit, plan, every command), DIR/machine.txt, DIR/sweep.log, and
        DIR/report.md + PNG charts.
        Exit status: 0 when every run succeeded, 1 when some failed or were cut by the budget, 2 on bad usage.
        """,
        ScenarioArgument,
        B.Bind(Cli.Flag("--quick", "try the pipeline in a few minutes: 1 round, 1 s + 2 s runs, connections 32 64, size 1 KB, no adaptive " +
            "warm-up or retries (too short for steady state: for trying the scripts only)"), (o, v) => o.Quick = v),
        B.Bind(Cli.OptionalInt("--budget-minutes", "stop starting runs once M minutes are used (default 180; 6 with --quick); the measured " +
            "duration shrinks to fit the plan, down to 10 s; the warm-up never shrinks", min: 1, helpName: "M"), (o, v) => o.Budget = v),
        B.Bind(Cli.OptionalInt("--rounds", "rounds (default 3; 1 with --quick); each round runs every point once, scenarios interleaved " +
            "inside, in each round's own order (Rounds.Order, through run-local.sh --round-offset)", min: 1), (o, v) => o.Rounds = v),
        B.Bind(List("--connections", "connection sweep at the default response size (default 64,256; 32,64 with --quick)"),
            (o, v, given) => o.Connections = given ? v : null),
        B.Bind(List("--sizes", "response sizes in bytes for the size sweep, as the origin's /?s=N at the base connections (default: none, 1024 " +
            "with --quick; '' for none; with --origin nginx only sizes the origin serves, crank/nginx-job.sh's ORIGIN_BODY_SIZES); 10 B, the " +
            "origin's body for /, is the base point"), (o, v, given) => o.Sizes = !given ? null : v is "" ? "none" : v),
        B.Bind(Cli.Int("--base-connections", 64, "connections for the size sweep and the PGO points", helpName: "C"), (o, v) => o.BaseConnections = v),
        B.Bind(Cli.OptionalInt("--duration", "fixed measured seconds per run (default: what fits the budget, 2 with --quick)", min: 1, helpName: "S"),
            (o, v) => o.Duration = v),
        B.Bind(Cli.OptionalInt("--warmup", "warm-up seconds per run (default 20, run-local.sh's, docs/methodology.md; 1 with --quick)", helpName: "S"),
            (o, v) => o.Warmup = v),
        B.Bind(Cli.OptionalInt("--warmup-max", ".NET scenarios: adaptive warm-up until the proxy's JIT is quiet, at most S seconds (run-local.sh's " +
            "--warmup-max, default 60; 0 with --quick: fixed warm-up)", helpName: "S"), (o, v) => o.WarmupMax = v),
        B.Bind(Cli.OptionalInt("--steady-retries", "run an unsteady run again, at most N more times (run-local.sh's, default 2; 0 with --quick)"),
            (o, v) => o.SteadyRetries = v),
        B.Bind(Cli.Flag("--pgo", "also run the .NET variants with run-local's --pgo and --nopgo at the base point (default: on, except with --quick)"),
            (o, v) => o.Pgo = v ? true : o.Pgo),
        B.Bind(Cli.Flag("--no-pgo", "no pgo and nopgo points"), (o, v) => o.Pgo = !v ? o.Pgo : o.Pgo is null ? false : throw new UsageException("--pgo and --no-pgo exclude each other")),
        B.Bind(List("--pgo-connections", "the connection counts of those pgo and nopgo points (default: the base connections)"),
            (o, v, given) => o.PgoConnections = given ? v : null),
        PinFlag("--pin", "pass --pin to run-local.sh (wrk on CPU 0, proxy + origin on CPU 1)"),
        PinFlag("--pin-proxy", "pass --pin-proxy to run-local.sh (the proxy alone on CPU 1, wrk + origin on CPU 0)"),
        B.Bind(Cli.Choice("--origin", "", "pass --origin O to run-local.sh: nginx or downstream (the Downstream app)", "downstream", "nginx"), (o, v) => o.Origin = v),
        B.Bind(Cli.Flag("--shared", "pass --shared to run-local.sh (nothing pinned, Downstream as the origin)"), (o, v) => o.Shared = v),
        Pass(Cli.Int("--proxy-threads", 1, "pass --proxy-threads N to run-local.sh: every proxy's threads or processes (run the sweep once per " +
            "count, each with its own --out)")),
        Pass(Cli.Text("--headers", "", "pass the request matrix to run-local.sh (crank/README.md, \"The matrix\"): every point sends that request",
            "H", Cli.NonEmpty("--headers"))),
        Pass(Cli.Int("--request-body-size", 0, "as --headers")),
        Pass(Cli.Text("--request-body-framing", "", "as --headers", "F", Cli.NonEmpty("--request-body-framing"))),
        // Away from crank/smoke.sh's 8080/8081; when either is in use, the next free pair P+10,Q+10 ...
        B.Bind(Cli.Text("--ports", "18080,18081", "proxy and origin ports (away from crank/smoke.sh's 8080/8081; when either is in use, the " +
            "next free pair P+10,Q+10 ...)", "P,Q", v => PortsPattern().IsMatch(v) ? null : "--ports needs P,Q"), (o, v) =>
            (o.ProxyPort, o.OriginPort) = (int.Parse(v[..v.IndexOf(',')], CultureInfo.InvariantCulture), int.Parse(v[(v.IndexOf(',') + 1)..], CultureInfo.InvariantCulture))),
        B.Bind(Cli.Text("--out", "", "results directory (default analysis/results/<date>-<nproc>cpu-<cpu model>-<topology>; with --quick " +
            "artifacts/analysis/..., which git ignores)", "DIR", Cli.NonEmpty("--out", "a directory")), (o, v) => o.Out = v),
        B.Bind(Cli.Flag("--dry-run", "print the plan and the time estimate, run nothing"), (o, v) => o.DryRun = v),
        B.Bind(Cli.Flag("--no-report", "do not run analysis/Report at the end"), (o, v) => o.Report = !v),
        B.Bind(Cli.Flag("--no-install", "never call apt-get (wrk, nginx, HAProxy and jq are run-local.sh's to install)"), (o, v) => o.Install = !v),
        B.Bind(Cli.Flag("--fallback", "pass --fallback to run-local.sh (run the job scripts directly even where crank is installed)"),
            (o, v) => o.Fallback = v));

    internal static SweepOptions Parse(IReadOnlyList<string> args)
    {
        if (Cli.Parse(Command, args) is not { } parsed)
        {
            return new SweepOptions { Help = true };
        }
        var o = B.Apply(new SweepOptions(), parsed);
        o.Scenarios.AddRange(parsed.GetValue(ScenarioArgument) ?? []);
        return o;
    }

    [GeneratedRegex("^[0-9]+(,[0-9]+)*$")]
    private static partial Regex ListPattern();

    [GeneratedRegex("^([0-9]+),([0-9]+)$")]
    private static partial Regex PortsPattern();

    private static List<int> Numbers(string list) =>
        [.. list.Split(',', StringSplitOptions.RemoveEmptyEntries).Select(n => int.Parse(n, CultureInfo.InvariantCulture))];

    /// <summary>The defaults (--quick's or a sitting's), the points, and the measured duration that fits the budget.</summary>
    private void MakePlan()
    {
        var o = _o;
        string conns, sizes;
        bool pgo;
        if (o.Quick)
        {
            // Too short to be steady anyway: no adaptive warm-up, no retries.
            (_budgetMinutes, _rounds, conns, sizes, pgo) = (o.Budget ?? 6, o.Rounds ?? 1, o.Connections ?? "32,64", o.Sizes ?? "1024", o.Pgo ?? false);
            (_warmup, _warmupMax, _retries) = (o.Warmup ?? 1, o.WarmupMax ?? 0, o.SteadyRetries ?? 0);
            o.Duration ??= 2;
        }
        else
        {
            // run-local's default warm-up, the steady-state floor (docs/methodology.md).
            (_budgetMinutes, _rounds, conns, sizes, pgo) = (o.Budget ?? 180, o.Rounds ?? 3, o.Connections ?? "64,256", o.Sizes ?? "", o.Pgo ?? true);
            (_warmup, _warmupMax, _retries) = (o.Warmup ?? 20, o.WarmupMax ?? 60, o.SteadyRetries ?? 2);
        }
        if (sizes == "none")
        {
            sizes = "";
        }
        List<string> scenarios = o.Scenarios.Count > 0 ? o.Scenarios
            : ["direct", "nginx", "haproxy", "yarp", "llrp-llhttp", "llrp-httpclient", "llrp-httpclientwithcontext", "llrp-yarp", "httpclientproxy"];
        var dotnet = scenarios.Where(IsDotnet).ToList();
        pgo &= dotnet.Count > 0;
        var connList = Numbers(conns);
        foreach (var c in connList)
        {
            _points.Add(new($"c{c}-s10", c, "/", "", scenarios));
        }
        var b = o.BaseConnections;
        foreach (var z in sizes.Split(',', StringSplitOptions.RemoveEmptyEntries).Where(z => z != "10"))
        {
            _points.Add(new($"c{b}-s{z}", b, $"/?s={z}", "", scenarios));
        }
        if (!connList.Contains(b) && sizes.Length > 0)
        {
            _points.Add(new($"c{b}-s10", b, "/", "", scenarios));
        }
        if (pgo)
        {
            foreach (var c in Numbers(o.PgoConnections ?? I(b)))
            {
                _points.Add(new($"c{c}-s10-pgo", c, "/", "pgo", dotnet));
                _points.Add(new($"c{c}-s10-nopgo", c, "/", "nopgo", dotnet));
            }
        }
        _runsPerRound = _points.Sum(p => p.Scenarios.Count);
        _dotnetRunsPerRound = _points.Sum(p => p.Scenarios.Count(IsDotnet));
        // The longest measured time (15 s, run-local's default, down to 10 s) whose plan fits the budget; the warm-up stays.
        _duration = o.Duration ?? 15;
        while (o.Duration is null && Estimate(_warmup, _duration) > _budgetMinutes * 60 && _duration > 10)
        {
            _duration--;
        }
    }

    private int Reserve => _o.Report ? ReportReserve : 0;
    private int Adaptive => _warmupMax > _warmup ? 1 : 0;

    /// <summary>Seconds for the whole plan: the typical adaptive warm-up and retries.</summary>
    internal long Estimate(int warmup, int duration)
    {
        long run = warmup + duration + RunOverhead;
        return (_rounds * ((_points.Count * InvocationOverhead) + (_runsPerRound * run) + (_dotnetRunsPerRound * Adaptive * AdaptiveExtra)
            + (_retries > 0 ? _runsPerRound * run / RetryShare : 0))) + Reserve;
    }

    /// <summary>Seconds when every .NET run warms up to the cap and every run takes every attempt.</summary>
    private long Longest(int warmup, int duration) =>
        (_rounds * ((_points.Count * InvocationOverhead) + ((1 + _retries) * ((_runsPerRound * (warmup + duration + RunOverhead))
            + (_dotnetRunsPerRound * Adaptive * (_warmupMax - warmup)))))) + Reserve;

    private string DefaultOut()
    {
        var model = CpuModel().ToLowerInvariant();
        var slug = SlugJunk().Replace(Parenthesised().Replace(model, ""), "-").Trim('-');
        slug = slug[..Math.Min(32, slug.Length)];
        // --quick runs are for trying the pipeline, too short to keep: they go under the ignored artifacts/.
        var parent = _o.Quick ? Path.Combine(_root, "artifacts", "analysis") : Path.Combine(_root, "analysis", "results");
        // The topology in the name, as the committed sittings have it (run-local's default: pin-proxy-nginx-origin).
        var pinOrigin = _o.Pin + _o.Origin;
        var topo = _o.Shared && pinOrigin.Length == 0 ? "-shared"
            : pinOrigin.Length == 0 ? "-pin-proxy-nginx-origin"
            : (_o.Pin.Length > 0 ? "-" + _o.Pin[2..] : "") + (_o.Origin == "nginx" ? "-nginx-origin" : "");
        return Path.Combine(parent, $"{DateTime.Now:yyyyMMdd-HHmm}-{Environment.ProcessorCount}cpu-{(slug.Length > 0 ? slug : "unknown")}{topo}{(_o.Quick ? "-quick" : "")}");
    }

    [GeneratedRegex(@"\([^)]*\)")]
    private static partial Regex Parenthesised();

    [GeneratedRegex("[^a-z0-9]+")]
    private static partial Regex SlugJunk();

    private static string CpuModel() =>
        File.ReadLines("/proc/cpuinfo").FirstOrDefault(l => l.StartsWith("model name", StringComparison.Ordinal)) is { } m ? m[(m.IndexOf(':') + 1)..].Trim() : "";

    private int Execute()
    {
        try
        {
            MakePlan();
        }
        catch (UsageException e)
        {
            Console.Error.WriteLine($"sweep: {e.Message}");
            return 2;
        }
        _out = _o.Out.Length > 0 ? _o.Out : DefaultOut();
        var total = Estimate(_warmup, _duration);
        Log($"plan: {_points.Count} point(s) x {_rounds} round(s), {_runsPerRound} run(s) per round, {_warmup}s warm-up + {_duration}s measured per run");
        foreach (var p in _points)
        {
            Log($"  {p.Name}: -c {p.Connections}, path {p.Path}{(p.Profile.Length > 0 ? $", --{p.Profile}" : "")}: {string.Join(' ', p.Scenarios)}");
        }
        Log($"estimate: ~{(total + 59) / 60} min of a {_budgetMinutes} min budget (with the typical adaptive warm-up and retries; at most "
            + $"~{(Longest(_warmup, _duration) + 59) / 60} min if every .NET run needed the {_warmupMax}s cap and every run all {_retries + 1} attempts); results: {Program.Relative(_root, _out)}");
        if (total > _budgetMinutes * 60)
        {
            Warn($"the plan does not fit the budget even with {_warmup}s + {_duration}s runs: the last rounds will be cut (fewer points, sizes or rounds, or a larger --budget-minutes)");
        }
        if (_o.DryRun)
        {
            return 0;
        }
        Directory.CreateDirectory(_out);
        _out = Path.GetFullPath(_out);
        _logFile = new StreamWriter(Path.Combine(_out, "sweep.log"), append: true);
        WriteMachine();
        _startState = SourceState();
        WriteJson("running");
        using var interrupt = PosixSignalRegistration.Create(PosixSignal.SIGINT, Interrupted);
        using var terminate = PosixSignalRegistration.Create(PosixSignal.SIGTERM, Interrupted);
        Progress.Current = Progress.OnConsole("sweep", _rounds * _points.Count, TimeSpan.FromSeconds(Estimate(_warmup, _duration)));
        var (failures, cut) = RunPoints();
        Progress.Current.Finish();
        Progress.Current = null;
        var status = cut == 0 ? "complete" : $"cut by the budget ({cut} of {_rounds * _points.Count} invocations skipped)";
        WriteJson(status);
        Log($"sweep {status}; {(int)(DateTime.Now - _started).TotalSeconds}s used of {_budgetMinutes * 60}s");
        if (ProcessGroups.Run([Path.Combine(_root, "analysis", "aggregate.sh"), _out], TimeSpan.FromSeconds(600)).Code != 0)
        {
            Warn("analysis/aggregate.sh found no run to fold");
        }
        if (_o.Report)
        {
            Log($"report: dotnet run --project analysis/Report -c Release -- {Program.Relative(_root, _out)}");
            if (RunTee(["timeout", "300", "dotnet", "run", "--project", Path.Combine(_root, "analysis", "Report", "Report.csproj"), "-c", "Release", "--", _out]) == 0)
            {
                Log($"report: {Program.Relative(_root, _out)}/report.md");
            }
            else
            {
                Warn("the report failed (see above)");
                failures++;
            }
        }
        _logFile?.Dispose();
        return failures == 0 && cut == 0 ? 0 : 1;
    }

    private void Interrupted(PosixSignalContext context)
    {
        context.Cancel = true;
        Warn("interrupted; stopping the current run-local.sh");
        if (_child is { } child)
        {
            try
            {
                child.Kill(entireProcessTree: false);
            }
            catch (InvalidOperationException)
            {
                // already gone
            }
        }
        WriteJson("interrupted");
        Environment.Exit(130);
    }

    private (int Failures, int Cut) RunPoints()
    {
        var deadline = _started.AddMinutes(_budgetMinutes);
        int failures = 0, cut = 0, done = 0;
        long spentInvocations = 0, spentRuns = 0, timedRuns = 0;
        var total = _rounds * _points.Count;
        var (proxyPort, originPort) = (_o.ProxyPort, _o.OriginPort);
        var state = _startState;
        void Warning(string w)
        {
            _warnings.Add(w);
            Warn(w);
        }
        for (var r = 1; r <= _rounds; r++)
        {
            foreach (var p in _points)
            {
                // Cost of this invocation, from the sweep's own timings once it has some.
                var perRun = timedRuns == 0 ? _warmup + _duration + RunOverhead : (spentRuns + timedRuns - 1) / timedRuns;
                var invocation = done == 0 ? InvocationOverhead : spentInvocations / done;
                var need = invocation + (p.Scenarios.Count * perRun);
                var left = (long)(deadline - DateTime.Now).TotalSeconds - Reserve;
                if (need > left)
                {
                    Warning($"round {r} {p.Name}: skipped by the budget (needed ~{need}s, {left}s left)");
                    cut++;
                    Progress.Current?.Completed($"round {r} {p.Name}", "skipped by the budget");
                    continue;
                }
                var dir = Path.Combine(_out, p.Name, $"r{r}");
                // Other work on the box may hold the ports (a colleague's test, a smoke run): move to the next free pair.
                var tries = 0;
                while (tries < 20 && (ProcessGroups.PortBusy(proxyPort) || ProcessGroups.PortBusy(originPort)))
                {
                    Log($"ports {proxyPort}/{originPort} are in use; trying {proxyPort + 10}/{originPort + 10}");
                    (proxyPort, originPort, tries) = (proxyPort + 10, originPort + 10, tries + 1);
                }
                if (tries == 20)
                {
                    Warning($"round {r} {p.Name}: no free port pair from {proxyPort} upwards; skipped");
                    failures++;
                    continue;
                }
                // The apps are published again by every run-local invocation, so an edit under src/ during the sweep
                // would mix builds: fingerprint the sources before each invocation and say so when it changes.
                var now = SourceState();
                if (now != state)
                {
                    Warning($"src/ or crank/ changed during the sweep (fingerprint {state} -> {now} before round {r} {p.Name}): later runs measure another build");
                    state = now;
                }
                // --no-report: one report over the whole sweep at the end. --round-offset: round r runs its scenarios in
                // round r's order (Rounds.Order), though run-local runs one.
                List<string> args = ["--rounds", "1", "--round-offset", I(r - 1), "--warmup", I(_warmup), "--warmup-max", I(_warmupMax),
                    "--steady-retries", I(_retries), "--duration", I(_duration), "--connections", I(p.Connections), "--path", p.Path,
                    "--no-report", "--proxy-port", I(proxyPort), "--downstream-port", I(originPort), "--json-dir", dir];
                if (p.Profile.Length > 0)
                {
                    args.Add("--" + p.Profile);
                }
                if (_o.Pin.Length > 0)
                {
                    args.Add(_o.Pin);
                }
                if (_o.Origin.Length > 0)
                {
                    args.AddRange(["--origin", _o.Origin]);
                }
                args.AddRange(_o.MatrixArgs);
                if (_o.Shared)
                {
                    args.Add("--shared");
                }
                if (!_o.Install)
                {
                    args.Add("--no-install");
                }
                if (_o.Fallback)
                {
                    args.Add("--fallback");
                }
                args.AddRange(p.Scenarios);
                _commands.Add("crank/run-local.sh" + ShellWord.Spaced(args));
                WriteJson("running");
                Log($"[{done + cut + 1}/{total}] round {r}, {p.Name} (-c {p.Connections}, {p.Path}{(p.Profile.Length > 0 ? ", " + p.Profile : "")}): {string.Join(' ', p.Scenarios)}");
                var t0 = DateTime.Now;
                // Hard limit: twice the estimate plus a minute, never past the budget by more than two minutes.
                var limit = Math.Min((need * 2) + 60, left + 120);
                var rc = RunTee(["timeout", "--kill-after=30", limit.ToString(CultureInfo.InvariantCulture), Path.Combine(_root, "crank", "run-local.sh"), .. args]);
                var t1 = DateTime.Now;
                // Split the time into publishing (until run-local writes run.json) and runs, for the next estimates.
                var results = p.Scenarios.Count(s => File.Exists(Path.Combine(dir, $"{s}.r1.json")));
                var seconds = (long)(t1 - t0).TotalSeconds;
                if (results > 0)
                {
                    var runJson = Path.Combine(dir, "run.json");
                    var publish = File.Exists(runJson) ? Math.Max(0, (long)(File.GetLastWriteTime(runJson) - t0).TotalSeconds) : 0;
                    spentInvocations += publish;
                    spentRuns += seconds - publish;
                    timedRuns += results;
                }
                else
                {
                    spentInvocations += seconds;
                }
                done++;
                if (results < p.Scenarios.Count)
                {
                    Warning($"round {r} {p.Name}: {p.Scenarios.Count - results} of {p.Scenarios.Count} scenario(s) wrote no result (run-local.sh lines in sweep.log; logs in {p.Name}/r{r}/logs)");
                    failures++;
                }
                else if (rc is 124 or 137)
                {
                    Warning($"round {r} {p.Name}: run-local.sh hit the {limit}s limit");
                    failures++;
                }
                else if (rc != 0)
                {
                    Warning($"round {r} {p.Name}: run-local.sh exited with {rc} (failed runs; its lines are in sweep.log)");
                    failures++;
                }
                Log($"round {r} {p.Name}: done in {seconds}s");
                Progress.Current?.Completed($"round {r} {p.Name}", $"{results} of {p.Scenarios.Count} scenario(s) in {seconds}s");
            }
        }
        return (failures, cut);
    }

    /// <summary>Runs a child in the repository root, its output on this console and in sweep.log; its exit status.</summary>
    private int RunTee(List<string> command)
    {
        var psi = new ProcessStartInfo(command[0], command.Skip(1)) { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true, WorkingDirectory = _root };
        using var p = new Process { StartInfo = psi };
        p.OutputDataReceived += (_, e) => { if (e.Data is not null) { Write(Console.Out, e.Data); } };
        p.ErrorDataReceived += (_, e) => { if (e.Data is not null) { Write(Console.Error, e.Data); } };
        p.Start();
        _child = p;
        p.BeginOutputReadLine();
        p.BeginErrorReadLine();
        p.WaitForExit();
        _child = null;
        return p.ExitCode;
    }

    private string SourceState() =>
        ProcessGroups.Run(["bash", "-c", "{ git diff HEAD -- src crank 2>/dev/null; git ls-files -o --exclude-standard -z -- src crank 2>/dev/null | xargs -0 -r sha1sum; } | sha1sum | cut -c1-12"],
            TimeSpan.FromSeconds(120), _root).Out.Trim();

    private void WriteMachine()
    {
        string Out(string[] cmd) => ProcessGroups.Run(cmd, TimeSpan.FromSeconds(30), _root).Out;
        _gitHead = ProcessGroups.Run(["git", "-C", _root, "rev-parse", "HEAD"], TimeSpan.FromSeconds(30)) is (0, var h) ? h.Trim() : "unknown";
        // Leaving out the sitting's own output folder, which this sweep has just created inside the repository.
        _dirty = Out(["git", "-C", _root, "status", "--porcelain", "--", ".", $":(exclude){Program.Relative(_root, _out)}"]).Trim().Length > 0;
        _cpuModel = CpuModel();
        _kernel = Out(["uname", "-r"]).Trim();
        _sdk = Shell.Which("dotnet") is null ? "none" : Out(["dotnet", "--version"]).Trim();
        _runtime = Shell.Which("dotnet") is null ? "" : Out(["dotnet", "--list-runtimes"]).Split('\n')
            .Where(l => l.StartsWith("Microsoft.NETCore.App ", StringComparison.Ordinal)).Select(l => l.Split(' ')[1]).LastOrDefault() ?? "";
        var memKb = File.ReadLines("/proc/meminfo").First(l => l.StartsWith("MemTotal", StringComparison.Ordinal)).Split(' ', StringSplitOptions.RemoveEmptyEntries)[1];
        File.WriteAllText(Path.Combine(_out, "machine.txt"), string.Join('\n',
            $"date:          {DateTime.UtcNow:yyyy-MM-dd'T'HH:mm:ss'Z'}",
            $"commit:        {_gitHead}{(_dirty ? " (work tree has uncommitted changes)" : "")}",
            $"nproc:         {Environment.ProcessorCount}",
            $"cpu:           {_cpuModel}",
            $"memory:        {double.Parse(memKb, CultureInfo.InvariantCulture) / 1048576:0.0} GiB",
            $"kernel:        {_kernel}",
            $"dotnet sdk:    {_sdk}",
            $"dotnet runtime: {(_runtime.Length > 0 ? _runtime : "none")}",
            $"load average:  {LoadAverage()} (at the start)",
            $"command:       {_command}") + "\n");
    }

    private static string LoadAverage() => string.Join(' ', File.ReadAllText("/proc/loadavg").Split(' ').Take(3));

    private void WriteJson(string status)
    {
        var json = new JsonObject
        {
            ["date"] = _started.ToUniversalTime().ToString("yyyy-MM-dd'T'HH:mm:ss'Z'", CultureInfo.InvariantCulture),
            ["commit"] = _gitHead,
            ["dirty"] = _dirty,
            ["nproc"] = Environment.ProcessorCount,
            ["cpuModel"] = _cpuModel,
            ["kernel"] = _kernel,
            ["dotnetVersion"] = _sdk,
            ["dotnetRuntime"] = _runtime,
            ["command"] = _command,
            ["commands"] = new JsonArray([.. _commands.Select(c => JsonValue.Create(c))]),
            ["rounds"] = _rounds,
            ["warmup"] = _warmup,
            ["duration"] = _duration,
            ["budgetMinutes"] = _budgetMinutes,
            ["quick"] = _o.Quick,
            ["points"] = new JsonArray([.. _points.Select(p => (JsonNode)new JsonObject
            {
                ["name"] = p.Name, ["connections"] = p.Connections, ["path"] = p.Path, ["profile"] = p.Profile,
                ["scenarios"] = new JsonArray([.. p.Scenarios.Select(s => JsonValue.Create(s))]),
            })]),
            ["loadAverageAtEnd"] = LoadAverage(),
            ["status"] = status,
            ["sourceStateAtStart"] = _startState,
            ["warnings"] = new JsonArray([.. _warnings.Select(w => JsonValue.Create(w))]),
        };
        Program.WriteJson(Path.Combine(_out, "sweep.json"), json);
    }
}
