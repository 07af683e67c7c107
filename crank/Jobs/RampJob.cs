using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;
using System.Text.RegularExpressions;

namespace LLRP.Jobs;

/// <summary>crank/ramp-job.sh, the "ramp" comparison's load job (open loop at rising rates until the proxy saturates):
/// <see cref="Help"/> says what each step runs and reports, and the bounds.</summary>
internal static partial class RampJob
{
    public const string Help = """
Load job of the "ramp" comparison: an open-loop load at rising request rates until the proxy saturates, the shape
of the published nginx vs Pingora comparison (a slowly rising load; p99 latency, throughput, availability and the
proxy's CPU and memory against time). Used by benchmarks.yml (scenarios ramp-*) and by the runner's comparisons (`crank/run-local.sh ramp`).

Each step runs h2load (Debian's nghttp2-client) over HTTP/1.1 at a fixed rate for a fixed time:
  h2load --h1 -t 1 -c CONNECTIONS --rps RATE/CONNECTIONS -D STEP_S --log-file STEP.log URL
and reports, per step: the offered rate, the rate of requests h2load really sent (an HTTP/1.1 connection carries one
request at a time, so a proxy slower than CONNECTIONS / RATE seconds per request holds requests back and the sent
rate falls below the offered one: raise -c), the achieved rate of 2xx responses, p50 and p99 of the response times
in h2load's per-request log, the availability (2xx responses / requests that ended; the rest failed, errored, timed
out or answered non-2xx), and the proxy's CPU (percent of one core over the step) and resident memory at the step's end.

The proxy process is --proxy-pid, else the process listening on --proxy-port on this machine (ss -ltnp: the local
crank profile and the runner's comparisons (`crank/run-local.sh ramp`) run everything on one machine); on another machine CPU and memory are left
out (crank's agent still records the application's own CPU and memory over time).

It prints crank's statistics block: per step (aggregate "All", one value per step, in step order) ramp/offered,
ramp/sent, ramp/rps, ramp/latency/50, ramp/latency/99 (ms), ramp/availability (%), ramp/cpu (%), ramp/memory (MB);
and ramp/rps/max, the highest achieved rate (also http/rps/max).

usage: ramp-job.sh [--start R] [--step R] [--steps N] [-d STEP_S] [-w WARMUP_S] [-c CONNECTIONS]
                   [--proxy-pid PID | --proxy-port PORT] URL
       ramp-job.sh --parse-step H2LOAD_OUTPUT LOG_FILE OFFERED_RATE STEP_S   (tests: tests/Jobs.Tests)
Defaults: --start 4000 --step 4000 --steps 8 -d 10 (8 steps x 10 s: 4k to 32k requests/s), -w 10 (unmeasured, at the
first rate, so the .NET proxies run tiered-up code), -c 100. Where the range comes from (this repository's 2-core
box, load, proxy and origin on it): the first ramp (analysis/results/20261123-1128-comparisons-trial, 2k to 16k) saturated
only HAProxy (8.5k-11k achieved); llrp-llhttp and nginx achieved all 16k. A short probe (3 s steps, 8k to 32k) then
saturated all three between 10.4k and 17.5k achieved. 32k is about twice the highest rate any of them achieved, so
every proxy saturates within the ramp with room for a quieter box, and 4k steps keep 3-4 steps below saturation.
Bounds: at most 30 steps of at most 120 s each, so a ramp always ends within an hour.
Exit code: 0, 2 bad usage, 3 an h2load report cannot be parsed, or h2load's own exit code.
""";

    /// <summary>At most 30 steps of at most 120 s each, so a ramp always ends within an hour.</summary>
    public const int MaxSteps = 30;

    /// <inheritdoc cref="MaxSteps"/>
    public const int MaxStepSeconds = 120;

    private const int ScClkTck = 2;

    /// <summary>The names of a step's figures in <see cref="Step.Fields"/> order (null: a figure only the line shows).</summary>
    private static readonly (string? Name, string Description)[] Figures =
    [
        ("ramp/offered", "Offered rate (req/s)"),
        ("ramp/sent", "Sent rate (req/s)"),
        ("ramp/rps", "Achieved rate, 2xx (req/s)"),
        ("ramp/latency/50", "Latency 50th (ms)"),
        ("ramp/latency/99", "Latency 99th (ms)"),
        ("ramp/availability", "Availability (%)"),
        (null, ""),
        (null, ""),
        ("ramp/cpu", "Proxy CPU (% of a core)"),
        ("ramp/memory", "Proxy memory (MB)"),
    ];

    /// <summary>One step as --parse-step prints it: "offered sent rps p50 p99 availability ok done". "done" counts
    /// every request that ended in the step, with a response or a failure (h2load's "done"); the requests still in
    /// flight when the step's time is up ("started" - "done") are in neither count. p50 and p99: nearest rank over the
    /// answered requests, ms to 3 decimals ("nan" when none was answered).</summary>
    public sealed record Step(string Offered, string Sent, string Rps, string P50, string P99, string Availability, string Ok, string Done)
    {
        public string[] Fields => [Offered, Sent, Rps, P50, P99, Availability, Ok, Done];

        public override string ToString() => string.Join(' ', Fields);
    }

    /// <summary>One step of <paramref name="report"/> and its log at <paramref name="offered"/> requests/s for
    /// <paramref name="seconds"/>; null when the report lacks the request counts.</summary>
    public static Step? ParseStep(H2LoadReport report, IReadOnlyList<H2LoadLogRow> log, string offered, double seconds)
    {
        if (report.Requests is not { } n)
        {
            return null;
        }
        var answered = H2LoadLogRow.AnsweredMicros(log);
        string Rank(double fraction) => answered.Length == 0
            ? "nan"
            : ToolText.F(answered[H2LoadLogRow.NearestRank(answered.Length * fraction) - 1] / 1000, 3);
        var ok = report.Ok2xx;
        var availability = n.Done > 0 ? ok * 100 / n.Done : 0;
        return new Step(offered, ToolText.F(n.Done / seconds, 1), ToolText.F(ok / seconds, 1), Rank(0.50), Rank(0.99),
            ToolText.F(availability, 3), ToolText.F(Math.Truncate(ok), 0), ToolText.F(Math.Truncate(n.Done), 0));
    }

    /// <summary>The statistics rows: per step (aggregate "All", one value per step, in step order) each figure that is
    /// not "nan", then the highest achieved rate.</summary>
    public static List<Measurement> Rows(IEnumerable<string[]> steps)
    {
        var rows = new List<Measurement>();
        var max = 0.0;
        foreach (var fields in steps)
        {
            for (var k = 0; k < Figures.Length && k < fields.Length; k++)
            {
                if (Figures[k].Name is { } name && fields[k] != "nan")
                {
                    var d = Figures[k].Description;
                    rows.Add(Measurement.Number(name, "All", "All", "", "n2", Parse(fields[k])) with
                    {
                        ShortDescription = $"{d}, per step",
                        LongDescription = $"{d}, one value per step",
                    });
                }
            }
            max = Math.Max(max, Parse(fields[2]));
        }
        rows.Add(ToolText.Row("ramp/rps/max;http/rps/max", "Max", "Max", "Highest achieved rate (req/s)",
            "Highest achieved rate of 2xx responses over the steps", "n0", max));
        return rows;
    }

    private static double Parse(string number) => double.Parse(number, NumberStyles.Float, CultureInfo.InvariantCulture);

    public static int Run(string[] argv)
    {
        if (argv.Length > 0 && argv[0] == "--parse-step")
        {
            if (argv.Length != 5 || !File.Exists(argv[1]) || !File.Exists(argv[2]))
            {
                throw JobFailure.BadUsage("--parse-step needs H2LOAD_OUTPUT LOG_FILE OFFERED_RATE STEP_S");
            }
            var step = ParseStep(H2LoadReport.Read(argv[1]), H2LoadLogRow.Read(argv[2]), argv[3], JobArgs.WholeNumberOf(argv[4]))
                ?? throw JobFailure.NotReadable($"could not parse the h2load report {argv[1]}");
            Console.WriteLine(step);
            return 0;
        }

        int start = 4000, increment = 4000, steps = 8, stepSeconds = 10, warmup = 10, connections = 100;
        int? proxyPid = null, proxyPort = null;
        var url = "";
        var args = new JobArgs(argv);
        while (args.Next(out var a))
        {
            switch (a)
            {
                case "--start": start = args.Count(a); break;
                case "--step": increment = args.Count(a); break;
                case "--steps": steps = args.Count(a); break;
                case "-d" or "--duration": stepSeconds = args.WholeNumber(a); break;
                case "-w" or "--warmup": warmup = args.WholeNumber(a); break;
                case "-c" or "--connections": connections = args.Count(a); break;
                case "--proxy-pid": proxyPid = args.Count(a); break;
                case "--proxy-port": proxyPort = args.Count(a); break;
                case "-h" or "--help": Console.WriteLine(Help); return 0;
                default: url = JobArgs.Url(url, a); break;
            }
        }
        if (url.Length == 0)
        {
            throw JobFailure.BadUsage("missing URL");
        }
        if (steps < 1 || steps > MaxSteps)
        {
            throw JobFailure.BadUsage($"--steps must be 1 to {MaxSteps}");
        }
        if (stepSeconds < 1 || stepSeconds > MaxStepSeconds)
        {
            throw JobFailure.BadUsage($"-d must be 1 to {MaxStepSeconds} seconds");
        }
        if (start < 1 || connections < 1)
        {
            throw JobFailure.BadUsage("--start and -c must be >= 1");
        }
        var h2load = H2LoadTool.Find();

        if (proxyPid is null && proxyPort is { } port)
        {
            proxyPid = ListeningPid(port);
        }
        if (proxyPid is { } p && !File.Exists($"/proc/{p}/stat"))
        {
            Console.Error.WriteLine($"ramp-job: no process {p}; CPU and memory left out");
            proxyPid = null;
        }
        Console.WriteLine($"ramp-job: {H2LoadTool.Version(h2load)}; proxy process: {(proxyPid is { } pid ? H2LoadTool.I(pid) : "unknown (CPU and memory left out)")}");
        var ticksPerSecond = (double)SysConf(ScClkTck);

        var work = Directory.CreateTempSubdirectory("ramp-job.");
        try
        {
            // h2load's --rps is per connection.
            List<string> LoadArgs(int rate) => ["--h1", "-t", "1", "-c", H2LoadTool.I(connections), "--rps", H2LoadTool.PerConnection(rate, connections, 3)];
            if (warmup > 0)
            {
                Console.WriteLine($"ramp-job: warm-up: {h2load} --h1 -t 1 -c {connections} --rps {H2LoadTool.PerConnection(start, connections, 3)} -D {warmup} {url}");
                new Warmup("ramp-job", (seconds, output) => H2LoadTool.Start(h2load, seconds, [.. LoadArgs(start), url], output), Console.Out)
                    .Fixed(warmup);
            }

            var rows = new List<string[]>();
            for (var i = 0; i < steps; i++)
            {
                var rate = start + i * increment;
                var output = Path.Combine(work.FullName, $"step{i}.out");
                var log = Path.Combine(work.FullName, $"step{i}.log");
                Console.WriteLine($"ramp-job: step {i + 1}/{steps}: {rate} requests/s offered: {h2load} --h1 -t 1 -c {connections} --rps {H2LoadTool.PerConnection(rate, connections, 3)} -D {stepSeconds} --log-file step.log {url}");
                Console.Out.Flush();
                var clock = Stopwatch.StartNew();
                var c0 = proxyPid is { } before ? CpuTicks(before) : 0;
                int status;
                // A step is bounded by h2load's own -D and, should it hang, by H2LoadTool's grace.
                using (var run = H2LoadTool.Start(h2load, stepSeconds, [.. LoadArgs(rate), "--log-file", log, url], output))
                {
                    Console.Error.WriteLine($"##ChildProcessId:{run.Id}");
                    status = run.WaitForExit();
                }
                var elapsed = clock.Elapsed.TotalSeconds;
                string cpu = "nan", mem = "nan";
                if (proxyPid is { } after)
                {
                    cpu = ToolText.F((CpuTicks(after) - c0) / ticksPerSecond / elapsed * 100, 1);
                    mem = RssMegabytes(after);
                }
                H2LoadTool.Show(output, "  step| ", reportOnly: false);
                if (status != 0)
                {
                    Console.Error.WriteLine($"ramp-job: h2load exited with {status} at {rate} requests/s");
                    return status;
                }
                var step = ParseStep(H2LoadReport.Read(output), H2LoadLogRow.Read(log), H2LoadTool.I(rate), stepSeconds)
                    ?? throw JobFailure.NotReadable("could not parse the h2load report above");
                rows.Add([.. step.Fields, cpu, mem]);
                Console.WriteLine($"ramp-job: step {i + 1}: offered {rate}/s, sent {step.Sent}/s, achieved {step.Rps}/s, p50 {step.P50} ms, p99 {step.P99} ms, availability {step.Availability} %, proxy CPU {cpu} %, memory {mem} MB");
            }
            // One measurement per step and name, in step order ("All" keeps them as a list); "nan" is left out.
            Console.Write(Statistics.Block("ramp", Rows(rows), DateTime.UtcNow));
            return 0;
        }
        finally
        {
            work.Delete(recursive: true);
        }
    }

    /// <summary>The process listening on TCP <paramref name="port"/> here (ss -ltnp: the local crank profile and
    /// the runner's comparisons (`crank/run-local.sh ramp`) run everything on one machine); null without ss or a listener.</summary>
    private static int? ListeningPid(int port)
    {
        if (Tools.OnPath("ss") is not { } ss)
        {
            return null;
        }
        var output = Path.GetTempFileName();
        try
        {
            using (var run = ToolRun.Start(ss, ["-ltnpH", $"( sport = :{port} )"], output))
            {
                run.WaitForExit();
            }
            var m = PidField().Match(File.ReadAllText(output));
            return m.Success ? int.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture) : null;
        }
        finally
        {
            File.Delete(output);
        }
    }

    /// <summary>User + system time of every thread of <paramref name="pid"/>, in clock ticks (fields 14 and 15 of
    /// /proc/PID/stat); 0 when it is gone.</summary>
    public static double CpuTicks(int pid)
    {
        string stat;
        try
        {
            stat = File.ReadAllText($"/proc/{pid}/stat");
        }
        catch (IOException)
        {
            return 0;
        }
        return CpuTicksOf(stat);
    }

    /// <summary>Fields 14 and 15 (utime + stime) of a /proc/PID/stat text.</summary>
    public static double CpuTicksOf(string stat)
    {
        // The fields after the command's name, which may hold blanks and parentheses itself.
        var f = stat[(stat.LastIndexOf(") ", StringComparison.Ordinal) + 2)..].Split(' ');
        return Parse(f[11]) + Parse(f[12]);
    }

    /// <summary>The resident memory of <paramref name="pid"/> in MB, "%.1f"; "0" when it is gone, "nan" (left out) when
    /// its status has no VmRSS (a kernel thread).</summary>
    private static string RssMegabytes(int pid)
    {
        try
        {
            foreach (var line in File.ReadLines($"/proc/{pid}/status"))
            {
                var f = ToolText.Fields(line);
                if (f.Length > 1 && f[0] == "VmRSS:")
                {
                    return ToolText.F(ToolText.Number(f[1]) / 1024, 1);
                }
            }
            return "nan";
        }
        catch (IOException)
        {
            return "0";
        }
    }

    [GeneratedRegex("pid=([0-9]+)")]
    private static partial Regex PidField();

    [LibraryImport("libc", EntryPoint = "sysconf")]
    private static partial long SysConf(int name);
}
