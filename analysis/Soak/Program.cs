using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text.Json;
using LLRP.Analysis;
using LLRP.Soak;

// The soak (analysis/soak.sh starts it; `Soak --help` lists the options). It starts the origin and the proxy, finds the
// highest rate the mix reaches (closed loop, --calibrate seconds), then runs --duration seconds paced at --share of it,
// restarting the origin every --restart-every seconds, and samples the proxy every second. Bounded: it stops itself
// after calibration + duration (+ the last responses' read timeout), and soak.sh runs it under `timeout` as well.

Options options;
try
{
    if (Cli.Parse(Options.Command, args) is not { } parsed)
    {
        Cli.WriteHelp(Options.Command, args);
        return 0;
    }
    if (parsed.GetValue(Options.ChartDir) is { } chartDir)
    {
        // `Soak --chart DIR` draws DIR/soak.png again from DIR/samples.csv and DIR/summary.json (a finished soak's files).
        var rows = File.ReadAllLines(Path.Combine(chartDir, "samples.csv")).Skip(1).Select(Sample.FromCsv).ToList();
        using var summaryJson = JsonDocument.Parse(File.ReadAllText(Path.Combine(chartDir, "summary.json")));
        var restartTimes = summaryJson.RootElement.GetProperty("restarts").EnumerateArray().Select(r => r.GetDouble()).ToList();
        var rate = summaryJson.RootElement.GetProperty("targetResponsesPerSecond").GetDouble();
        Chart.Save(Path.Combine(chartDir, "soak.png"), rows, restartTimes, $"llhttp soak at {rate:F0} responses/s");
        return 0;
    }
    options = Options.From(parsed);
}
catch (UsageException e)
{
    Console.Error.WriteLine($"soak: {e.Message} (see --help)");
    return 2;
}
Directory.CreateDirectory(options.Out);
var originPort = options.Port + 1;

using var origin = new Origin(options.OriginExe, originPort, Path.Combine(options.Out, "origin.log"));
await origin.StartAsync();
var proxyLog = Path.Combine(options.Out, "proxy.log");
var proxyArgs = new List<string> { "--urls", $"http://127.0.0.1:{options.Port}", "--downstream", $"http://127.0.0.1:{originPort}", "--client", "llhttp" };
proxyArgs.AddRange(options.ProxyArgs);
using var proxy = Origin.Launch(options.ProxyExe, proxyArgs, proxyLog);
// However the soak ends (SIGTERM from soak.sh's timeout, Ctrl-C, an exception), it leaves no process behind.
AppDomain.CurrentDomain.ProcessExit += (_, _) =>
{
    try
    {
        if (!proxy.HasExited)
        {
            proxy.Kill();
        }
        origin.Dispose();
    }
    catch (Exception e) when (e is InvalidOperationException or ObjectDisposedException)
    {
        // Already stopped and disposed: the soak ended normally.
    }
};
if (!await Origin.WaitForPortAsync(options.Port, TimeSpan.FromSeconds(30)))
{
    Console.Error.WriteLine($"soak: the proxy did not listen on {options.Port}; see {proxyLog}");
    return 1;
}

var tally = new Tally();
var pacer = new Pacer();
var restarts = new List<double>();
var clock = Stopwatch.StartNew();
// A failure up to this long after the origin is back is the restart's: pooled downstream connections to the old
// process are found dead as they are next used.
const long RestartGraceMs = 5000;
var lastRestartEndMs = long.MinValue / 2;
var restarting = false;
bool NearRestart() => Volatile.Read(ref restarting) || clock.ElapsedMilliseconds - Volatile.Read(ref lastRestartEndMs) < RestartGraceMs;

var traffic = new Traffic(options.Port, NearRestart, tally, pacer);
using var stopAll = new CancellationTokenSource();
pacer.Start(0);
var workers = Enumerable.Range(0, options.Workers).Select(i => Task.Run(() => traffic.RunWorkerAsync(1000 + i, stopAll.Token))).ToArray();

// Calibration: unpaced, the highest rate these workers and this mix reach through the proxy on this machine now.
Console.WriteLine($"soak: calibrating for {options.CalibrateSeconds} s with {options.Workers} workers, unpaced");
await Task.Delay(TimeSpan.FromSeconds(2));
var calibrationStart = tally.Total;
await Task.Delay(TimeSpan.FromSeconds(options.CalibrateSeconds));
var maxRate = (tally.Total - calibrationStart) / (double)options.CalibrateSeconds;
var target = maxRate * options.Share;
Console.WriteLine($"soak: maximum {maxRate:F0} responses/s; soaking at {target:F0}/s ({options.Share:P0}) for {options.DurationSeconds} s, origin restart every {options.RestartEverySeconds} s");
var tallyAtSoakStart = (tally.Ok, tally.Total);
pacer.Start(target);

var samples = new List<Sample>();
var soakStart = clock.Elapsed;
var previous = Sample.ReadProcess(proxy.Id);
var previousResponses = tally.Total;
var previousOk = tally.Ok;
var nextRestart = TimeSpan.FromSeconds(options.RestartEverySeconds);
Task? restart = null;
for (var second = 1; second <= options.DurationSeconds; second++)
{
    var due = soakStart + TimeSpan.FromSeconds(second);
    var wait = due - clock.Elapsed;
    if (wait > TimeSpan.Zero)
    {
        await Task.Delay(wait);
    }
    var elapsed = clock.Elapsed - soakStart;
    if (restart is null && elapsed >= nextRestart && elapsed < TimeSpan.FromSeconds(options.DurationSeconds - 5))
    {
        nextRestart += TimeSpan.FromSeconds(options.RestartEverySeconds);
        restarts.Add(elapsed.TotalSeconds);
        Volatile.Write(ref restarting, true);
        restart = Task.Run(async () =>
        {
            await origin.RestartAsync();
            Volatile.Write(ref lastRestartEndMs, clock.ElapsedMilliseconds);
            Volatile.Write(ref restarting, false);
        });
    }
    if (restart is { IsCompleted: true })
    {
        await restart;
        restart = null;
    }
    var now = Sample.ReadProcess(proxy.Id);
    if (now is null)
    {
        Console.Error.WriteLine("soak: the proxy exited");
        break;
    }
    var responses = tally.Total;
    var ok = tally.Ok;
    var cpuPerResponse = previous is { } p && responses > previousResponses
        ? (now.Value.CpuSeconds - p.CpuSeconds) * 1e6 / (responses - previousResponses)
        : double.NaN;
    samples.Add(new Sample(elapsed.TotalSeconds, now.Value.RssKiB, now.Value.Descriptors, now.Value.Threads, now.Value.CpuSeconds,
        responses - previousResponses, ok - previousOk, responses - previousResponses - (ok - previousOk), NearRestart())
    { CpuMicrosPerResponse = cpuPerResponse });
    previous = now;
    previousResponses = responses;
    previousOk = ok;
    if (second % 30 == 0)
    {
        var s = samples[^1];
        Console.WriteLine($"soak: {second} s: RSS {s.RssKiB / 1024.0:F1} MiB, {s.Descriptors} descriptors, {s.Threads} threads, {s.Responses} responses/s, " +
            $"ok {tally.Ok}, near restarts {tally.ErrorNearRestart + tally.CutNearRestart + tally.NoAnswerNearRestart}, corrupt {tally.Corrupt}, lost {tally.Lost}, unexpected errors {tally.UnexpectedError}");
    }
}

// Stop sending; the responses in flight finish (each bounded by the read timeout).
stopAll.Cancel();
await Task.WhenAny(Task.WhenAll(workers), Task.Delay(Wire.ReadTimeout + TimeSpan.FromSeconds(5)));
if (restart is not null)
{
    await restart;
}
// Every client connection is closed now: what the proxy still holds once its sweeps ran (descriptors: its listener,
// the shared pool's idle downstream connections, the runtime's own).
await Task.Delay(TimeSpan.FromSeconds(3));
var afterStop = Sample.ReadProcess(proxy.Id);
// The proxy's own count of what it served, from its self-report at a graceful stop (SIGTERM).
var stoppedCleanly = await Origin.StopAsync(proxy, TimeSpan.FromSeconds(40));
await origin.DisposeAsync();

File.WriteAllLines(Path.Combine(options.Out, "samples.csv"), samples.Select(s => s.ToCsv()).Prepend(Sample.CsvHeader));
Chart.Save(Path.Combine(options.Out, "soak.png"), samples, restarts, $"llhttp soak at {target:F0} responses/s");

// Flatness: the second minute against the last (the first holds warm-up: JIT, pools, the heap's growth to its working size).
static (double First, double Last) Minutes(IReadOnlyList<Sample> samples, Func<Sample, double> value)
{
    var first = samples.Where(s => s.Seconds is >= 60 and < 120).Select(value).DefaultIfEmpty(double.NaN).Average();
    var lastFrom = samples.Count == 0 ? 0 : samples[^1].Seconds - 60;
    var last = samples.Where(s => s.Seconds >= lastFrom).Select(value).DefaultIfEmpty(double.NaN).Average();
    return (first, last);
}
var rss = Minutes(samples, s => s.RssKiB / 1024.0);
var fds = Minutes(samples, s => s.Descriptors);
var threads = Minutes(samples, s => s.Threads);
var cpu = Minutes(samples.Where(s => !s.Restarting && !double.IsNaN(s.CpuMicrosPerResponse)).ToList(), s => s.CpuMicrosPerResponse);
var soaked = tally.Total - tallyAtSoakStart.Total;
var passed = tally.Corrupt == 0 && tally.Lost == 0 && tally.UnexpectedError == 0 && tally.CloseNotSeen == 0 && samples.Count == options.DurationSeconds;
var summary = new
{
    started = DateTime.UtcNow - clock.Elapsed,
    options = new { options.Port, options.Workers, options.CalibrateSeconds, options.DurationSeconds, options.Share, options.RestartEverySeconds, proxyArgs },
    maxResponsesPerSecond = Math.Round(maxRate),
    targetResponsesPerSecond = Math.Round(target),
    soakResponsesPerSecond = Math.Round(soaked / (double)Math.Max(1, samples.Count)),
    restarts,
    responses = new
    {
        total = tally.Total,
        ok = tally.Ok,
        okBytesChecked = tally.BytesChecked,
        errorAnswerNearRestart = tally.ErrorNearRestart,
        cutNearRestart = tally.CutNearRestart,
        noAnswerNearRestart = tally.NoAnswerNearRestart,
        halfClosedEarlyNotAnsweredWhole = tally.HalfCloseNoAnswer,
        unexpectedErrorAnswer = tally.UnexpectedError,
        lost = tally.Lost,
        corrupt = tally.Corrupt,
        closeNotSeen = tally.CloseNotSeen,
    },
    flatness = new
    {
        rssMiB = new { secondMinute = rss.First, lastMinute = rss.Last },
        descriptors = new { secondMinute = fds.First, lastMinute = fds.Last },
        threads = new { secondMinute = threads.First, lastMinute = threads.Last },
        cpuMicrosPerResponse = new { secondMinute = cpu.First, lastMinute = cpu.Last },
    },
    afterTrafficStopped = afterStop is { } a ? new { rssMiB = a.RssKiB / 1024.0, descriptors = a.Descriptors, threads = a.Threads } : null,
    proxyStoppedCleanly = stoppedCleanly,
    passed,
    problems = tally.Problems,
};
var json = JsonSerializer.Serialize(summary, new JsonSerializerOptions { WriteIndented = true });
File.WriteAllText(Path.Combine(options.Out, "summary.json"), json);
Console.WriteLine(json);
Console.WriteLine(passed ? "soak: PASSED" : "soak: FAILED");
return passed ? 0 : 1;

/// <summary>The soak's command line.</summary>
internal sealed record Options(string ProxyExe, string OriginExe, string Out, int Port, int Workers, int CalibrateSeconds,
    int DurationSeconds, double Share, int RestartEverySeconds, List<string> ProxyArgs)
{
    private static Option<string> Path(string name, string description) => Cli.LastWins(new Option<string>(name) { Description = description, HelpName = "PATH" });

    private static readonly Option<string> ProxyOption = Path("--proxy", "the published LLRP executable (run with --client llhttp and PROXY_ARGS)");
    private static readonly Option<string> OriginOption = Path("--origin", "the published Downstream executable (restarted with SIGKILL every --restart-every)");
    private static readonly Option<string> OutOption = Path("--out", "where samples.csv, summary.json, soak.png and the logs go");
    private static readonly Option<int> PortOption = Cli.Int("--port", 19100, "the proxy's port; the origin listens on P+1", min: 1, helpName: "P");
    private static readonly Option<int> WorkersOption = Cli.Int("--workers", 64, "client workers, each with one connection at a time", min: 1);
    // At least 5 s of calibration, a minute of soak (its flatness compares the second minute with the last) and 10 s
    // between restarts (the origin needs a few to come back).
    private static readonly Option<int> CalibrateOption = Cli.Int("--calibrate", 20, "seconds of unpaced traffic that measure the maximum", min: 5, helpName: "S");
    private static readonly Option<int> DurationOption = Cli.Int("--duration", 600, "seconds of the soak", min: 60, helpName: "S");
    private static readonly Option<string> ShareOption = Cli.Text("--share", "0.75", "the soak's rate as a share of the maximum (above 0, at most 1)", "F",
        v => double.TryParse(v, NumberStyles.Float, CultureInfo.InvariantCulture, out var f) && f is > 0 and <= 1 ? null : $"--share needs a number above 0, at most 1, got '{v}'");
    private static readonly Option<int> RestartEveryOption = Cli.Int("--restart-every", 60, "seconds between origin restarts", min: 10, helpName: "S");
    private static readonly Argument<string[]> ProxyArgsArgument = new("PROXY_ARGS")
    {
        Arity = ArgumentArity.ZeroOrMore,
        Description = "after --: extra LLRP options",
    };
    internal static readonly Argument<string> ChartDir = new("DIR") { Description = "a finished soak's folder" };

    internal static readonly Command Command = Cli.Command("Soak", """
        Mixed traffic through a proxy for minutes (analysis/soak.sh runs it): starts the origin and the proxy, finds the
        highest rate the mix reaches (closed loop, --calibrate seconds), then runs --duration seconds paced at --share of
        it, restarting the origin every --restart-every seconds, and samples the proxy every second. --proxy, --origin and
        --out are needed. Exit status: 0 passed, 1 failed, 2 bad usage.
        """, ProxyOption, OriginOption, OutOption, PortOption, WorkersOption, CalibrateOption, DurationOption, ShareOption, RestartEveryOption, ProxyArgsArgument,
        Cli.Command("--chart", "draw DIR/soak.png again from DIR/samples.csv and DIR/summary.json", ChartDir));

    public static Options From(ParseResult p) => new(
        p.GetValue(ProxyOption) ?? throw new UsageException("--proxy PATH is needed"), p.GetValue(OriginOption) ?? throw new UsageException("--origin PATH is needed"),
        p.GetValue(OutOption) ?? throw new UsageException("--out DIR is needed"), p.GetValue(PortOption), p.GetValue(WorkersOption), p.GetValue(CalibrateOption),
        p.GetValue(DurationOption), double.Parse(p.GetValue(ShareOption)!, CultureInfo.InvariantCulture), p.GetValue(RestartEveryOption), [.. p.GetValue(ProxyArgsArgument) ?? []]);
}

/// <summary>The origin process, which the soak kills and starts again; and the process helpers the proxy uses too.</summary>
internal sealed class Origin(string exe, int port, string log) : IDisposable, IAsyncDisposable
{
    private Process? _process;

    public async Task StartAsync()
    {
        _process = Launch(exe, ["--urls", $"http://127.0.0.1:{port}"], log);
        if (!await WaitForPortAsync(port, TimeSpan.FromSeconds(30)))
        {
            throw new InvalidOperationException($"the origin did not listen on {port}; see {log}");
        }
    }

    /// <summary>Kills the origin at once (SIGKILL: responses in flight are cut), then starts it again.</summary>
    public async Task RestartAsync()
    {
        if (_process is { } old)
        {
            old.Kill();
            await old.WaitForExitAsync();
            old.Dispose();
        }
        await StartAsync();
    }

    public static Process Launch(string exe, IEnumerable<string> arguments, string log)
    {
        var info = new ProcessStartInfo(exe) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }
        var process = Process.Start(info) ?? throw new InvalidOperationException($"could not start {exe}");
        var writer = new StreamWriter(log, append: true) { AutoFlush = true };
        var gate = new Lock();
        void Write(string? line)
        {
            if (line is not null)
            {
                lock (gate)
                {
                    writer.WriteLine(line);
                }
            }
        }
        process.OutputDataReceived += (_, e) => Write(e.Data);
        process.ErrorDataReceived += (_, e) => Write(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return process;
    }

    public static async Task<bool> WaitForPortAsync(int port, TimeSpan within)
    {
        var deadline = Stopwatch.StartNew();
        while (deadline.Elapsed < within)
        {
            using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            try
            {
                await probe.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port));
                return true;
            }
            catch (SocketException)
            {
                await Task.Delay(50);
            }
        }
        return false;
    }

    /// <summary>SIGTERM, then SIGKILL if it has not exited within <paramref name="within"/>. True when it exited by itself.</summary>
    public static async Task<bool> StopAsync(Process process, TimeSpan within)
    {
        if (process.HasExited)
        {
            return false;
        }
        using (var kill = Process.Start("kill", ["-TERM", process.Id.ToString(CultureInfo.InvariantCulture)]))
        {
            await kill.WaitForExitAsync();
        }
        using var timeout = new CancellationTokenSource(within);
        try
        {
            await process.WaitForExitAsync(timeout.Token);
            return process.ExitCode == 0;
        }
        catch (OperationCanceledException)
        {
            process.Kill();
            await process.WaitForExitAsync();
            return false;
        }
    }

    public void Dispose()
    {
        if (_process is { HasExited: false } p)
        {
            p.Kill();
        }
        _process?.Dispose();
    }

    public async ValueTask DisposeAsync()
    {
        if (_process is { HasExited: false } p)
        {
            p.Kill();
            await p.WaitForExitAsync();
        }
        _process?.Dispose();
        _process = null;
    }
}
