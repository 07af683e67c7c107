using System.Globalization;
using System.Text;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;

namespace LLRP.Jobs;

/// <summary>What the h2load jobs (h2load, fixedrate, ramp) read of one h2load report. Lines used (h2load 1.52):
/// <code>
///   Application protocol: h2   (h2c over cleartext)
///   finished in 15.00s, 31234.50 req/s, 9.12MB/s
///   requests: 468518 total, 468618 started, 468518 done, 468518 succeeded, 0 failed, 0 errored, 0 timeout
///   status codes: 468518 2xx, 0 3xx, 0 4xx, 0 5xx
///   traffic: 136.82MB (143466502) total, 2.68MB (2811108) headers (space savings 95.22%), 4.47MB (4685180) data
///   time for request:      512us     41.20ms      6.31ms      2.03ms    71.52%
/// </code>
/// A line given twice counts by its last copy; a missing line leaves its figures null
/// (the request counts, the rate, the request times) or 0 (status codes, traffic).</summary>
internal sealed partial record H2LoadReport
{
    /// <summary>The application protocol h2load negotiated; "none" when the report names none.</summary>
    public string Protocol { get; private init; } = "none";

    /// <summary>h2load's own req/s (completed streams / duration); null without the "finished in" line.</summary>
    public double? Rps { get; private init; }

    /// <summary>The "requests:" line; null without it.</summary>
    public RequestCounts? Requests { get; private init; }

    /// <summary>2xx + 3xx answers.</summary>
    public double Ok { get; private init; }

    /// <summary>2xx answers alone (the ramp's achieved rate).</summary>
    public double Ok2xx { get; private init; }

    /// <summary>4xx + 5xx answers.</summary>
    public double Bad { get; private init; }

    /// <summary>Bytes received: frames, headers and data.</summary>
    public double Bytes { get; private init; }

    /// <summary>"time for request" max and mean in ms (-1 for a unit h2load does not print); null without the line.</summary>
    public (double Max, double Mean)? RequestTime { get; private init; }

    public static H2LoadReport Read(string path) => Parse(File.ReadLines(path));

    public static H2LoadReport Parse(IEnumerable<string> lines)
    {
        var report = new H2LoadReport();
        foreach (var line in lines)
        {
            var f = ToolText.Fields(line);
            string F(int i) => i <= f.Length ? f[i - 1] : "";
            if (F(1) == "Application" && F(2) == "protocol:")
            {
                report = report with { Protocol = F(3).Length == 0 ? "none" : F(3) };
            }
            else if (F(1) == "finished" && F(2) == "in")
            {
                report = report with { Rps = ToolText.Number(F(4)) };
            }
            else if (F(1) == "requests:")
            {
                report = report with { Requests = new(ToolText.Number(F(4)), ToolText.Number(F(6)), ToolText.Number(F(8)), ToolText.Number(F(10))) };
            }
            else if (F(1) == "status" && F(2) == "codes:")
            {
                report = report with
                {
                    Ok = ToolText.Number(F(3)) + ToolText.Number(F(5)),
                    Ok2xx = ToolText.Number(F(3)),
                    Bad = ToolText.Number(F(7)) + ToolText.Number(F(9)),
                };
            }
            else if (F(1) == "traffic:")
            {
                report = report with { Bytes = ToolText.Number(F(3).Replace("(", "", StringComparison.Ordinal).Replace(")", "", StringComparison.Ordinal)) };
            }
            else if (F(1) == "time" && F(2) == "for" && F(3) == "request:")
            {
                report = report with { RequestTime = (Milliseconds(F(5)), Milliseconds(F(6))) };
            }
        }
        return report;
    }

    /// <summary>One of h2load's times ("512us", "41.20ms", "1.5s") in ms; -1 for any other unit.</summary>
    public static double Milliseconds(string time)
    {
        var unit = TimeDigits().Replace(time, "");
        var n = ToolText.Number(TimeUnit().Replace(time, ""));
        return unit switch
        {
            "us" => n / 1000,
            "ms" => n,
            "s" => n * 1000,
            _ => -1,
        };
    }

    [GeneratedRegex("^[0-9.]+")]
    private static partial Regex TimeDigits();

    [GeneratedRegex("[a-z]+$")]
    private static partial Regex TimeUnit();
}

/// <summary>h2load's "requests:" line: started, done (answered or failed), succeeded and failed requests.</summary>
internal readonly record struct RequestCounts(double Started, double Done, double Succeeded, double Failed);

/// <summary>One row of h2load's per-request log (--log-file): the start (µs since the epoch), the status (-1: no
/// answer) and the µs until the answer was complete; one row per request that ended, in the order they ended.</summary>
internal readonly record struct H2LoadLogRow(double Start, double Status, double Micros, string Line)
{
    /// <summary>The rows of <paramref name="path"/>; a line without three tab-separated fields is no request.</summary>
    public static List<H2LoadLogRow> Read(string path)
    {
        var rows = new List<H2LoadLogRow>();
        foreach (var line in File.ReadLines(path))
        {
            var f = line.Split('\t');
            if (f.Length >= 3 && ToolText.IsNumber(f[1]))
            {
                rows.Add(new(ToolText.Number(f[0]), ToolText.Number(f[1]), ToolText.Number(f[2]), line));
            }
        }
        return rows;
    }

    /// <summary>The answered requests' times in µs, ascending.</summary>
    public static double[] AnsweredMicros(IEnumerable<H2LoadLogRow> rows) =>
        [.. rows.Where(r => r.Status > 0).Select(r => r.Micros).Order()];

    /// <summary>The 1-based nearest rank at <paramref name="position"/> (count × fraction): rounded up, the 0.999999 absorbing the product's rounding error; at least 1.</summary>
    public static int NearestRank(double position) => Math.Max(1, (int)(position + 0.999999));
}

/// <summary>Running h2load for the jobs: the tool, its version, a bounded run, the per-connection rate, the request
/// (headers, body) and the measured run.</summary>
internal static class H2LoadTool
{
    /// <summary>h2load is stopped this long after its -D should have ended (the bash jobs' timeout: a hung h2load
    /// fails the run instead of holding the job).</summary>
    public const int GraceSeconds = 30;

    /// <summary>After the stop (SIGTERM), seconds before SIGKILL (the bash jobs' timeout --kill-after=5).</summary>
    public const int KillAfterSeconds = 5;

    private const int SigKill = 9;

    /// <summary>$H2LOAD, else h2load on PATH.</summary>
    public static string Find() => Tools.Find("H2LOAD", "h2load", "nghttp2-client");

    /// <summary>The first line of "h2load --version".</summary>
    public static string Version(string h2load)
    {
        var output = Path.GetTempFileName();
        try
        {
            using (var run = ToolRun.Start(h2load, ["--version"], output))
            {
                run.WaitForExit();
            }
            return File.ReadLines(output).FirstOrDefault() ?? "";
        }
        finally
        {
            File.Delete(output);
        }
    }

    /// <summary>Starts h2load for <paramref name="seconds"/> (-D) with <paramref name="args"/>, its stdout to
    /// <paramref name="output"/>; stopped <see cref="GraceSeconds"/> after that should have ended.</summary>
    public static ToolRun Start(string h2load, int seconds, IEnumerable<string> args, string output)
    {
        var run = ToolRun.Start(h2load, ["-D", I(seconds), .. args], output, errorsToo: true);
        var limit = TimeSpan.FromSeconds(seconds + GraceSeconds);
        _ = Task.Run(async () =>
        {
            try
            {
                await Task.Delay(limit);
                run.Signal(Tools.SigTerm);
                await Task.Delay(TimeSpan.FromSeconds(KillAfterSeconds));
                run.Signal(SigKill);
            }
            catch (InvalidOperationException)
            {
                // The run ended and was disposed of before its limit: nothing to stop.
            }
        });
        return run;
    }

    /// <summary>h2load's --rps, per connection and a fraction: <paramref name="rate"/> / <paramref name="connections"/>.</summary>
    public static string PerConnection(int rate, int connections, int decimals) => ToolText.F((double)rate / connections, decimals);

    /// <summary><paramref name="args"/> (the run's shape) with each header and, for a <paramref name="bodySize"/> above 0,
    /// a POST body of that many bytes "x" (a file in <paramref name="dir"/>, h2load -d).</summary>
    public static List<string> WithRequest(List<string> args, IEnumerable<string> headers, int bodySize, string dir)
    {
        foreach (var h in headers)
        {
            args.AddRange(["-H", h]);
        }
        if (bodySize > 0)
        {
            var body = Path.Combine(dir, "body");
            File.WriteAllBytes(body, Enumerable.Repeat((byte)'x', bodySize).ToArray());
            args.AddRange(["-d", body, "-H", "Content-Type: application/octet-stream"]);
        }
        return args;
    }

    /// <summary>The measured run, logged: announced to crank as ##ChildProcessId between the hook's measure-start and
    /// measure-end, h2load's report and per-request log written in <paramref name="dir"/>, the report shown without
    /// progress lines; h2load's exit status (a failure logged).</summary>
    public static (int Status, string Output, string Log) Measured(string job, string h2load, int duration, IReadOnlyList<string> args, string url, string dir)
    {
        var (output, log) = (Path.Combine(dir, "h2load.out"), Path.Combine(dir, "h2load.log"));
        Console.WriteLine($"{job}: measured: {h2load} -D {duration}{ShellWord.Spaced(args)} --log-file h2load.log {url}");
        Console.Out.Flush();
        Tools.Hook("WRK_JOB_HOOK", "measure-start");
        int status;
        using (var run = Start(h2load, duration, [.. args, "--log-file", log, url], output))
        {
            Console.Error.WriteLine($"##ChildProcessId:{run.Id}");
            status = run.WaitForExit();
        }
        Tools.Hook("WRK_JOB_HOOK", "measure-end");
        Show(output, "  measured| ", reportOnly: true);
        if (status != 0)
        {
            Console.Error.WriteLine($"{job}: h2load exited with {status}");
        }
        return (status, output, log);
    }

    /// <summary>Shows <paramref name="output"/> line by line after <paramref name="prefix"/>; with
    /// <paramref name="reportOnly"/> without h2load's progress lines.</summary>
    public static void Show(string output, string prefix, bool reportOnly)
    {
        foreach (var line in File.ReadLines(output))
        {
            if (!reportOnly || !Progress.Any(p => line.StartsWith(p, StringComparison.Ordinal)))
            {
                Console.WriteLine(prefix + line);
            }
        }
    }

    private static readonly string[] Progress = ["progress:", "spawning thread", "Warm-up", "Main benchmark", "Stopped all", "starting benchmark"];

    public static string I(int value) => value.ToString(CultureInfo.InvariantCulture);
}
