using System.Text.Json.Nodes;
using System.Text.RegularExpressions;
using static LLRP.Jobs.JobArgs;
using static LLRP.Jobs.ToolText;

namespace LLRP.Jobs;

/// <summary>crank/wrk-job.sh, LLRP's stand-in for crank's own wrk job (which an offline agent cannot fetch), with an
/// unmeasured warm-up (<see cref="Warmup"/>): <see cref="Help"/> says what it runs and reports.</summary>
internal static partial class WrkJob
{
    public const string Help = """
        Load job for LLRP's crank scenarios, and the same job the offline runner (run-local.sh) uses.

        It stands in for crank's own wrk job (Microsoft.Crank.Jobs.Wrk), which the agent would git-clone
        and build from GitHub, impossible offline (docs/crank-offline.md). It drives Debian's wrk 4.1.0 the
        same way: one request timed on its own (http/firstrequest), an unmeasured warm-up run, then the
        measured run with --latency; it parses wrk's text report and prints crank's stdout statistics block
        (#StartJobStatistics / JSON / #EndJobStatistics) with the names and operations crank's wrk job
        registers: every figure under "wrk/..." and "http/..." at once (a name "a;b" is stored under both),
        Max as the aggregate, Sum as the reduction of counts and rates, Max for the latency percentiles.

        The measured wrk runs as a child; its PID is announced on stderr as "##ChildProcessId:<pid>" (crank's
        protocol) so that a crank agent measures wrk's CPU and memory, not this job's.

        usage: wrk-job.sh [-w WARMUP_S] [--warmup-max S] [-d DURATION_S] [-t THREADS] [-c CONNECTIONS] [--timeout S]
                          [--headers plaintext|browser|handshake|none] [-H 'Name: value']... [--max-errors N]
                          [--body-size BYTES] [--body-framing content-length|chunked] URL
               wrk-job.sh --parse REPORT   (the statistics block of a saved wrk report; tests/Jobs.Tests)
               wrk-job.sh --parse-tls FIRST SECOND   (the TLS block of two saved probes, see "TLS probe" below)

        Defaults: -t 1 -c 64 (a 2-core box runs load, proxy and origin at once), 20 s warm-up + 15 s
        measured (docs/methodology.md explains the warm-up; crank's own defaults are 15 s + 15 s).
        "--headers plaintext" (default) adds the two headers of crank's "plaintext" preset
        (Accept: text/plain,... and Connection: keep-alive) so every scenario sends the same request; "browser" a
        browser's eleven (crank/Jobs/HeaderPresets.cs). --body-size N > 0 makes every request a POST with an N-byte
        body, framed by Content-Length or chunked (crank/wrk-request.lua builds it once; wrk sends it as its static
        request).

        Adaptive warm-up: with --warmup-max S (> WARMUP_S) and WRK_JOB_WARM_PROBE set, the warm-up load runs at least
        WARMUP_S seconds and then until the probe says the server is warm, at most S seconds in all (one wrk run, stopped
        with SIGINT); then settle cycles of a 1 s pause and 3 s of load until a cycle is quiet (crank/Jobs/Warmup.cs). The
        job prints "wrk-job: warm-up: N s in all, warm|cap then warm|cap" and, if either reached its cap, statistics
        "warmup/capped" = 1; warmup/seconds counts both runs.

        Environment:
          WRK            wrk binary (default: wrk on PATH)
          WRK_JOB_WARM_PROBE  optional executable, run once a second after the minimum warm-up; exit 0 = warm
          WRK_JOB_HOOK   optional executable, called as "$WRK_JOB_HOOK measure-start" right before the
                         measured run and "$WRK_JOB_HOOK measure-end" right after it. run-local.sh uses it
                         to sample the processes over exactly the measured window. Unset under crank.

        TLS probe (https URLs): before any load, two connections with OpenSSL's client (openssl s_client, ALPN http/1.1),
        the second resuming the first's session, give a second statistics block, aggregated "First": "tls/protocol",
        "tls/cipher" and "tls/group" (the key exchange group), strings as OpenSSL names them, and "tls/resumed", 1 when the
        server resumed the session, else 0. wrk uses the same OpenSSL with its default offer, so it negotiates the same; and
        wrk keeps a connection's session when it reconnects (SSL_clear), so with the handshake preset a server that resumes
        sessions is measured on resumed handshakes and one that does not on full ones: tls/resumed says which. A failed
        probe prints a warning and no block; the load runs anyway.

        Exit code: wrk's own, 2 on bad usage, 3 when its report cannot be parsed (no statistics then), or 4
        when the measured run's bad responses (non-2xx/3xx) plus socket errors exceed --max-errors
        (statistics printed first). Without --max-errors any count passes.
        """;

    /// <summary>docs/methodology.md explains the warm-up (crank's own default is 15 s).</summary>
    private const int DefaultWarmupSeconds = 20;

    /// <summary>crank's own default.</summary>
    private const int DefaultDurationSeconds = 15;

    /// <summary>A 2-core box runs load, proxy and origin at once: one wrk thread.</summary>
    private const int DefaultThreads = 1;

    /// <summary>benchmarks.yml's connections for that box.</summary>
    private const int DefaultConnections = 64;

    /// <summary>curl's --max-time for the first request: bounds the wait on a server that accepts and never answers
    /// (the measured run then says what is wrong).</summary>
    private const int FirstRequestTimeoutSeconds = 30;

    /// <summary>Each TLS probe connection's bound (the bash's "timeout 10"): s_client with -ign_eof reads until the
    /// server closes, and a server that never closes must not hold up the load.</summary>
    private const int TlsProbeTimeoutSeconds = 10;

    private const string Job = "wrk-job";

    private static readonly string[] Percentiles = ["50", "75", "90", "95", "99"];

    public static int Run(string[] args)
    {
        int warmup = DefaultWarmupSeconds, duration = DefaultDurationSeconds, threads = DefaultThreads, connections = DefaultConnections;
        int bodySize = 0;
        int? maxErrors = null, warmupMax = null;
        string? timeout = null, parse = null, url = null;
        string[]? parseTls = null;
        var preset = "plaintext";
        var framing = "content-length";
        var headers = new List<string>();
        var a = new JobArgs(args);
        while (a.Next(out var arg))
        {
            switch (arg)
            {
                case "-w" or "--warmup": warmup = a.WholeNumber(arg); break;
                case "--warmup-max": warmupMax = a.WholeNumber(arg); break;
                case "-d" or "--duration": duration = a.WholeNumber(arg); break;
                case "-t" or "--threads": threads = a.WholeNumber(arg); break;
                case "-c" or "--connections": connections = a.WholeNumber(arg); break;
                case "--timeout": timeout = a.Value(arg); break;
                case "--headers": preset = a.Value(arg); break;
                case "-H" or "--header": headers.Add(a.Value(arg)); break;
                case "--max-errors": maxErrors = a.WholeNumber(arg); break;
                case "--body-size": bodySize = a.WholeNumber(arg); break;
                case "--body-framing": framing = a.Value(arg); break;
                case "--parse": parse = a.Value(arg); break;
                case "--parse-tls": parseTls = [a.Value(arg), a.Value(arg)]; break;
                case "-h" or "--help":
                    Console.WriteLine(Help);
                    return 0;
                default: url = Url(url, arg); break;
            }
        }
        if (parse is null && parseTls is null && url is null)
        {
            throw JobFailure.BadUsage("missing URL");
        }
        if (duration <= 0)
        {
            throw JobFailure.BadUsage("duration must be > 0");
        }
        if (framing is not ("content-length" or "chunked"))
        {
            throw JobFailure.BadUsage($"--body-framing must be content-length or chunked, not '{framing}'");
        }
        var presetHeaders = HeaderPresets.Of(preset) ?? throw JobFailure.BadUsage($"unknown header preset '{preset}' ({HeaderPresets.Names})");
        headers.InsertRange(0, presetHeaders);

        if (parseTls is not null)
        {
            foreach (var f in parseTls.Where(f => !File.Exists(f)))
            {
                throw JobFailure.BadUsage($"--parse-tls: no file {f}");
            }
            var tls = TlsFigures(File.ReadAllText(parseTls[0]), File.ReadAllText(parseTls[1]))
                ?? throw JobFailure.NotReadable($"no TLS protocol and cipher suite in {parseTls[0]}");
            Console.Write(Statistics.Block("wrk", tls, DateTime.UtcNow));
            return 0;
        }
        if (parse is not null)
        {
            if (!File.Exists(parse))
            {
                throw JobFailure.BadUsage($"--parse: no file {parse}");
            }
            var text = File.ReadAllText(parse);
            var rows = Figures(text, null, false, 0) ?? throw JobFailure.NotReadable($"could not parse the wrk report {parse}");
            Console.Write(Statistics.Block("wrk", rows, DateTime.UtcNow));
            CheckErrors(text, maxErrors);
            return 0;
        }

        var target = url!;
        var wrk = Tools.Find("WRK", "wrk", "wrk");
        List<string> wrkArgs = ["-t", I(threads), "-c", I(connections), "--latency"];
        if (timeout is not null)
        {
            wrkArgs.AddRange(["--timeout", $"{timeout.TrimEnd('s')}s"]);
        }
        foreach (var h in headers)
        {
            wrkArgs.AddRange(["-H", h]);
        }
        // wrk-request.lua builds the request (a POST body when asked) and adds the 95th percentile to the report; every
        // run gets it, so the warm-up sends the same request as the measured run. Its arguments follow the URL, after "--".
        wrkArgs.AddRange(["-s", Path.Combine(Tools.CrankDir, "wrk-request.lua")]);
        string[] scriptArgs = bodySize == 0 ? [] : ["--", I(bodySize), framing];
        ToolRun Load(int seconds, string? output) => ToolRun.Start(wrk, ["-d", $"{seconds}s", .. wrkArgs, target, .. scriptArgs], output);

        var firstMs = FirstRequestMs(target);
        if (target.StartsWith("https://", StringComparison.Ordinal))
        {
            ProbeTls(target);
        }

        var warm = new WarmResult(warmup, false);
        var warming = new Warmup(Job, (seconds, output) => Load(seconds, output), Console.Out);
        if (Warmup.AdaptiveProbe(warmup, warmupMax) is { } probe)
        {
            warm = warming.Adaptive(warmup, warmupMax!.Value, probe, Tools.SigInt);
        }
        else if (warmup > 0)
        {
            Console.WriteLine($"{Job}: warm-up: wrk -d {warmup}s{ShellWord.Spaced(wrkArgs)} {target}");
            warm = warming.Fixed(warmup);
        }

        var report = Path.GetTempFileName();
        try
        {
            Console.WriteLine($"{Job}: measured: wrk -d {duration}s{ShellWord.Spaced(wrkArgs)} {target}{(scriptArgs.Length > 0 ? " " + string.Join(' ', scriptArgs) : "")}");
            Tools.Hook("WRK_JOB_HOOK", "measure-start");
            int rc;
            using (var run = Load(duration, report))
            {
                Console.Error.WriteLine($"##ChildProcessId:{run.Id}");
                rc = run.WaitForExit();
            }
            Tools.Hook("WRK_JOB_HOOK", "measure-end");
            var text = File.ReadAllText(report);
            Console.Write(text);
            if (rc != 0)
            {
                throw new JobFailure(rc, $"wrk exited with {rc}");
            }
            var rows = Figures(text, firstMs, warm.Capped, warm.Seconds) ?? throw JobFailure.NotReadable("could not parse the wrk report above");
            Console.Write(Statistics.Block("wrk", rows, DateTime.UtcNow));
            CheckErrors(text, maxErrors);
        }
        finally
        {
            File.Delete(report);
        }
        return 0;
    }

    /// <summary>http/firstrequest: the time of one request on a new connection before any load, in whole ms; null when
    /// curl is missing or got no response at all (status 000: wrk will say why).</summary>
    private static double? FirstRequestMs(string url)
    {
        if (Tools.OnPath("curl") is not { } curl)
        {
            return null;
        }
        var output = Path.GetTempFileName();
        try
        {
            using (var run = ToolRun.Start(curl, ["-s", "-o", "/dev/null", "-w", "%{http_code} %{time_total}\n",
                "--max-time", I(FirstRequestTimeoutSeconds), url], output))
            {
                run.WaitForExit();
            }
            var f = Fields(File.ReadAllText(output));
            return f.Length == 0 || f[0] == "000" ? null : Math.Round(Number(f.Length > 1 ? f[1] : "") * 1000, MidpointRounding.ToEven);
        }
        finally
        {
            File.Delete(output);
        }
    }

    /// <summary>The TLS probe (see the help): two connections, the second resuming the first's session; each sends one
    /// request and reads to the end, so that the session tickets a TLS 1.3 server sends after the handshake arrive.</summary>
    private static void ProbeTls(string url)
    {
        if (Tools.OnPath("openssl") is not { } openssl)
        {
            Console.Error.WriteLine($"{Job}: warning: openssl not found: no TLS probe, no tls/* figures (apt-get install -y openssl)");
            return;
        }
        var dir = Directory.CreateTempSubdirectory("wrk-job-tls.");
        try
        {
            var (authority, path) = AuthorityAndPath(url);
            var request = $"GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n";
            var session = Path.Combine(dir.FullName, "session.pem");
            string Probe(string name, params string[] options)
            {
                var output = Path.Combine(dir.FullName, name);
                using var run = ToolRun.Start(openssl, ["s_client", "-connect", authority, "-alpn", "http/1.1", .. options],
                    output, errorsToo: true, input: request);
                if (!run.WaitForExit(TimeSpan.FromSeconds(TlsProbeTimeoutSeconds)))
                {
                    run.Signal(Tools.SigTerm);
                }
                run.WaitForExit();
                return File.ReadAllText(output);
            }
            var first = Probe("first", "-brief", "-ign_eof", "-sess_out", session);
            var second = Probe("second", "-ign_eof", "-sess_in", session);
            if (TlsFigures(first, second) is { } rows)
            {
                Console.Write(Statistics.Block("wrk", rows, DateTime.UtcNow));
                Console.WriteLine($"{Job}: TLS: {string.Join(", ", rows.Select(r => $"{r.Name["tls/".Length..]} {Text(r.Value)}"))}");
            }
            else
            {
                Console.Error.WriteLine($"{Job}: warning: the TLS probe of {authority} negotiated nothing (no tls/* figures):");
                foreach (var line in first.Split('\n').SkipLast(first.EndsWith('\n') ? 1 : 0))
                {
                    Console.Error.WriteLine($"  tls-probe| {line}");
                }
            }
        }
        finally
        {
            dir.Delete(recursive: true);
        }
    }

    private static string Text(JsonNode value) => value is JsonValue v && v.TryGetValue<string>(out var s) ? s : value.ToJsonString();

    /// <summary>An https URL's host:port (port 443 when none is given) and its path ("/" when none).</summary>
    internal static (string Authority, string Path) AuthorityAndPath(string url)
    {
        var rest = url["https://".Length..];
        var slash = rest.IndexOf('/');
        var authority = slash < 0 ? rest : rest[..slash];
        if (!PortSuffix().IsMatch(authority))
        {
            authority += ":443";
        }
        return (authority, slash < 0 ? "/" : rest[slash..]);
    }


    /// <summary>crank's statistics block rows for wrk 4.1.0's report (crank's wrk job names), with http/firstrequest
    /// (<paramref name="firstMs"/>, null: none), warmup/seconds and warmup/capped (only when capped). Latencies are
    /// converted to ms, throughput to MB/s. Lines used (the same ones crank's wrk wrapper reads):
    /// <code>
    ///     Latency   620.51us  229.13us   8.41ms   85.33%
    ///     50%  590.00us  (Latency Distribution, with --latency; 95% from wrk-request.lua)
    ///   123456 requests in 5.00s, 14.72MB read
    ///   Non-2xx or 3xx responses: 12          (only when > 0)
    ///   Socket errors: connect 0, read 1, write 0, timeout 0   (only when > 0)
    ///   Requests/sec:  24683.12
    ///   Transfer/sec:      2.94MB
    /// </code>
    /// Null when the report lacks the request count, the rate or the latency line.</summary>
    internal static List<Measurement>? Figures(string report, double? firstMs, bool capped, int warmSeconds)
    {
        double? latencyMean = null, latencyMax = null, requests = null, rps = null;
        double bad = 0, socketErrors = 0, throughput = 0;
        var percentiles = new Dictionary<string, double>();
        foreach (var line in report.Split('\n'))
        {
            var f = Fields(line);
            if (f.Length == 0)
            {
                continue;
            }
            string Field(int i) => i < f.Length ? f[i] : "";
            if (f[0] == "Latency" && f.Length >= 4 && latencyMean is null)
            {
                (latencyMean, latencyMax) = (Ms(f[1]), Ms(f[3]));
            }
            if (f[0].EndsWith('%') && Percentiles.Contains(f[0][..^1]))
            {
                percentiles[f[0][..^1]] = Ms(Field(1));
            }
            if (Field(1) == "requests" && Field(2) == "in")
            {
                requests = Number(f[0]);
            }
            if (line.Contains("Non-2xx or 3xx responses:", StringComparison.Ordinal))
            {
                bad = Number(f[^1]);
            }
            if (line.Contains("Socket errors:", StringComparison.Ordinal))
            {
                socketErrors = SocketErrors(line);
            }
            if (f[0] == "Requests/sec:")
            {
                rps = Number(Field(1));
            }
            if (f[0] == "Transfer/sec:")
            {
                throughput = Mb(Field(1));
            }
        }
        if (requests is null || rps is null || latencyMean is null)
        {
            return null;
        }
        List<Measurement> rows =
        [
            Row("wrk/rps/mean;http/rps/mean", "Max", "Sum", "Requests/sec", "Requests per second", "n0", rps.Value),
            Row("wrk/requests;http/requests", "Max", "Sum", "Requests", "Total number of requests", "n0", requests.Value),
            Row("wrk/latency/mean;http/latency/mean", "Max", "Avg", "Mean latency (ms)", "Mean latency (ms)", "n2", latencyMean.Value),
            Row("wrk/latency/max;http/latency/max", "Max", "Max", "Max latency (ms)", "Max latency (ms)", "n2", latencyMax!.Value),
            Row("wrk/errors/badresponses;http/requests/badresponses", "Max", "Sum", "Bad responses", "Non-2xx or 3xx responses", "n0", bad),
            Row("wrk/errors/socketerrors;http/requests/errors", "Max", "Sum", "Socket errors", "Socket errors", "n0", socketErrors),
            Row("wrk/throughput;http/throughput", "Max", "Sum", "Read throughput (MB/s)", "Read throughput (MB/s)", "n2", throughput),
        ];
        foreach (var p in Percentiles.Where(percentiles.ContainsKey))
        {
            rows.Add(Row($"wrk/latency/{p};http/latency/{p}", "Max", "Max", $"Latency {p}th (ms)", $"Latency {p}th (ms)", "n2", percentiles[p]));
        }
        if (firstMs is { } first)
        {
            rows.Add(Row("http/firstrequest", "Max", "Max", "First Request (ms)", "Time to first request in ms", "n0", first));
        }
        rows.Add(Row("warmup/seconds", "Max", "Max", "Warm-up (s)", "Seconds of load before the measured run", "n0", warmSeconds));
        if (capped)
        {
            rows.Add(Row("warmup/capped", "Max", "Max", "Warm-up capped",
                "1: the adaptive warm-up reached --warmup-max before the server was warm", "n0", 1));
        }
        return rows;
    }


    /// <summary>wrk's time ("620.51us", "8.41ms", "1.02s", "2.00m", "1.00h") in ms; -1 for another unit.</summary>
    internal static double Ms(string text)
    {
        var (n, unit) = NumberAndUnit(text);
        return unit switch
        {
            "us" => n / 1000,
            "ms" => n,
            "s" => n * 1000,
            "m" => n * 60000,
            "h" => n * 3600000,
            _ => -1,
        };
    }

    /// <summary>wrk's byte count ("512.00B", "2.94MB"; 1024-based) in MB; -1 for another unit.</summary>
    internal static double Mb(string text)
    {
        var (n, unit) = NumberAndUnit(text);
        return unit switch
        {
            "B" => n / 1048576,
            "KB" => n / 1024,
            "MB" => n,
            "GB" => n * 1024,
            "TB" => n * 1048576,
            _ => -1,
        };
    }

    private static (double Number, string Unit) NumberAndUnit(string text)
    {
        var digits = LeadingDigits().Match(text).Length;
        return (Number(text), text[digits..]);
    }

    /// <summary>The four counts of wrk's "Socket errors: connect 0, read 1, write 0, timeout 0" line, summed.</summary>
    private static double SocketErrors(string line)
    {
        var f = Fields(line.Replace(",", "", StringComparison.Ordinal));
        return new[] { 3, 5, 7, 9 }.Sum(i => i < f.Length ? Number(f[i]) : 0);
    }

    /// <summary>Bad responses plus socket errors in a wrk report.</summary>
    internal static double ErrorsOf(string report) =>
        report.Split('\n').Sum(line =>
            (line.Contains("Non-2xx or 3xx responses:", StringComparison.Ordinal) ? Number(Fields(line)[^1]) : 0)
            + (line.Contains("Socket errors:", StringComparison.Ordinal) ? SocketErrors(line) : 0));

    /// <summary>A run whose measured window has errors did not measure the proxy: fail the job (exit 4), so that
    /// crank's return code (and run-local.sh's exit status) says so. crank keeps the statistics printed before.</summary>
    private static void CheckErrors(string report, int? maxErrors)
    {
        var errors = ErrorsOf(report);
        if (maxErrors is { } max && errors > max)
        {
            throw new JobFailure(JobFailure.TooManyErrors,
                $"{I(errors)} bad responses + socket errors in the measured run, more than --max-errors {max}: failing the job");
        }
    }

    /// <summary>The TLS block's rows from two probes' output (openssl s_client: <paramref name="first"/> with -brief,
    /// <paramref name="second"/> without, resuming the first's session). Lines used (OpenSSL 3.0; 3.2 and later name
    /// the group on the last line instead):
    /// <code>
    ///   Protocol version: TLSv1.3
    ///   Ciphersuite: TLS_AES_256_GCM_SHA384
    ///   Server Temp Key: X25519, 253 bits          (or "Peer Temp Key: ECDH, prime256v1, 256 bits")
    ///   Negotiated TLS1.3 group: X25519
    ///   Reused, TLSv1.3, Cipher is TLS_AES_256_GCM_SHA384     (second; "New, ..." when not resumed)
    /// </code>
    /// Null when the first names no protocol or cipher suite.</summary>
    internal static List<Measurement>? TlsFigures(string first, string second)
    {
        var lines = first.Split('\n');
        string? Value(string key) =>
            lines.Select(l => l.Split(": ")).FirstOrDefault(f => f.Length > 1 && f[0] == key)?[1];
        var protocol = Value("Protocol version");
        var cipher = Value("Ciphersuite");
        if (string.IsNullOrEmpty(protocol) || string.IsNullOrEmpty(cipher))
        {
            return null;
        }
        var group = "";
        foreach (var f in lines.Select(l => l.Split(": ")).Where(f => f.Length > 1))
        {
            if (f[0] == "Negotiated TLS1.3 group")
            {
                group = f[1];
                break;
            }
            if (f[0] is "Server Temp Key" or "Peer Temp Key")
            {
                // "ECDH, prime256v1, 256 bits" names the curve second; "X25519, 253 bits" first.
                var key = f[1].Split(", ");
                group = key[0] is "ECDH" or "DH" && key.Length > 2 ? key[1] : key[0];
                break;
            }
        }
        var resumed = second.Split('\n').Any(l => l.StartsWith("Reused, ", StringComparison.Ordinal)) ? 1 : 0;
        static Measurement Tls(string name, string shortDescription, string longDescription, JsonNode value, string format) =>
            new(name, "First", "First", shortDescription, longDescription, format, value);
        return
        [
            Tls("tls/protocol", "TLS protocol", "The TLS version the target negotiated with OpenSSL's client", JsonValue.Create(protocol), ""),
            Tls("tls/cipher", "TLS cipher suite", "The cipher suite the target negotiated", JsonValue.Create(cipher), ""),
            Tls("tls/group", "TLS key exchange group", "The key exchange group of the handshake (empty: not printed)", JsonValue.Create(group), ""),
            Tls("tls/resumed", "TLS session resumed", "1: a second connection resumed the first one's session", JsonValue.Create(resumed), "n0"),
        ];
    }

    [GeneratedRegex(@":[0-9]+$")]
    private static partial Regex PortSuffix();


    [GeneratedRegex(@"^[0-9.]+")]
    private static partial Regex LeadingDigits();
}
