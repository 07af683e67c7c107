using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace LLRP.Jobs;

/// <summary>crank/websocket-job.sh, the WebSocket load job (round trips of echoed messages are its requests):
/// <see cref="Help"/> lists the figures.</summary>
internal static class WebSocketJob
{
    private const string Job = "websocket-job";

    public const string Help = """
Load job of the WebSocket scenarios (benchmarks.yml: job "websocket", scenarios websocket-*; crank/run-local.sh --load
websocket): .NET's ClientWebSocket in this process. -c connections, each in a closed loop: one binary message of
--message-size bytes sent, its echo received (Downstream's /ws, through the proxy under test) and compared byte for byte,
the next message at once. A round trip is the scenario's request: http/rps/mean is round trips per second, and the
runner's CPU per request is the proxy's CPU per message. Each message carries a sequence number, so an echo of an earlier
message does not pass.

A run opens every connection first (at most 30 s; the window starts with those open, the rest join when they are), then
counts round trips for its duration between "$WRK_JOB_HOOK measure-start" and "measure-end" (the runner's /proc samples
cover the messages, not the handshakes), waits at most 5 s for the echoes still on their way (later: an error, "late")
and closes the connections (at most 5 s). An unmeasured warm-up run comes first, fixed or adaptive as wrk-job.sh's
(WRK_JOB_WARM_PROBE with --warmup-max: crank/Jobs/Warmup.cs), and before it one handshake and one echo, timed
(http/firstrequest). The load runs in this process: no ##ChildProcessId, so a crank agent measures this job.

Errors never stop the load: a failed handshake, a close or a failed send or receive, and an echo that differs (type,
length, bytes) are counted, and that connection is opened again after 100 ms. Counted are the round trips and
handshakes begun in the measured window; handshakes that failed before it are retried and reported, not counted.

Statistics (crank's block; a name "a;b" is stored under both, so analysis/Report reads it as a wrk run):
  websocket/rps/mean;http/rps/mean         round trips per second (echoes back intact / window)
  websocket/requests;http/requests         round trips (echoes back intact in the window)
  websocket/latency/{mean,max};http/...    ms, message sent to its echo received
  websocket/latency/{50,75,90,95,99,99.9}  ms, nearest rank over the round trips (within 0.8 %: log-linear buckets)
  websocket/errors/mismatches;http/requests/badresponses   echoes that differ from their message
  websocket/errors/socketerrors;http/requests/errors       failed handshakes, closes, failed sends or receives, late echoes
  websocket/throughput;http/throughput     MB/s of echoed payload received
  websocket/bytes                          payload bytes both ways (round trips x message size x 2)
  websocket/connections, websocket/connected, websocket/message-size   the shape: asked, open at the start, bytes
  http/firstrequest                        ms, one handshake and one echo before any load
  warmup/seconds, warmup/capped            as wrk-job.sh's

usage: websocket-job.sh [-w WARMUP_S] [--warmup-max S] [-d DURATION_S] [-c CONNECTIONS] [--message-size BYTES]
                        [--max-errors N] [--trust CA_PEM] [--url] URL
  URL                ws://HOST:PORT/ws or wss://HOST:PORT/ws
  --trust CA_PEM     wss:// only: trust the certificates in this PEM file besides the system's (the run's authority,
                     crank/tls-cert.sh); the host name must match either way
Defaults: -w 20 -d 15 (run-local.sh's), -c 64 (the wrk job's), --message-size 32 (a small chat or ticker message).
Bounds: -d 1 to 3600 s, -w and --warmup-max at most 3600 s, -c 1 to 1024, --message-size 0 to 1048576 bytes, and
connections x message size at most 64 MiB (each connection keeps two copies of its message). The job stops itself
(exit code 6) once the longest it can take is past: the first echo, the warm-up with its settle cycles and the measured
run, each with its opening, grace and closing.
Environment: WRK_JOB_HOOK and WRK_JOB_WARM_PROBE as for wrk-job.sh.
Exit code: 0; 2 bad usage; 4 more errors (mismatches + socket errors) than --max-errors, or no round trip at all in
the measured window (statistics printed first); 6 the job's time bound was reached.
""";

    public const int MaxDurationSeconds = 3600;

    public const int MaxConnections = 1024;

    public const int MaxMessageSize = 1024 * 1024;

    /// <summary>Connections x message size: two copies each, so at most 128 MiB of buffers.</summary>
    public const long MaxBufferedBytes = 64L * 1024 * 1024;

    /// <summary>Exit status when the job's own time bound ends it.</summary>
    public const int Overran = 6;

    private static readonly string[] Percentiles = ["50", "75", "90", "95", "99", "99.9"];

    /// <summary>The options as parsed and checked.</summary>
    internal sealed record Options(int Warmup, int? WarmupMax, int Duration, int Connections, int MessageSize, int? MaxErrors, string Url, string? Trust);

    public static int Run(string[] argv)
    {
        if (argv.Any(a => a is "-h" or "--help"))
        {
            Console.WriteLine(Help);
            return 0;
        }
        var o = Parse(argv);
        var target = new WebSocketTarget(new Uri(o.Url), o.Connections, o.MessageSize, o.Trust is null ? null : LoadTrust(o.Trust));

        // The job's own bound, beyond the runner's and crank's: every part of it has its own, so this fires only if
        // one of them failed.
        var runBound = o.Duration + WebSocketLoad.OverheadSeconds;
        var warmBound = (o.WarmupMax ?? o.Warmup) + WebSocketLoad.OverheadSeconds
            + (Warmup.SettleCycles * (Warmup.SettlePauseSeconds + Warmup.SettleLoadSeconds + WebSocketLoad.OverheadSeconds));
        var bound = WebSocketLoad.HandshakeSeconds + (2 * WebSocketLoad.GraceSeconds) + warmBound + runBound + 60;
        using var watchdog = new Timer(_ =>
        {
            Console.Out.Flush();
            Console.Error.WriteLine($"{Job}: still running after {bound} s, the longest this run can take: stopping");
            Environment.Exit(Overran);
        }, null, TimeSpan.FromSeconds(bound), Timeout.InfiniteTimeSpan);

        Console.WriteLine($"{Job}: {o.Connections} connection(s), {o.MessageSize}-byte binary messages, one in flight per connection, on {o.Url}");
        var (firstMs, firstFailure) = WebSocketLoad.FirstRoundTripAsync(target).GetAwaiter().GetResult();
        Console.WriteLine(firstMs is { } ms
            ? $"{Job}: first handshake and echo: {ToolText.F(ms, 2)} ms"
            : $"{Job}: the first handshake and echo failed: {firstFailure}");

        var warm = new WarmResult(o.Warmup, false);
        var warming = new Warmup(Job, (seconds, output) => WebSocketLoad.Start(target, seconds, output), Console.Out);
        if (Warmup.AdaptiveProbe(o.Warmup, o.WarmupMax) is { } probe)
        {
            // Any signal stops the in-process load; SIGINT is what wrk gets.
            warm = warming.Adaptive(o.Warmup, o.WarmupMax!.Value, probe, Tools.SigInt);
        }
        else if (o.Warmup > 0)
        {
            Console.WriteLine($"{Job}: warm-up: {o.Warmup} s");
            warm = warming.Fixed(o.Warmup);
        }

        Console.WriteLine($"{Job}: measured: {o.Duration} s");
        // What the load itself allocates in the window, to show that the load side stays light (its loop allocates
        // nothing per message by design); read inside the hooks' edges, so their process starts are not counted.
        long allocatedAtStart = 0, allocatedAtEnd = 0;
        var run = WebSocketLoad.RunAsync(target, TimeSpan.FromSeconds(o.Duration),
            () =>
            {
                Tools.Hook("WRK_JOB_HOOK", "measure-start");
                allocatedAtStart = GC.GetTotalAllocatedBytes(precise: true);
            },
            () =>
            {
                allocatedAtEnd = GC.GetTotalAllocatedBytes(precise: true);
                Tools.Hook("WRK_JOB_HOOK", "measure-end");
            }).GetAwaiter().GetResult();
        Console.WriteLine($"{Job}: {WebSocketLoad.Summary(run, target)}");
        Console.WriteLine($"{Job}: this job allocated {allocatedAtEnd - allocatedAtStart} bytes in the window"
            + (run.RoundTrips > 0 ? $", {ToolText.F((allocatedAtEnd - allocatedAtStart) / (double)run.RoundTrips, 1)} per round trip" : ""));
        Console.Write(Statistics.Block("websocket", Rows(run, target, firstMs, warm), DateTime.UtcNow));
        Console.Out.Flush();

        var errors = run.Errors.Sum();
        if (run.RoundTrips == 0)
        {
            Console.Error.WriteLine($"{Job}: no round trip completed in the measured window ({errors} errors): failing the job");
            return JobFailure.TooManyErrors;
        }
        if (errors > o.MaxErrors)
        {
            Console.Error.WriteLine($"{Job}: {errors} errors in the measured run, more than --max-errors {o.MaxErrors}: failing the job");
            return JobFailure.TooManyErrors;
        }
        return 0;
    }

    /// <summary>The command line, checked: every bad option is a usage failure (one line, exit 2).</summary>
    internal static Options Parse(IReadOnlyList<string> argv)
    {
        int warmup = 20, duration = 15, connections = 64, messageSize = 32;
        int? warmupMax = null, maxErrors = null;
        string url = "";
        string? trust = null;
        var args = new JobArgs(argv);
        while (args.Next(out var a))
        {
            switch (a)
            {
                case "-w" or "--warmup": warmup = args.WholeNumber(a); break;
                case "--warmup-max": warmupMax = args.WholeNumber(a); break;
                case "-d" or "--duration": duration = args.WholeNumber(a); break;
                case "-c" or "--connections": connections = args.Count(a); break;
                case "--message-size": messageSize = args.Count(a); break;
                case "--max-errors": maxErrors = args.Count(a); break;
                case "--trust": trust = args.Value(a); break;
                case "--url": url = JobArgs.Url(url, args.Value(a)); break;
                default: url = JobArgs.Url(url, a); break;
            }
        }
        if (duration < 1 || duration > MaxDurationSeconds || warmup > MaxDurationSeconds || warmupMax > MaxDurationSeconds)
        {
            throw JobFailure.BadUsage($"-d must be 1 to {MaxDurationSeconds} seconds, -w and --warmup-max at most {MaxDurationSeconds}");
        }
        if (connections < 1 || connections > MaxConnections)
        {
            throw JobFailure.BadUsage($"-c must be 1 to {MaxConnections} connections");
        }
        if (messageSize > MaxMessageSize)
        {
            throw JobFailure.BadUsage($"--message-size must be 0 to {MaxMessageSize} bytes");
        }
        if ((long)connections * messageSize > MaxBufferedBytes)
        {
            throw JobFailure.BadUsage($"-c x --message-size must be at most {MaxBufferedBytes} bytes (each connection keeps two copies of its message)");
        }
        if (url.Length == 0)
        {
            throw JobFailure.BadUsage("missing URL");
        }
        if (!Uri.TryCreate(url, UriKind.Absolute, out var uri) || uri.Scheme is not ("ws" or "wss") || uri.Host.Length == 0)
        {
            throw JobFailure.BadUsage($"the URL must be ws://HOST:PORT/PATH or wss://HOST:PORT/PATH: {url}");
        }
        if (trust is not null && uri.Scheme != "wss")
        {
            throw JobFailure.BadUsage($"--trust is for wss:// URLs (TLS), not {url}");
        }
        if (trust is not null && !File.Exists(trust))
        {
            throw JobFailure.BadUsage($"--trust {trust}: no such file");
        }
        return new Options(warmup, warmupMax, duration, connections, messageSize, maxErrors, url, trust);
    }

    private static X509Certificate2Collection LoadTrust(string path)
    {
        var trust = new X509Certificate2Collection();
        try
        {
            trust.ImportFromPemFile(path);
        }
        catch (CryptographicException e)
        {
            throw JobFailure.BadUsage($"--trust {path}: not a PEM certificate file ({e.Message})");
        }
        return trust.Count > 0 ? trust : throw JobFailure.BadUsage($"--trust {path}: no certificate in it");
    }

    /// <summary>The statistics of a measured run (see <see cref="Help"/>): percentiles only when an echo came back,
    /// http/firstrequest only when the first echo did.</summary>
    internal static List<Measurement> Rows(WebSocketRun run, WebSocketTarget target, double? firstMs, WarmResult warm)
    {
        var seconds = run.Seconds > 0 ? run.Seconds : 1;
        var latency = run.Latency;
        List<Measurement> rows =
        [
            ToolText.Row("websocket/rps/mean;http/rps/mean", "Max", "Sum", "Round trips/sec", "Echoes back intact per second (messages)", "n0", run.RoundTrips / seconds),
            ToolText.Row("websocket/requests;http/requests", "Max", "Sum", "Round trips", "Echoes back intact in the measured window", "n0", run.RoundTrips),
            ToolText.Row("websocket/latency/mean;http/latency/mean", "Max", "Avg", "Mean latency (ms)", "Mean round trip, message sent to echo received (ms)", "n2",
                run.RoundTrips == 0 ? 0 : WebSocketLoad.Milliseconds(latency.Sum) / run.RoundTrips),
            ToolText.Row("websocket/latency/max;http/latency/max", "Max", "Max", "Max latency (ms)", "Longest round trip (ms)", "n2", WebSocketLoad.Milliseconds(latency.Max)),
            ToolText.Row("websocket/errors/mismatches;http/requests/badresponses", "Max", "Sum", "Bad echoes", "Echoes that differ from their message", "n0", run.Mismatches),
            ToolText.Row("websocket/errors/socketerrors;http/requests/errors", "Max", "Sum", "Errors",
                "Failed handshakes, closes, failed sends or receives, echoes later than the grace", "n0", run.SocketErrors),
            ToolText.Row("websocket/throughput;http/throughput", "Max", "Sum", "Read throughput (MB/s)", "Echoed payload received per second (MB/s)", "n2",
                run.RoundTrips * (double)target.MessageSize / seconds / 1048576),
        ];
        if (run.RoundTrips > 0)
        {
            foreach (var p in Percentiles)
            {
                var percent = double.Parse(p, System.Globalization.CultureInfo.InvariantCulture);
                rows.Add(ToolText.Row($"websocket/latency/{p};http/latency/{p}", "Max", "Max", $"Latency {p}th (ms)",
                    $"Round trip {p}th percentile (ms)", "n2", WebSocketLoad.Milliseconds(latency.Percentile(percent))));
            }
        }
        rows.Add(ToolText.Row("websocket/bytes", "Max", "Sum", "Payload bytes", "Payload bytes both ways in the window", "n0", run.RoundTrips * 2.0 * target.MessageSize));
        rows.Add(ToolText.Row("websocket/connections", "Max", "Sum", "Connections", "WebSocket connections asked for", "n0", target.Connections));
        rows.Add(ToolText.Row("websocket/connected", "Max", "Sum", "Connected", "WebSocket connections open when the window started", "n0", run.Connected));
        rows.Add(ToolText.Row("websocket/message-size", "Max", "Max", "Message size (B)", "Bytes of each binary message", "n0", target.MessageSize));
        if (firstMs is { } first)
        {
            rows.Add(ToolText.Row("http/firstrequest", "Max", "Max", "First Request (ms)", "One handshake and one echo before any load (ms)", "n2", first));
        }
        rows.Add(ToolText.Row("warmup/seconds", "Max", "Max", "Warm-up (s)", "Seconds of load before the measured run", "n0", warm.Seconds));
        if (warm.Capped)
        {
            rows.Add(ToolText.Row("warmup/capped", "Max", "Max", "Warm-up capped",
                "1: the adaptive warm-up reached --warmup-max before the server was warm", "n0", 1));
        }
        return rows;
    }
}
