using System.Text.Json.Nodes;
using System.Text.RegularExpressions;
using static LLRP.Jobs.JobArgs;
using static LLRP.Jobs.ToolText;

namespace LLRP.Jobs;

/// <summary>crank/ab-job.sh, the "ab" comparison's load job (ApacheBench): <see cref="Help"/> says what it runs and reports.</summary>
internal static partial class AbJob
{
    public const string Help = """
        Load job of the "ab" comparison: ApacheBench (Debian's apache2-utils) with many concurrent clients on one page,
        the way the published Netflix Zuul vs nginx comparison measured (ab, 200 concurrent clients, one 26 KB page,
        direct and through each proxy). Used by benchmarks.yml (scenarios ab-*) and by the runner's comparisons (`crank/run-local.sh ab`).

        It runs an unmeasured warm-up, then the measured ab as a child announced with "##ChildProcessId:<pid>" on stderr
        (crank's protocol: the agent measures ab, not this job), parses ab's report and prints crank's statistics
        block (#StartJobStatistics / JSON / #EndJobStatistics): ab/rps/mean, ab/time-per-request/mean (ab's "Time per
        request (mean)", i.e. concurrency / rate), ab/requests, ab/failed, ab/non2xx, ab/latency/50|90|95|99|max (ms, ab's
        percentage table, whole milliseconds), each also under crank's http/* names where one exists.

        usage: ab-job.sh [-w WARMUP_S] [-d DURATION_S] [-c CLIENTS] [-k] [--max-errors N] URL
               ab-job.sh --parse REPORT_FILE      only parse a saved ab report (tests: tests/Jobs.Tests)

        Defaults: -c 200 (the published comparison), 5 s warm-up, 15 s measured (ab -t with a request cap so large that
        the time ends the run; ab's own -t implies -n 50000, which would end a fast run early). No keep-alive unless -k:
        ab's default, and the published comparison's, so every request opens a connection.

        Environment: AB (ab binary, default: ab on PATH); AB_JOB_HOOK, like wrk-job.sh's WRK_JOB_HOOK: called with
        "measure-start" / "measure-end" around the measured run (the runner's comparisons (`crank/run-local.sh ab`) samples the processes with it).
        Exit code: ab's own, 2 bad usage, 3 the report cannot be parsed, 4 failed + non-2xx requests exceed --max-errors.
        """;

    /// <summary>A short warm-up: ab's runs are short comparisons of a static page.</summary>
    private const int DefaultWarmupSeconds = 5;

    /// <summary>crank's usual measured time.</summary>
    private const int DefaultDurationSeconds = 15;

    /// <summary>The published comparison's 200 concurrent clients.</summary>
    private const int DefaultClients = 200;

    /// <summary>ab needs a request cap; the measured time ends the run long before this one (ab holds no per-request
    /// state). ab's own -t implies -n 50000, which would end a fast run early.</summary>
    private const int RequestCap = 100000000;

    private const string Job = "ab-job";

    public static int Run(string[] args)
    {
        if (args is ["--parse", ..])
        {
            if (args.Length < 2 || !File.Exists(args[1]))
            {
                throw JobFailure.BadUsage("--parse needs a saved ab report");
            }
            var rows = Figures(File.ReadAllText(args[1])) ?? throw JobFailure.NotReadable($"could not parse the ab report {args[1]}");
            Console.Write(Statistics.Block("ab", rows, DateTime.UtcNow));
            return 0;
        }

        string warmupText = I(DefaultWarmupSeconds), durationText = I(DefaultDurationSeconds), clientsText = I(DefaultClients);
        string? maxErrorsText = null, url = null;
        var keepAlive = false;
        var a = new JobArgs(args);
        while (a.Next(out var arg))
        {
            switch (arg)
            {
                case "-w" or "--warmup": warmupText = a.Value(arg); break;
                case "-d" or "--duration": durationText = a.Value(arg); break;
                case "-c" or "--clients": clientsText = a.Value(arg); break;
                case "-k" or "--keepalive": keepAlive = true; break;
                case "--max-errors": maxErrorsText = a.Value(arg); break;
                case "-h" or "--help":
                    Console.WriteLine(Help);
                    return 0;
                default: url = Url(url, arg); break;
            }
        }
        if (url is null)
        {
            throw JobFailure.BadUsage("missing URL");
        }
        var warmup = WholeNumberOf(warmupText);
        var duration = WholeNumberOf(durationText);
        var clients = WholeNumberOf(clientsText);
        int? maxErrors = maxErrorsText is null ? null : WholeNumberOf(maxErrorsText);
        if (duration <= 0 || clients <= 0)
        {
            throw JobFailure.BadUsage("duration and clients must be > 0");
        }
        // ab needs a path, even "/": http://host:port alone is refused.
        if (!HttpWithPath().IsMatch(url))
        {
            throw JobFailure.BadUsage($"URL must be http://HOST:PORT/PATH: {url}");
        }
        var ab = Tools.Find("AB", "ab", "apache2-utils");

        // -r: a socket receive error is counted as a failed request instead of ending the run; -q: no progress lines.
        List<string> abArgs = ["-q", "-r", "-c", I(clients), .. keepAlive ? ["-k"] : Array.Empty<string>()];
        string Command(int seconds) => $"{ab} -t {seconds} -n {RequestCap} {string.Join(' ', abArgs)} {url}";
        // ab's errors (a refused connection, say) belong with its report.
        ToolRun Load(int seconds, string? output) =>
            ToolRun.Start(ab, ["-t", I(seconds), "-n", I(RequestCap), .. abArgs, url], output, errorsToo: true);
        if (warmup > 0)
        {
            Console.WriteLine($"{Job}: warm-up: {Command(warmup)}");
            new Warmup(Job, (seconds, output) => Load(seconds, output), Console.Out).Fixed(warmup);
        }

        var report = Path.GetTempFileName();
        try
        {
            Console.WriteLine($"{Job}: measured: {Command(duration)}");
            Tools.Hook("AB_JOB_HOOK", "measure-start");
            int rc;
            using (var run = Load(duration, report))
            {
                Console.Error.WriteLine($"##ChildProcessId:{run.Id}");
                rc = run.WaitForExit();
            }
            Tools.Hook("AB_JOB_HOOK", "measure-end");
            var text = File.ReadAllText(report);
            Console.Write(text);
            if (rc != 0)
            {
                throw new JobFailure(rc, $"ab exited with {rc}");
            }
            var rows = Figures(text) ?? throw JobFailure.NotReadable("could not parse the ab report above");
            Console.Write(Statistics.Block("ab", rows, DateTime.UtcNow));
            var errors = ErrorsOf(text);
            if (maxErrors is { } max && errors > max)
            {
                throw new JobFailure(JobFailure.TooManyErrors,
                    $"{I(errors)} failed + non-2xx requests in the measured run, more than --max-errors {max}: failing the job");
            }
        }
        finally
        {
            File.Delete(report);
        }
        return 0;
    }

    /// <summary>crank's statistics rows for an ab report; null when it lacks its summary lines. Lines used (ab 2.3):
    /// <code>
    ///   Complete requests:      10000
    ///   Failed requests:        0
    ///   Non-2xx responses:      12            (only when > 0)
    ///   Requests per second:    8103.45 [#/sec] (mean)
    ///   Time per request:       24.681 [ms] (mean)
    ///   Time per request:       0.123 [ms] (mean, across all concurrent requests)
    ///     95%     31                           (percentage table, ms)
    ///    100%     45 (longest request)
    /// </code></summary>
    internal static List<Measurement>? Figures(string report)
    {
        double? complete = null, rps = null, timePerRequest = null;
        double failed = 0, non2xx = 0;
        var percentiles = new Dictionary<string, double>();
        foreach (var line in report.Split('\n'))
        {
            var f = Fields(line);
            string Field(int i) => i < f.Length ? f[i] : "";
            switch (Field(0), Field(1), Field(2))
            {
                case ("Complete", "requests:", _): complete = Number(Field(2)); break;
                case ("Failed", "requests:", _): failed = Number(Field(2)); break;
                case ("Non-2xx", "responses:", _): non2xx = Number(Field(2)); break;
                case ("Requests", "per", "second:"): rps = Number(Field(3)); break;
                case ("Time", "per", "request:") when Field(4) == "[ms]" && Field(5) == "(mean)": timePerRequest = Number(Field(3)); break;
                case ("50%" or "90%" or "95%" or "99%" or "100%", _, _): percentiles[f[0]] = Number(Field(1)); break;
                default: break;
            }
        }
        if (complete is null || rps is null || timePerRequest is null)
        {
            return null;
        }
        List<Measurement> rows =
        [
            Row("ab/rps/mean;http/rps/mean", "Max", "Sum", "Requests/sec", "Requests per second (ab)", "n0", rps.Value),
            Row("ab/time-per-request/mean", "Max", "Avg", "Time per request (ms)", "Mean time per request, ab: concurrency / rate (ms)", "n2", timePerRequest.Value),
            Row("ab/requests;http/requests", "Max", "Sum", "Requests", "Complete requests", "n0", complete.Value),
            Row("ab/failed;http/requests/errors", "Max", "Sum", "Failed requests", "Failed requests (connect, receive, length, exceptions)", "n0", failed),
            Row("ab/non2xx;http/requests/badresponses", "Max", "Sum", "Non-2xx responses", "Non-2xx responses", "n0", non2xx),
        ];
        foreach (var (p, name) in new[] { ("50%", "50"), ("90%", "90"), ("95%", "95"), ("99%", "99") })
        {
            if (percentiles.TryGetValue(p, out var ms))
            {
                rows.Add(Row($"ab/latency/{name};http/latency/{name}", "Max", "Max", $"Latency {name}th (ms)", $"Latency {name}th (ms)", "n0", ms));
            }
        }
        if (percentiles.TryGetValue("100%", out var longest))
        {
            rows.Add(Row("ab/latency/max;http/latency/max", "Max", "Max", "Max latency (ms)", "Longest request (ms)", "n0", longest));
        }
        return rows;
    }

    /// <summary>Failed plus non-2xx requests in an ab report.</summary>
    internal static double ErrorsOf(string report) =>
        report.Split('\n').Select(Fields).Sum(f =>
            f.Length > 2 && ((f[0] == "Failed" && f[1] == "requests:") || (f[0] == "Non-2xx" && f[1] == "responses:")) ? Number(f[2]) : 0);


    [GeneratedRegex(@"^http://[^/]+/")]
    private static partial Regex HttpWithPath();
}
