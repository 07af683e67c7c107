namespace LLRP.Jobs;

/// <summary>crank/h2load-job.sh, the HTTP/2 load job (closed loop, or open loop with --rate), its runs as the wrk job's
/// (<see cref="Warmup"/>, the measured run a ##ChildProcessId child): <see cref="Help"/> says the rest.</summary>
internal static class H2LoadJob
{
    public const string Help = """
Load job of the HTTP/2 scenarios (benchmarks.yml: job "h2load", scenarios h2load-*; crank/run-local.sh --load h2load):
h2load (Debian's nghttp2-client) over HTTP/2, closed loop by default: -c connections, each with up to -m streams in
flight, a new request on a stream as soon as its answer is in (the .NET team's proxy lab: connections = cores, 100
streams each). https:// URLs negotiate h2 with ALPN; http:// URLs speak prior-knowledge h2c. A run whose connections
did not speak h2 (a server that chose http/1.1 in ALPN, or answered h2c with HTTP/1.1) fails with exit code 5:
it measured something else.

With --rate R the load is open loop instead (the stepped comparison, `crank/run-local.sh stepped`): R requests/s over all
connections (h2load --rps R/CONNECTIONS per connection). A request falls due on its connection's timer and goes out at
once while fewer than -m streams are in flight there, so a slow server is not shielded by held-back requests until a
connection has -m outstanding; h2load times each request from when it sent it, and the rate it really sent
(h2load/sent) shows when requests were held back.

Like crank/wrk-job.sh: an unmeasured warm-up run (adaptive with WRK_JOB_WARM_PROBE and --warmup-max:
crank/Jobs/Warmup.cs), then the measured run, announced as "##ChildProcessId:<pid>" (crank's protocol, so an agent
measures h2load), between "$WRK_JOB_HOOK measure-start" and "measure-end". It prints crank's statistics block under wrk-job.sh's names, each
figure as h2load/... and http/... (a name "a;b" is stored under both), so analysis/Report reads it as a wrk run:
  h2load/rps/mean;http/rps/mean           responses per second (h2load's own req/s: completed streams / duration)
  h2load/requests;http/requests           responses (completed streams, any status)
  h2load/latency/{mean,max};http/...      ms, h2load's "time for request" (stream opened to answer complete)
  h2load/latency/{50,75,90,95,99,99.9}    ms, nearest rank over the measured run's per-request log (answered streams)
  h2load/errors/badresponses;http/requests/badresponses   4xx and 5xx answers
  h2load/errors/socketerrors;http/requests/errors         requests that failed without an answer (stream and
                                          connection errors, time-outs: h2load's failed minus the 4xx/5xx answers)
  h2load/throughput;http/throughput       MB/s received (h2load's traffic total: frames, headers and data)
  h2load/rps/2xx                          2xx and 3xx answers per second (the achieved rate)
  h2load/availability                     2xx and 3xx answers / requests that ended, in %
  h2load/connections, h2load/streams      the shape of the load (streams in flight at most: their product)
  h2load/rate, h2load/sent                open loop only: offered and really sent requests/s
  warmup/seconds, warmup/capped           as wrk-job.sh's

usage: h2load-job.sh [-w WARMUP_S] [--warmup-max S] [-d DURATION_S] [-t THREADS] [-c CONNECTIONS] [-m STREAMS]
                     [--rate R] [--headers plaintext|browser|none] [-H 'Name: value']... [--body-size BYTES]
                     [--max-errors N] URL
       h2load-job.sh [-d DURATION_S] [-c C] [-m M] [--rate R] [--max-errors N] --parse H2LOAD_OUTPUT LOG_FILE
                     (the statistics of a saved run: tests/Jobs.Tests)
Defaults: -w 20 -d 15 (run-local.sh's), -t 1, -c 2 (the cores of the 2-core box), -m 100 (the lab's streams per
connection; also Kestrel's and HAProxy's default limit of concurrent streams, and under nginx's 128), headers
plaintext.
Header presets (crank/Jobs/HeaderPresets.cs) lose their Connection field: connection-specific fields make an HTTP/2 request
malformed (RFC 9113 §8.2.2), so "handshake" (Connection: close) has no HTTP/2 meaning and is refused.
--body-size N > 0: every request is a POST with an N-byte body (h2load -d; DATA frames, no chunked framing in h2).
Environment: H2LOAD (default h2load on PATH); WRK_JOB_HOOK and WRK_JOB_WARM_PROBE as for wrk-job.sh.
Bounds: at most MAX_DURATION_S (3600 s) measured and as much warm-up; h2load is stopped 30 s after its -D should have
ended.
Exit code: 0; 2 bad usage; 3 the h2load report cannot be parsed; 4 more bad responses + errors than --max-errors
(statistics printed first); 5 the connections did not speak h2 (statistics printed first); or h2load's own exit code.
""";

    /// <summary>An hour: far beyond any sitting's run (15 s) and the bound a forgotten unit (ms for s) runs into.</summary>
    public const int MaxDurationSeconds = 3600;

    /// <summary>Exit status when the connections did not speak h2 (statistics printed first).</summary>
    public const int NotH2 = 5;

    private static readonly string[] Percentiles = ["50", "75", "90", "95", "99", "99.9"];

    // Connection-specific fields (RFC 9113 §8.2.2) are what a proxy must reject in h2: they are not sent.
    private static readonly string[] ConnectionSpecific = ["connection:", "keep-alive:", "proxy-connection:", "transfer-encoding:", "upgrade:"];

    public static int Run(string[] argv)
    {
        int warmup = 20, duration = 15, threads = 1, connections = 2, streams = 100, bodySize = 0;
        int? warmupMax = null, rate = null, maxErrors = null;
        string preset = "plaintext", url = "";
        string? parseOutput = null, parseLog = null;
        var headers = new List<string>();
        var args = new JobArgs(argv);
        while (args.Next(out var a))
        {
            switch (a)
            {
                case "-w" or "--warmup": warmup = args.WholeNumber(a); break;
                case "--warmup-max": warmupMax = args.WholeNumber(a); break;
                case "-d" or "--duration": duration = args.WholeNumber(a); break;
                case "-t" or "--threads": threads = args.Count(a); break;
                case "-c" or "--connections": connections = args.Count(a); break;
                case "-m" or "--streams": streams = args.Count(a); break;
                case "--rate": rate = args.Count(a); break;
                case "--headers": preset = args.Value(a); break;
                case "-H" or "--header": headers.Add(args.Value(a)); break;
                case "--body-size": bodySize = args.Count(a); break;
                case "--max-errors": maxErrors = args.Count(a); break;
                case "--parse":
                    parseOutput = args.Value(a);
                    parseLog = args.Next(out var log) && log.Length > 0 ? log : throw JobFailure.BadUsage("--parse needs H2LOAD_OUTPUT LOG_FILE");
                    break;
                case "-h" or "--help": Console.WriteLine(Help); return 0;
                default: url = JobArgs.Url(url, a); break;
            }
        }
        if (duration < 1 || duration > MaxDurationSeconds || warmup > MaxDurationSeconds)
        {
            throw JobFailure.BadUsage($"-d must be 1 to {MaxDurationSeconds} seconds, -w at most {MaxDurationSeconds}");
        }
        if (connections < 1 || streams < 1 || threads < 1)
        {
            throw JobFailure.BadUsage("-c, -m and -t must be >= 1");
        }
        if (threads > connections)
        {
            throw JobFailure.BadUsage($"h2load needs connections (-c {connections}) >= threads (-t {threads})");
        }
        if (rate < 1)
        {
            throw JobFailure.BadUsage("--rate must be >= 1 request/s");
        }
        var shape = new Shape(duration, connections, streams, rate, maxErrors);

        if (parseOutput is not null && parseLog is not null)
        {
            if (!File.Exists(parseOutput) || !File.Exists(parseLog))
            {
                throw JobFailure.BadUsage("--parse needs an h2load report and its log file");
            }
            return Report(parseOutput, parseLog, shape, new WarmResult(0, false));
        }
        if (url.Length == 0)
        {
            throw JobFailure.BadUsage("missing URL");
        }
        if (!url.StartsWith("https://", StringComparison.Ordinal) && !url.StartsWith("http://", StringComparison.Ordinal))
        {
            throw JobFailure.BadUsage($"the URL must be https:// (h2 with ALPN) or http:// (prior-knowledge h2c): {url}");
        }
        if (preset == "handshake")
        {
            throw JobFailure.BadUsage("--headers handshake (Connection: close) has no HTTP/2 meaning: connection-specific fields make an h2 request malformed (RFC 9113 §8.2.2)");
        }
        var presetHeaders = HeaderPresets.Of(preset) ?? throw JobFailure.BadUsage($"unknown header preset '{preset}' (plaintext|browser|none)");
        var sent = Sent(presetHeaders.Concat(headers));

        var h2load = H2LoadTool.Find();
        var work = Directory.CreateTempSubdirectory("h2load-job.");
        try
        {
            List<string> loadArgs = ["-t", H2LoadTool.I(threads), "-c", H2LoadTool.I(connections), "-m", H2LoadTool.I(streams)];
            if (rate is { } r)
            {
                // h2load's --rps is per connection and takes a fraction.
                loadArgs.AddRange(["--rps", H2LoadTool.PerConnection(r, connections, 6)]);
            }
            H2LoadTool.WithRequest(loadArgs, sent, bodySize, work.FullName);
            var loop = rate is null ? "closed loop" : $"open loop at {rate} requests/s";
            var bodies = bodySize == 0 ? "" : $", POST bodies of {bodySize} bytes";
            Console.WriteLine($"h2load-job: {H2LoadTool.Version(h2load)}; {connections} connection(s) x {streams} stream(s), {loop}{bodies} on {url}");

            var warm = new WarmResult(warmup, false);
            var warming = new Warmup("h2load-job", (seconds, output) => H2LoadTool.Start(h2load, seconds, [.. loadArgs, url], output), Console.Out);
            if (Warmup.AdaptiveProbe(warmup, warmupMax) is { } probe)
            {
                // h2load stops at SIGTERM (it ignores SIGINT in the background, as the bash job ran it).
                warm = warming.Adaptive(warmup, warmupMax!.Value, probe, Tools.SigTerm);
            }
            else if (warmup > 0)
            {
                Console.WriteLine($"h2load-job: warm-up: {h2load} -D {warmup}{ShellWord.Spaced(loadArgs)} {url}");
                warming.Fixed(warmup);
            }

            var (status, output, log) = H2LoadTool.Measured("h2load-job", h2load, duration, loadArgs, url, work.FullName);
            return status != 0 ? status : Report(output, log, shape, warm);
        }
        finally
        {
            work.Delete(recursive: true);
        }
    }

    /// <summary>The header fields h2load sends: <paramref name="headers"/> without the connection-specific ones.</summary>
    public static IEnumerable<string> Sent(IEnumerable<string> headers) =>
        headers.Where(h => !ConnectionSpecific.Any(c => h.StartsWith(c, StringComparison.OrdinalIgnoreCase)));

    /// <summary>The run's shape as the figures need it: -d, -c, -m, --rate and --max-errors.</summary>
    public sealed record Shape(int Duration, int Connections, int Streams, int? Rate, int? MaxErrors);

    /// <summary>The statistics block, then the protocol check (exit 5) and the error check (exit 4).</summary>
    private static int Report(string output, string log, Shape shape, WarmResult warm)
    {
        var report = H2LoadReport.Read(output);
        var rows = Rows(report, H2LoadLogRow.Read(log), shape)
            ?? throw JobFailure.NotReadable($"could not parse the h2load report {output}");
        rows.Add(ToolText.Row("warmup/seconds", "Max", "Max", "Warm-up (s)", "Seconds of load before the measured run", "n0", warm.Seconds));
        if (warm.Capped)
        {
            rows.Add(ToolText.Row("warmup/capped", "Max", "Max", "Warm-up capped",
                "1: the adaptive warm-up reached --warmup-max before the server was warm", "n0", 1));
        }
        Console.Write(Statistics.Block("h2load", rows, DateTime.UtcNow));
        Console.Out.Flush();
        // h2load names prior-knowledge cleartext h2 "h2c".
        if (report.Protocol is not ("h2" or "h2c"))
        {
            Console.Error.WriteLine($"h2load-job: the connections spoke '{report.Protocol}', not h2 (an https server that does not offer h2 in ALPN, or an http server without prior-knowledge h2c): failing the job");
            return NotH2;
        }
        var errors = rows.Where(m => m.Name.StartsWith("h2load/errors/", StringComparison.Ordinal)).Sum(m => (double)m.Value);
        if (errors > shape.MaxErrors)
        {
            Console.Error.WriteLine($"h2load-job: {errors} bad responses + errors in the measured run, more than --max-errors {shape.MaxErrors}: failing the job");
            return JobFailure.TooManyErrors;
        }
        return 0;
    }

    /// <summary>The figures of one measured run; null when the report lacks the request counts, the rate or the
    /// request times. Percentiles: nearest rank over the log's answered requests, in ms.</summary>
    public static List<Measurement>? Rows(H2LoadReport report, IReadOnlyList<H2LoadLogRow> log, Shape shape)
    {
        if (report is not { Requests: { } n, Rps: { } rps, RequestTime: { } time })
        {
            return null;
        }
        double d = shape.Duration;
        var errors = Math.Max(0, n.Failed - report.Bad);
        var availability = n.Done > 0 ? report.Ok * 100 / n.Done : 0;
        List<Measurement> rows =
        [
            ToolText.Row("h2load/rps/mean;http/rps/mean", "Max", "Sum", "Requests/sec", "Responses per second (completed streams / duration)", "n0", rps),
            ToolText.Row("h2load/requests;http/requests", "Max", "Sum", "Requests", "Responses (completed streams, any status)", "n0", n.Succeeded),
            ToolText.Row("h2load/latency/mean;http/latency/mean", "Max", "Avg", "Mean latency (ms)", "Mean time for request (ms)", "n2", time.Mean),
            ToolText.Row("h2load/latency/max;http/latency/max", "Max", "Max", "Max latency (ms)", "Largest time for request (ms)", "n2", time.Max),
            ToolText.Row("h2load/errors/badresponses;http/requests/badresponses", "Max", "Sum", "Bad responses", "4xx and 5xx answers", "n0", report.Bad),
            ToolText.Row("h2load/errors/socketerrors;http/requests/errors", "Max", "Sum", "Errors", "Requests failed without an answer (stream or connection errors, time-outs)", "n0", errors),
            ToolText.Row("h2load/throughput;http/throughput", "Max", "Sum", "Read throughput (MB/s)", "Bytes received per second, frames included (MB/s)", "n2", report.Bytes / d / 1048576),
        ];
        var answered = H2LoadLogRow.AnsweredMicros(log);
        if (answered.Length > 0)
        {
            foreach (var p in Percentiles)
            {
                var rank = H2LoadLogRow.NearestRank(answered.Length * double.Parse(p, System.Globalization.CultureInfo.InvariantCulture) / 100);
                rows.Add(ToolText.Row($"h2load/latency/{p};http/latency/{p}", "Max", "Max", $"Latency {p}th (ms)",
                    $"Latency {p}th over the answered requests (ms)", "n2", answered[rank - 1] / 1000));
            }
        }
        rows.Add(ToolText.Row("h2load/rps/2xx", "Max", "Sum", "2xx/s", "2xx and 3xx answers per second (the achieved rate)", "n0", report.Ok / d));
        rows.Add(ToolText.Row("h2load/availability", "Max", "Min", "Availability (%)", "2xx and 3xx answers / requests that ended, in %", "n3", availability));
        rows.Add(ToolText.Row("h2load/connections", "Max", "Sum", "Connections", "HTTP/2 connections", "n0", shape.Connections));
        rows.Add(ToolText.Row("h2load/streams", "Max", "Max", "Streams per connection", "Concurrent streams per connection at most (h2load -m)", "n0", shape.Streams));
        if (shape.Rate is { } rate)
        {
            rows.Add(ToolText.Row("h2load/rate", "Max", "Sum", "Offered rate (req/s)", "Requests per second the job offers (open loop)", "n0", rate));
            rows.Add(ToolText.Row("h2load/sent", "Max", "Sum", "Sent rate (req/s)", "Requests per second h2load sent", "n1", n.Started / d));
        }
        return rows;
    }
}
