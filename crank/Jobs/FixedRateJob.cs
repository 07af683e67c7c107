namespace LLRP.Jobs;

/// <summary>crank/fixedrate-job.sh, the fixed-rate (open-loop) load job, every request timed from when it was due:
/// <see cref="Help"/> gives the due times, the figures and the options.</summary>
internal static class FixedRateJob
{
    public const string Help = """
Load job of the fixed-rate (open-loop) scenarios (benchmarks.yml: job "fixedrate", scenarios fixedrate-*; crank/
run-local.sh --fixed-rate): requests go out at a set rate whatever the server's pace, and every request is timed from
when it was due, so a stall shows in the latencies of every request it held back (coordinated omission corrected).

The tool is h2load (Debian's nghttp2-client) over HTTP/1.1:
  h2load --h1 -t 1 -c CONNECTIONS --rps RATE/CONNECTIONS -D DURATION_S --log-file LOG URL
Each connection has its own timer that makes a request due every CONNECTIONS/RATE seconds; an HTTP/1.1 connection
carries one request at a time, so a request that falls due while the previous answer is still out waits, and h2load
sends the ones that waited together once the answer is in. h2load times a request from when it sent it: a 200 ms
stall of the server shows as one slow request per connection and a burst of fast ones after it (crank/README.md,
"Fixed rate", has the experiment). This job re-times them from the per-request log: the connections start together
and tick together, so the k-th request sent (in order of sending) was due at the k-th due time,
  due(k) = first send + floor(k / CONNECTIONS) * CONNECTIONS / RATE,
and its latency is its end minus due(k), or h2load's own time when that is longer (h2load counts the requests due
with round(), so a late timer tick may send one up to half an interval early). Requests that were due in the window but had no answer when it ended
(never sent, or still out) count with the time from their due time to the window's end, a lower bound, so an
overloaded server's tail is not cut off. h2load's own figures stay beside them (fixedrate/uncorrected/...).

Statistics (crank's stdout block), under the wrk job's names where they overlap: http/latency/{50,90,99,99.9,max,mean}
(ms, corrected; also as fixedrate/latency/...), http/rps/mean (2xx+3xx answers per second), http/requests (answers),
http/requests/badresponses (4xx/5xx), http/requests/errors (failed otherwise: stream errors, time-outs); and
fixedrate/rate (offered), fixedrate/due (requests due in the window), fixedrate/sent (requests/s h2load sent),
fixedrate/missed (due but unanswered at the end), fixedrate/uncorrected/latency/{50,99,99.9,max}.

usage: fixedrate-job.sh --rate R [-w WARMUP_S] [-d DURATION_S] [-c CONNECTIONS] [--headers plaintext|browser|handshake|none]
                        [-H 'Name: value']... [--body-size BYTES] [--body-framing content-length] [--max-errors N] URL
       fixedrate-job.sh --parse H2LOAD_OUTPUT LOG_FILE RATE CONNECTIONS DURATION_S   (tests/Jobs.Tests)
Defaults: -w 20 -d 15 -c 64 (run-local.sh's), headers plaintext. The warm-up runs at the same rate, unmeasured.
--body-size N > 0: every request is a POST with an N-byte body with Content-Length (h2load -d); h2load cannot send a
chunked body, so --body-framing chunked is refused (the wrk job sends it).
Environment: H2LOAD (default: h2load on PATH); WRK_JOB_HOOK, as for wrk-job.sh: called with measure-start and
measure-end around the measured run (run-local.sh samples the processes there).
Bounds: at most MAX_DURATION_S (3600 s) measured and as much warm-up; h2load is stopped 30 s after its -D should have ended.
Exit code: 0; 2 bad usage; 3 the h2load report cannot be parsed; 4 more bad responses + errors than --max-errors
(statistics printed first); or h2load's own exit code.
""";

    /// <summary>An hour: far beyond any sitting's run (15 s) and the bound a forgotten unit (ms for s) runs into.</summary>
    public const int MaxDurationSeconds = 3600;

    private static readonly string[] Percentiles = ["50", "90", "99", "99.9"];

    public static int Run(string[] argv)
    {
        if (argv.Length > 0 && argv[0] == "--parse")
        {
            if (argv.Length != 6 || !File.Exists(argv[1]) || !File.Exists(argv[2]))
            {
                throw JobFailure.BadUsage("--parse needs H2LOAD_OUTPUT LOG_FILE RATE CONNECTIONS DURATION_S");
            }
            var parsed = Rows(H2LoadReport.Read(argv[1]), H2LoadLogRow.Read(argv[2]), JobArgs.WholeNumberOf(argv[3]),
                JobArgs.WholeNumberOf(argv[4]), JobArgs.WholeNumberOf(argv[5]))
                ?? throw JobFailure.NotReadable($"could not parse the h2load report {argv[1]}");
            Console.Write(Statistics.Block("fixedrate", parsed, DateTime.UtcNow));
            return 0;
        }

        int warmup = 20, duration = 15, connections = 64, bodySize = 0;
        int? rate = null, maxErrors = null;
        string preset = "plaintext", framing = "content-length", url = "";
        var headers = new List<string>();
        var args = new JobArgs(argv);
        while (args.Next(out var a))
        {
            switch (a)
            {
                case "--rate": rate = args.Count(a); break;
                case "-w" or "--warmup": warmup = args.WholeNumber(a); break;
                case "-d" or "--duration": duration = args.WholeNumber(a); break;
                case "-c" or "--connections": connections = args.Count(a); break;
                case "--headers": preset = args.Value(a); break;
                case "-H" or "--header": headers.Add(args.Value(a)); break;
                case "--body-size": bodySize = args.Count(a); break;
                case "--body-framing": framing = args.Value(a); break;
                case "--max-errors": maxErrors = args.Count(a); break;
                case "-h" or "--help": Console.WriteLine(Help); return 0;
                default: url = JobArgs.Url(url, a); break;
            }
        }
        if (url.Length == 0)
        {
            throw JobFailure.BadUsage("missing URL");
        }
        if (rate is not { } offered)
        {
            throw JobFailure.BadUsage("--rate is required (requests per second over all connections)");
        }
        if (offered < 1 || connections < 1)
        {
            throw JobFailure.BadUsage("--rate and -c must be >= 1");
        }
        if (duration < 1 || duration > MaxDurationSeconds || warmup > MaxDurationSeconds)
        {
            throw JobFailure.BadUsage($"-d must be 1 to {MaxDurationSeconds} seconds, -w at most {MaxDurationSeconds}");
        }
        switch (framing)
        {
            case "content-length": break;
            case "chunked" when bodySize == 0: break;
            case "chunked":
                throw JobFailure.BadUsage("h2load sends request bodies with Content-Length only: --body-framing chunked is the wrk job's (benchmarks.yml job wrk)");
            default:
                throw JobFailure.BadUsage($"--body-framing must be content-length or chunked, not '{framing}'");
        }
        var presetHeaders = HeaderPresets.Of(preset) ?? throw JobFailure.BadUsage($"unknown header preset '{preset}' (plaintext|browser|handshake|none)");

        var h2load = H2LoadTool.Find();
        var work = Directory.CreateTempSubdirectory("fixedrate-job.");
        try
        {
            // h2load's --rps is per connection and takes a fraction.
            var perClient = H2LoadTool.PerConnection(offered, connections, 6);
            var loadArgs = H2LoadTool.WithRequest(["--h1", "-t", "1", "-c", H2LoadTool.I(connections), "--rps", perClient],
                presetHeaders.Concat(headers), bodySize, work.FullName);
            var bodies = bodySize == 0 ? "" : $", POST bodies of {bodySize} bytes";
            Console.WriteLine($"fixedrate-job: {H2LoadTool.Version(h2load)}; {offered} requests/s over {connections} connections ({perClient} each){bodies}");
            if (warmup > 0)
            {
                // The warm-up runs at the same rate, unmeasured.
                Console.WriteLine($"fixedrate-job: warm-up: {h2load} -D {warmup}{ShellWord.Spaced(loadArgs)} {url}");
                new Warmup("fixedrate-job", (seconds, output) => H2LoadTool.Start(h2load, seconds, [.. loadArgs, url], output), Console.Out)
                    .Fixed(warmup);
            }

            var (status, output, log) = H2LoadTool.Measured("fixedrate-job", h2load, duration, loadArgs, url, work.FullName);
            if (status != 0)
            {
                return status;
            }
            var rows = Rows(H2LoadReport.Read(output), H2LoadLogRow.Read(log), offered, connections, duration)
                ?? throw JobFailure.NotReadable("could not parse the h2load report above");
            Console.Write(Statistics.Block("fixedrate", rows, DateTime.UtcNow));
            Console.WriteLine(Summary(rows));
            var errors = rows.Where(m => m.Name.StartsWith("fixedrate/errors/", StringComparison.Ordinal)).Sum(m => (double)m.Value);
            if (errors > maxErrors)
            {
                Console.Out.Flush();
                Console.Error.WriteLine($"fixedrate-job: {errors} bad responses + errors in the measured run, more than --max-errors {maxErrors}: failing the job");
                return JobFailure.TooManyErrors;
            }
            return 0;
        }
        finally
        {
            work.Delete(recursive: true);
        }
    }

    /// <summary>The line after the block: offered, sent and answered rates, the corrected and h2load's latencies.</summary>
    public static string Summary(IReadOnlyList<Measurement> rows)
    {
        double V(string name) => (double)rows.First(m => m.Name == name).Value;
        return $"fixedrate-job: offered {V("fixedrate/rate")}/s, sent {ToolText.F(V("fixedrate/sent"), 0)}/s, answered {ToolText.F(V("fixedrate/rps;http/rps/mean"), 0)}/s; "
            + $"p50 {ToolText.F(V("fixedrate/latency/50;http/latency/50"), 3)} ms, p99 {ToolText.F(V("fixedrate/latency/99;http/latency/99"), 3)} ms, "
            + $"p99.9 {ToolText.F(V("fixedrate/latency/99.9;http/latency/99.9"), 3)} ms, max {ToolText.F(V("fixedrate/latency/max;http/latency/max"), 3)} ms from the due time "
            + $"(h2load from the send: p99 {ToolText.F(V("fixedrate/uncorrected/latency/99"), 3)} ms, max {ToolText.F(V("fixedrate/uncorrected/latency/max"), 3)} ms); "
            + $"{V("fixedrate/due")} due, {V("fixedrate/missed")} missed";
    }

    /// <summary>The latencies from the due time, in ms, ascending: one per answered request and one per
    /// request due in the window but unanswered at its end (counted to the end). The log in order of sending (by
    /// start, ties by the whole line as sort(1) breaks them); the window is the first send + the duration.</summary>
    public static List<double> Corrected(IEnumerable<H2LoadLogRow> log, double rate, double connections, double duration)
    {
        var corrected = new List<double>();
        double? first = null;
        var k = 0;
        double Due(int i) => first!.Value + Math.Truncate(i / connections) * connections / rate * 1e6;
        foreach (var row in log.OrderBy(r => r.Start).ThenBy(r => r.Line, StringComparer.Ordinal).Where(r => r.Status > 0))
        {
            first ??= row.Start;
            var due = Due(k);
            k++;
            // Never less than the time h2load measured: it counts the requests due with round(), so a late timer tick
            // can send one up to half an interval early, and such a request was not held back.
            var late = row.Start + row.Micros - due;
            corrected.Add((late > row.Micros ? late : row.Micros) / 1000);
        }
        if (first is { } start)
        {
            // The rest of the schedule: every due time before the end without an answer.
            var end = start + duration * 1e6;
            for (; ; k++)
            {
                var due = Due(k);
                if (due >= end)
                {
                    break;
                }
                corrected.Add((end - due) / 1000);
            }
        }
        corrected.Sort();
        return corrected;
    }

    /// <summary>Nearest rank at 50, 90, 99 and 99.9 %, the max and the mean (summed in ascending order) of an ascending list.</summary>
    private static (double[] Percentiles, double Max, double Mean) Summarise(List<double> sorted)
    {
        var p = Percentiles.Select(q => sorted[H2LoadLogRow.NearestRank(sorted.Count * double.Parse(q, System.Globalization.CultureInfo.InvariantCulture) / 100) - 1]).ToArray();
        var sum = 0.0;
        foreach (var v in sorted)
        {
            sum += v;
        }
        return (p, sorted[^1], sum / sorted.Count);
    }

    /// <summary>The figures of one run; null when the report lacks the request counts or no request was answered.</summary>
    public static List<Measurement>? Rows(H2LoadReport report, IReadOnlyList<H2LoadLogRow> log, int rate, int connections, int duration)
    {
        var corrected = Corrected(log, rate, connections, duration);
        var uncorrected = H2LoadLogRow.AnsweredMicros(log).Select(us => us / 1000).ToList();
        if (report.Requests is not { } n || corrected.Count == 0 || uncorrected.Count == 0)
        {
            return null;
        }
        double d = duration;
        var (c, cMax, cMean) = Summarise(corrected);
        var (u, uMax, _) = Summarise(uncorrected);
        var errors = Math.Max(0, n.Failed - report.Bad);
        // The corrected list has one entry per answer and per unanswered due request: its length is what was due.
        double due = corrected.Count;
        var missed = Math.Max(0, due - (report.Ok + report.Bad));
        List<Measurement> rows =
        [
            ToolText.Row("fixedrate/rate", "Max", "Sum", "Offered rate (req/s)", "Requests per second the job sends (open loop)", "n0", rate),
            ToolText.Row("fixedrate/due", "Max", "Sum", "Requests due", "Requests due in the measured window at the offered rate", "n0", due),
            ToolText.Row("fixedrate/sent", "Max", "Sum", "Sent rate (req/s)", "Requests per second h2load sent", "n1", n.Started / d),
            ToolText.Row("fixedrate/missed", "Max", "Sum", "Missed", "Requests due in the window without an answer at its end (never sent or still out)", "n0", missed),
            ToolText.Row("fixedrate/rps;http/rps/mean", "Max", "Sum", "Requests/sec", "2xx and 3xx answers per second", "n0", report.Ok / d),
            ToolText.Row("fixedrate/requests;http/requests", "Max", "Sum", "Requests", "Requests answered (any status) or failed", "n0", n.Done),
            ToolText.Row("fixedrate/errors/badresponses;http/requests/badresponses", "Max", "Sum", "Bad responses", "4xx and 5xx answers", "n0", report.Bad),
            ToolText.Row("fixedrate/errors/socketerrors;http/requests/errors", "Max", "Sum", "Errors", "Requests failed without an answer (stream errors, time-outs)", "n0", errors),
        ];
        for (var i = 0; i < Percentiles.Length; i++)
        {
            var p = Percentiles[i];
            rows.Add(ToolText.Row($"fixedrate/latency/{p};http/latency/{p}", "Max", "Max", $"Latency {p}th (ms)",
                $"Latency {p}th from the due time (ms), coordinated omission corrected", "n2", c[i]));
        }
        rows.Add(ToolText.Row("fixedrate/latency/max;http/latency/max", "Max", "Max", "Max latency (ms)", "Largest latency from the due time (ms)", "n2", cMax));
        rows.Add(ToolText.Row("fixedrate/latency/mean;http/latency/mean", "Max", "Avg", "Mean latency (ms)", "Mean latency from the due time (ms)", "n2", cMean));
        for (var i = 0; i < Percentiles.Length; i++)
        {
            var p = Percentiles[i];
            if (p != "90")
            {
                rows.Add(ToolText.Row($"fixedrate/uncorrected/latency/{p}", "Max", "Max", $"h2load latency {p}th (ms)",
                    $"Latency {p}th from the actual send, as h2load times it (ms)", "n2", u[i]));
            }
        }
        rows.Add(ToolText.Row("fixedrate/uncorrected/latency/max", "Max", "Max", "h2load max latency (ms)", "Largest latency from the actual send (ms)", "n2", uMax));
        return rows;
    }
}
