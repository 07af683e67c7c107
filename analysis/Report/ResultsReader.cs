using System.Globalization;
using System.Text.Json;
using System.Text.RegularExpressions;

namespace LLRP.Analysis;

/// <summary>One run of a study by level (crank/run-local.sh fixed-rate, stepped): one scenario at one level (a share
/// of the maximum, an offered rate) in one round.</summary>
internal sealed record LevelRun(string Scenario, int Level, string Round, bool Failed, IReadOnlyDictionary<string, double> Figures);

/// <summary>
/// Finds and reads every result file under a directory: crank's own <c>--json</c> output and crank/run-local.sh's
/// files of the same shape (<c>&lt;scenario&gt;.r&lt;round&gt;.json</c>), plus run-local's <c>run.json</c> and
/// sweep.sh's <c>sweep.json</c> for the machine and the commands. A committed sitting keeps all of them folded into
/// one <c>sitting.json</c> (analysis/aggregate.sh; earlier sittings: <c>&lt;scenario&gt;.runs.json</c> arrays); folded
/// files are read when the directory holds no per-run file.
/// </summary>
internal static partial class ResultsReader
{
    // Downstream's body size when the path has no ?s=N (src/Downstream/DownstreamHandler.cs DefaultSize).
    public const long DownstreamDefaultBytes = 10;

    private static readonly string[] RpsNames = ["wrk/rps/mean", "http/rps/mean", "bombardier/rps/mean"];

    public static (List<Run> Runs, List<RunMeta> Metas, List<string> Ignored) ReadAll(string directory, string? skipDirectory)
    {
        if (!Directory.Exists(directory))
        {
            throw new ReportException($"{directory}: no such directory");
        }
        var runs = new List<Run>();
        var metas = new List<RunMeta>();
        var ignored = new List<string>();
        var metaByDir = new Dictionary<string, JsonElement?>(StringComparer.Ordinal);
        // run-local.sh keeps each run's logs, and the earlier attempts of a run it ran again because it was unsteady
        // (logs/<scenario>.r<round>.a<attempt>.json), under logs/; the run it kept is beside logs/ and carries every
        // attempt's verdict (steadyHistory), so nothing under a logs/ folder is a result.
        var files = Directory.EnumerateFiles(directory, "*.json", SearchOption.AllDirectories)
            .Where(f => skipDirectory is null || !Path.GetFullPath(f).StartsWith(skipDirectory + Path.DirectorySeparatorChar, StringComparison.Ordinal))
            .Where(f => !IsUnderLogs(directory, f))
            .Order(StringComparer.Ordinal)
            .ToList();
        var folded = files.Where(f => f.EndsWith(".runs.json", StringComparison.Ordinal) || Path.GetFileName(f) == FoldedFile).ToList();
        var perRun = files.Any(f => RoundFile().IsMatch(Path.GetFileName(f)));
        files = perRun ? files.Except(folded).ToList() : files;

        foreach (var file in files)
        {
            using var doc = Parse(file);
            var root = doc.RootElement;
            var name = Path.GetFileName(file);
            if (root.ValueKind == JsonValueKind.Object && root.Prop("jobResults") is not null)
            {
                runs.Add(ReadRun(file, root, RunJsonOf(file, metaByDir)));
            }
            else if (root.ValueKind == JsonValueKind.Array && name.EndsWith(".runs.json", StringComparison.Ordinal))
            {
                var i = 0;
                foreach (var run in root.EnumerateArray())
                {
                    i++;
                    if (run.ValueKind != JsonValueKind.Object || run.Prop("jobResults") is null)
                    {
                        throw new ReportException($"{file}: element {i} has no \"jobResults\" object (analysis/aggregate.sh writes crank --json runs)");
                    }
                    runs.Add(ReadRun($"{file}#{i}", run, null));
                }
            }
            else if (name == FoldedFile && root.ValueKind == JsonValueKind.Object && root.Prop("runs") is { ValueKind: JsonValueKind.Array } folds)
            {
                ReadFolded(file, folds, root.Prop("metas"), runs, metas);
            }
            else if (name is "run.json" or "sweep.json")
            {
                if (root.ValueKind != JsonValueKind.Object)
                {
                    throw new ReportException($"{file}: expected a JSON object (run-local.sh run.json / sweep.sh sweep.json)");
                }
                metas.Add(ReadMeta(file, root));
            }
            else if (RoundFile().IsMatch(name))
            {
                throw new ReportException($"{file}: named like a run result (<scenario>.r<round>.json) but has no \"jobResults\" object (crank --json shape, docs/crank-offline.md)");
            }
            else
            {
                ignored.Add(file);
            }
        }
        return (runs, metas, ignored);
    }

    /// <summary>analysis/aggregate.sh's one file per sitting.</summary>
    public const string FoldedFile = "sitting.json";

    /// <summary>
    /// A sitting.json: each run and each run.json / sweep.json is read as the file it was folded from (its "file",
    /// relative to the folder), so rounds come from their r&lt;N&gt; folders as before folding.
    /// </summary>
    private static void ReadFolded(string file, JsonElement runList, JsonElement? metaList, List<Run> runs, List<RunMeta> metas)
    {
        var dir = Path.GetDirectoryName(file)!;
        var i = 0;
        foreach (var run in runList.EnumerateArray())
        {
            i++;
            if (run.ValueKind != JsonValueKind.Object || run.Prop("jobResults") is null)
            {
                throw new ReportException($"{file}: runs[{i}] has no \"jobResults\" object (analysis/aggregate.sh folds crank --json runs)");
            }
            var from = ((JsonElement?)run).Prop("file").Text() ?? $"run{i}.json";
            runs.Add(ReadRun(Path.Combine(dir, from), run, null));
        }
        if (metaList is not { ValueKind: JsonValueKind.Array } list)
        {
            return;
        }
        var m = 0;
        foreach (var meta in list.EnumerateArray())
        {
            m++;
            var from = ((JsonElement?)meta).Prop("file").Text();
            if (from is null || ((JsonElement?)meta).Prop("content") is not { ValueKind: JsonValueKind.Object } content)
            {
                throw new ReportException($"{file}: metas[{m}] needs \"file\" and an object \"content\" (a folded run.json or sweep.json)");
            }
            metas.Add(ReadMeta(Path.Combine(dir, from), content));
        }
    }

    /// <summary>
    /// The crank --json runs of a study that keeps one folder per level (crank/run-local.sh stepped's <c>s&lt;rate&gt;</c>,
    /// crank/run-local.sh fixed-rate's <c>p&lt;percent&gt;</c>): the folders' <c>&lt;scenario&gt;.r&lt;round&gt;.json</c> files or,
    /// once analysis/aggregate.sh has folded them, <c>sitting.json</c>'s runs from those folders. Each comes with its
    /// level (the number in its folder's name) and its file name, ordered by level, then name.
    /// </summary>
    internal static List<(int Level, string FileName, JsonElement Run)> ReadLevels(string dir, char prefix)
    {
        var found = new List<(int Level, string FileName, JsonElement Run)>();
        foreach (var folder in Directory.EnumerateDirectories(dir, prefix + "*"))
        {
            if (!int.TryParse(Path.GetFileName(folder)[1..], NumberStyles.None, CultureInfo.InvariantCulture, out var level))
            {
                continue;
            }
            foreach (var file in Directory.EnumerateFiles(folder, "*.r*.json"))
            {
                using var doc = Parse(file);
                found.Add((level, Path.GetFileName(file), doc.RootElement.Clone()));
            }
        }
        var folded = Path.Combine(dir, FoldedFile);
        if (found.Count == 0 && File.Exists(folded))
        {
            using var doc = Parse(folded);
            if (((JsonElement?)doc.RootElement).Prop("runs") is { ValueKind: JsonValueKind.Array } runs)
            {
                foreach (var run in runs.EnumerateArray())
                {
                    var parts = (((JsonElement?)run).Prop("file").Text() ?? "").Split('/');
                    if (parts.Length == 2 && parts[0].Length > 1 && parts[0][0] == prefix
                        && int.TryParse(parts[0][1..], NumberStyles.None, CultureInfo.InvariantCulture, out var level))
                    {
                        found.Add((level, parts[1], run.Clone()));
                    }
                }
            }
        }
        return found.OrderBy(f => f.Level).ThenBy(f => f.FileName, StringComparer.Ordinal).ToList();
    }

    /// <summary>The runs of a study by level (<see cref="ReadLevels"/>) whose load job reported <paramref name="marker"/>:
    /// the load job's numbers under their names, each of <paramref name="applicationFigures"/> from the proxy's job
    /// under "application:NAME".</summary>
    internal static List<LevelRun> ReadLevelRuns(string dir, char prefix, string marker, params string[] applicationFigures)
    {
        var runs = new List<LevelRun>();
        foreach (var (level, fileName, run) in ReadLevels(dir, prefix))
        {
            JsonElement? root = run;
            var jobs = root.Prop("jobResults").Prop("jobs");
            if (jobs.Prop("load").Prop("results") is not { ValueKind: JsonValueKind.Object } load || !load.TryGetProperty(marker, out _))
            {
                continue;
            }
            var figures = load.EnumerateObject().Where(p => p.Value.ValueKind == JsonValueKind.Number)
                .ToDictionary(p => p.Name, p => p.Value.GetDouble(), StringComparer.Ordinal);
            var app = jobs.Prop("application").Prop("results");
            foreach (var name in applicationFigures)
            {
                if (app.FirstNumber(name) is { } v)
                {
                    figures[Application + name] = v;
                }
            }
            var properties = root.Prop("jobResults").Prop("properties");
            var scenario = properties.Prop("scenario").Text() ?? fileName[..fileName.IndexOf(".r", StringComparison.Ordinal)];
            var failed = (root.Prop("returnCode").Number() ?? 0) != 0;
            runs.Add(new LevelRun(scenario, level, properties.Prop("round").Text() ?? "1", failed, figures));
        }
        return runs;
    }

    /// <summary>The prefix of a proxy's figure in <see cref="LevelRun.Figures"/> (the load job's names keep theirs).</summary>
    internal const string Application = "application:";

    /// <summary>A study's plan file (DIR/NAME written by crank/run-local.sh), or null when there is none.</summary>
    internal static JsonElement? ReadPlan(string dir, string name)
    {
        var file = Path.Combine(dir, name);
        if (!File.Exists(file))
        {
            return null;
        }
        using var doc = JsonDocument.Parse(File.ReadAllText(file));
        return doc.RootElement.ValueKind == JsonValueKind.Object
            ? doc.RootElement.Clone()
            : throw new ReportException($"{file}: expected a JSON object (crank/run-local.sh's plan of the study)");
    }

    internal static bool IsUnderLogs(string directory, string file) =>
        Path.GetRelativePath(directory, Path.GetDirectoryName(file)!)
            .Split(Path.DirectorySeparatorChar)
            .Contains(LogsFolder, StringComparer.Ordinal);

    // crank/run-local.sh's per-run log folder inside its --json-dir.
    private const string LogsFolder = "logs";

    private static JsonDocument Parse(string file)
    {
        try
        {
            return JsonDocument.Parse(File.ReadAllBytes(file), new JsonDocumentOptions { AllowTrailingCommas = true, CommentHandling = JsonCommentHandling.Skip });
        }
        catch (JsonException e)
        {
            throw new ReportException($"{file}: not valid JSON: {e.Message}");
        }
    }

    /// <summary>run-local.sh's run.json beside a result file: the fallback for what an older or crank-written file lacks.</summary>
    private static JsonElement? RunJsonOf(string file, Dictionary<string, JsonElement?> cache)
    {
        var dir = Path.GetDirectoryName(file)!;
        if (!cache.TryGetValue(dir, out var meta))
        {
            var path = Path.Combine(dir, "run.json");
            if (File.Exists(path))
            {
                using var doc = Parse(path);
                meta = doc.RootElement.Clone();
            }
            cache[dir] = meta;
        }
        return meta;
    }

    private static Run ReadRun(string file, JsonElement root, JsonElement? runJson)
    {
        var jobs = root.Prop("jobResults").Prop("jobs");
        if (jobs is not { ValueKind: JsonValueKind.Object } jobsObject)
        {
            throw new ReportException($"{file}: jobResults.jobs is missing or not an object");
        }
        var properties = root.Prop("jobResults").Prop("properties");
        var returnCode = root.Prop("returnCode").Number() ?? 0;
        var failed = returnCode != 0;

        // The load job is "load" in benchmarks.yml; a crank file from another configuration may name it otherwise,
        // so any job whose results hold a requests-per-second figure will do.
        JsonElement? load = jobsObject.Prop("load");
        string loadName = "load";
        if (load is null)
        {
            foreach (var job in jobsObject.EnumerateObject())
            {
                if (((JsonElement?)job.Value).Prop("results").FirstNumber(RpsNames) is not null)
                {
                    load = job.Value;
                    loadName = job.Name;
                    break;
                }
            }
        }
        if (load is null)
        {
            throw new ReportException($"{file}: jobResults.jobs has no \"load\" job (nor any job with {string.Join(" / ", RpsNames)})");
        }
        var loadResults = load.Prop("results");
        if (loadResults is not { ValueKind: JsonValueKind.Object })
        {
            if (!failed)
            {
                throw new ReportException($"{file}: jobResults.jobs.{loadName}.results is missing or not an object");
            }
            loadResults = null;
        }
        var loadFigures = ReadLoad(loadResults);
        if (loadFigures.Rps is null && !failed)
        {
            throw new ReportException($"{file}: jobResults.jobs.{loadName}.results has no requests-per-second figure ({string.Join(" / ", RpsNames)}) although returnCode is 0");
        }

        var scenario = properties.Prop("scenario").Text();
        var stemMatch = RoundFile().Match(Path.GetFileName(file));
        if (string.IsNullOrEmpty(scenario))
        {
            scenario = stemMatch.Success ? stemMatch.Groups["scenario"].Value : Path.GetFileNameWithoutExtension(file);
        }
        // sweep.sh runs one round per run-local.sh invocation, in <point>/r<round>/: the folder has the sweep's round.
        var folder = RoundFolder().Match(Path.GetFileName(Path.GetDirectoryName(file)) ?? "");
        var round = folder.Success ? folder.Groups["round"].Value : properties.Prop("round").Text();
        if (string.IsNullOrEmpty(round))
        {
            round = stemMatch.Success ? stemMatch.Groups["round"].Value : "1";
        }

        var variables = load.Prop("variables");
        var connectionsValue = variables.Prop("connections").Number() ?? runJson.Prop("connections").Number();
        var path = variables.Prop("path").Text() ?? runJson.Prop("path").Text() ?? "/";
        var profile = properties.Prop("profile").Text() ?? runJson.Prop("profile").Text() ?? "";
        var appEnv = properties.Prop("applicationEnvironment").Text() ?? runJson.Prop("applicationEnvironment").Text() ?? "";
        // "threads" is the proxies' count only beside "loadThreads": before that, "threads" was wrk's.
        var matrix = variables.Prop("loadThreads") is not null ? variables : runJson.Prop("loadThreads") is not null ? runJson : null;
        var proxyThreads = matrix.Prop("threads").Number();
        var loadKind = matrix.Prop("load").Text();
        var messageSize = variables.Prop("messageSize").Number() ?? runJson.Prop("messageSize").Number();
        var request = Point.DescribeRequest(proxyThreads is { } t ? (int)t : null, (long?)matrix.Prop("requestBodySize").Number(),
            matrix.Prop("requestBodyFraming").Text(), matrix.Prop("presetHeaders").Text(), loadKind,
            variables.Prop("rate").Number() ?? runJson.Prop("rate").Number(), messageSize);
        // The schemes since --server-scheme / --downstream-scheme (every run of one run-local.sh call has the same);
        // a file from before them ran cleartext.
        var serverScheme = SchemeOf(file, "serverScheme", variables.Prop("serverScheme").Text() ?? runJson.Prop("serverScheme").Text());
        var downstreamScheme = SchemeOf(file, "downstreamScheme", variables.Prop("downstreamScheme").Text() ?? runJson.Prop("downstreamScheme").Text());
        // The WebSocket load's answer is the echo of its message: its size is the message's, whatever the path.
        var responseBytes = loadKind == "websocket" ? (long?)messageSize : ResponseBytesOf(path);
        var point = new Point(connectionsValue is { } c ? (int)c : null, path, responseBytes, profile.Trim(), appEnv.Trim(), request,
            serverScheme, downstreamScheme, NewConnectionPerRequest: matrix.Prop("presetHeaders").Text() == "handshake");

        var application = jobsObject.Prop("application");
        var downstream = jobsObject.Prop("downstream");
        var processors = (int?)(application.Prop("environment").Prop("proc").Number()
            ?? downstream.Prop("environment").Prop("proc").Number()
            ?? runJson.Prop("nproc").Number());
        return new Run
        {
            File = file,
            Scenario = scenario,
            Round = round,
            Point = point,
            Failed = failed,
            Load = loadFigures,
            Proxy = application is null ? null : ReadProcess(application.Prop("results"), loadFigures.Rps, processors, perRoundTrip: loadKind == "websocket"),
            Downstream = downstream is null ? null : ReadProcess(downstream.Prop("results"), loadFigures.Rps, processors, perRoundTrip: loadKind == "websocket"),
            Commit = properties.Prop("commit").Text() ?? runJson.Prop("commit").Text(),
            Attempts = int.TryParse(properties.Prop("steadyAttempts").Text(), NumberStyles.None, CultureInfo.InvariantCulture, out var attempts) && attempts > 0 ? attempts : 1,
            AttemptHistory = properties.Prop("steadyHistory").Text(),
            WarmupSeconds = loadResults.FirstNumber("warmup/seconds"),
            WarmupCapped = loadResults.FirstNumber("warmup/capped") is > 0,
            Tls = ReadTls(loadResults),
            Mode = properties.Prop("mode").Text() ?? runJson.Prop("mode").Text() ?? (properties.Prop("runner") is null ? "crank" : null),
            Processors = processors,
        };
    }

    private static LoadFigures ReadLoad(JsonElement? r) => new(
        Rps: r.FirstNumber(RpsNames),
        Requests: r.FirstNumber("wrk/requests", "http/requests", "bombardier/requests"),
        MeanMs: r.FirstNumber("wrk/latency/mean", "http/latency/mean"),
        P50Ms: r.FirstNumber("wrk/latency/50", "http/latency/50"),
        P75Ms: r.FirstNumber("wrk/latency/75", "http/latency/75"),
        P90Ms: r.FirstNumber("wrk/latency/90", "http/latency/90"),
        P99Ms: r.FirstNumber("wrk/latency/99", "http/latency/99"),
        MaxMs: r.FirstNumber("wrk/latency/max", "http/latency/max"),
        BadResponses: r.FirstNumber("wrk/errors/badresponses", "http/requests/badresponses", "bombardier/badresponses"),
        SocketErrors: r.FirstNumber("wrk/errors/socketerrors", "http/requests/errors"));

    private static string SchemeOf(string file, string name, string? value) => value switch
    {
        null or "" or Point.Http => Point.Http,
        Point.Https => Point.Https,
        _ => throw new ReportException($"{file}: variable \"{name}\" is '{value}'; expected http or https"),
    };

    /// <summary>crank/wrk-job.sh's TLS probe; null when the run has none (cleartext, or a file from before it).</summary>
    private static TlsFigures? ReadTls(JsonElement? r)
    {
        var protocol = r.Prop("tls/protocol").Text();
        var cipher = r.Prop("tls/cipher").Text();
        if (string.IsNullOrEmpty(protocol) && string.IsNullOrEmpty(cipher))
        {
            return null;
        }
        var group = r.Prop("tls/group").Text();
        return new TlsFigures(protocol, cipher, string.IsNullOrEmpty(group) ? null : group,
            r.Prop("tls/resumed").Number() is { } resumed ? resumed > 0 : null);
    }

    /// <summary>Percent; the steadiness tolerance when a file does not state one (crank/run-local.sh's default).</summary>
    public const double DefaultSteadyTolerance = 15;

    /// <summary>
    /// Percent of the window's CPU time the JIT may spend compiling in a steady run, when a file does not state it
    /// (run-local.sh's default).
    /// </summary>
    public const double DefaultSteadyJitShare = 5;

    private static ProcessFigures ReadProcess(JsonElement? r, double? rps, int? processors, bool perRoundTrip)
    {
        // Window averages where run-local.sh recorded them; crank's benchmarks/cpu is the highest 1 s sample.
        var cpu = r.FirstNumber("proc/cpu/average", "benchmarks/cpu");
        var cores = r.FirstNumber("proc/cpu/raw/average", "benchmarks/cpu/raw");
        // run-local.sh: the process's CPU time over the measured window / wrk's requests; under crank: LLRP's own
        // figure over its statsWindow.
        var perRequest = r.FirstNumber("proc/cpu/per-request", "llrp/cpu-per-request");
        var estimated = false;
        if (perRequest is null && rps is > 0)
        {
            // crank's agent has no CPU-time delta; its benchmarks/cpu is the maximum of 1 s samples (100 % = all cores),
            // so this estimate is an upper bound of the average.
            var busyCores = cores is { } raw ? raw / 100 : cpu is { } all && processors is { } n ? all / 100 * n : (double?)null;
            if (busyCores is { } b)
            {
                perRequest = b * 1e6 / rps.Value;
                estimated = true;
            }
        }
        return new ProcessFigures(
            CpuPercent: cpu,
            CoresPercent: cores,
            CpuUsPerRequest: perRequest,
            CpuPerRequestEstimated: estimated,
            AllocatedPerRequest: AllocatedPerRequest(r, rps, perRoundTrip),
            WorkingSetMb: r.FirstNumber("benchmarks/working-set"),
            PeakWorkingSetMb: r.FirstNumber("proc/working-set/peak"),
            Threads: r.FirstNumber("proc/threads"),
            Steady: ReadSteady(r),
            JitMethodsInWindow: r.FirstNumber("jit/methods-in-window"));
    }

    /// <summary>
    /// LLRP's own figure: what it allocated over its window / the requests it served in that window. Under the
    /// WebSocket load a request of the load is a round trip through a tunnel the proxy served once (its handshake), so
    /// the figure is brought to the load's unit: the window's bytes (figure x llrp/requests) / the round trips in the
    /// same window (RPS x llrp/window). Null when a figure it needs is missing.
    /// </summary>
    private static double? AllocatedPerRequest(JsonElement? r, double? rps, bool perRoundTrip)
    {
        var perRequest = r.FirstNumber("llrp/allocated-per-request");
        if (!perRoundTrip || perRequest is null)
        {
            return perRequest;
        }
        return r.FirstNumber("llrp/requests") is { } served && r.FirstNumber("llrp/window") is > 0 and var window && rps is > 0
            ? perRequest * served / (rps.Value * window)
            : null;
    }

    private static Steadiness? ReadSteady(JsonElement? r)
    {
        var tolerance = r.FirstNumber("steady/tolerance") ?? DefaultSteadyTolerance;
        var jit = r.FirstNumber("jit/methods-in-window");
        var jitLimit = r.FirstNumber("steady/jit-limit") ?? DefaultSteadyJitShare;
        if (r.FirstNumber("steady/first-half") is { } a && r.FirstNumber("steady/second-half") is { } b && a > 0 && b > 0)
        {
            return new Steadiness(a, b, tolerance, jit, r.FirstNumber("steady/jit-share"), jitLimit);
        }
        // Under crank, LLRP's own halves (its statsWindow split in two) and its own JIT share (its window without the
        // first and last interval; a report from an older build: JIT time over the whole window's CPU time).
        if (r.FirstNumber("llrp/cpu-per-request/first-half") is { } c && r.FirstNumber("llrp/cpu-per-request/second-half") is { } d && c > 0 && d > 0)
        {
            var cpuUs = r.FirstNumber("llrp/cpu-per-request") * r.FirstNumber("llrp/requests");
            var share = r.FirstNumber("jit/interior-share")
                ?? (r.FirstNumber("jit/time-in-window") is { } ms && cpuUs is > 0 ? ms * 1000 / cpuUs * 100 : null);
            return new Steadiness(c, d, tolerance, jit, share, jitLimit);
        }
        return null;
    }

    /// <summary>Response body size the Downstream origin sends for a path: <c>?s=N</c>, else its default.</summary>
    public static long? ResponseBytesOf(string path)
    {
        var q = path.IndexOf('?', StringComparison.Ordinal);
        if (q < 0)
        {
            return DownstreamDefaultBytes;
        }
        foreach (var pair in path[(q + 1)..].Split('&'))
        {
            if (pair.StartsWith("s=", StringComparison.Ordinal))
            {
                return long.TryParse(pair.AsSpan(2), NumberStyles.None, CultureInfo.InvariantCulture, out var n) ? n : null;
            }
        }
        return DownstreamDefaultBytes;
    }

    private static RunMeta ReadMeta(string file, JsonElement root)
    {
        JsonElement? r = root;
        var commands = new List<string>();
        if (r.Prop("command").Text() is { Length: > 0 } command)
        {
            commands.Add(command);
        }
        if (r.Prop("commands") is { ValueKind: JsonValueKind.Array } list)
        {
            commands.AddRange(list.EnumerateArray().Select(c => ((JsonElement?)c).Text()).OfType<string>());
        }
        var warnings = r.Prop("warnings") is { ValueKind: JsonValueKind.Array } w
            ? w.EnumerateArray().Select(x => ((JsonElement?)x).Text()).OfType<string>().ToList()
            : [];
        // "pinning" names the roles' CPUs (run-local.sh since --pin-proxy); earlier runs have only "pinned", a boolean.
        var pinned = r.Prop("pinning").Text()
            ?? (r.Prop("pinned") is { ValueKind: JsonValueKind.True } ? "yes" : r.Prop("pinned") is { ValueKind: JsonValueKind.False } ? "no" : r.Prop("pinned").Text());
        // "origin" since run-local.sh --origin; a run.json without it ran Downstream (sweep.json has neither).
        var origin = r.Prop("origin").Text() ?? (Path.GetFileName(file) == "run.json" ? "downstream" : null);
        return new RunMeta(file, r.Prop("date").Text(), r.Prop("commit").Text(),
            r.Prop("dirty") is { ValueKind: JsonValueKind.True or JsonValueKind.False } d ? d.GetBoolean() : null,
            (int?)r.Prop("nproc").Number(), r.Prop("cpuModel").Text(), r.Prop("kernel").Text(), r.Prop("dotnetVersion").Text(),
            r.Prop("wrk").Text(), r.Prop("nginx").Text(), r.Prop("haproxy").Text(), r.Prop("mode").Text(), pinned, origin, commands, warnings, r.Prop("status").Text(),
            (int?)r.Prop("warmup").Number(), (int?)r.Prop("duration").Number());
    }

    [GeneratedRegex(@"^(?<scenario>.+)\.r(?<round>\d+)\.json$")]
    private static partial Regex RoundFile();

    [GeneratedRegex(@"^r(?<round>\d+)$")]
    private static partial Regex RoundFolder();
}
