using System.Globalization;
using System.Text.Json.Nodes;

namespace LLRP.Runner;

/// <summary>One measurement of crank's statistics protocol: name, aggregate and reduce operations, descriptions,
/// format and value.</summary>
internal sealed record Measurement(string Name, string Aggregate, string Reduce, string Short, string Long, string Format, double Value);

/// <summary>crank's stdout statistics blocks: reading them out of a job's log and writing one.</summary>
internal static class StatisticsBlocks
{
    /// <summary>Every #StartJobStatistics ... #EndJobStatistics body in the text, unparsed.</summary>
    public static List<string> Of(string log)
    {
        var blocks = new List<string>();
        System.Text.StringBuilder? body = null;
        foreach (var line in log.Split('\n'))
        {
            if (line.StartsWith("#EndJobStatistics", StringComparison.Ordinal))
            {
                if (body is not null)
                {
                    blocks.Add(body.ToString());
                }
                body = null;
            }
            else if (body is not null)
            {
                body.Append(line).Append('\n');
            }
            else if (line.StartsWith("#StartJobStatistics", StringComparison.Ordinal))
            {
                body = new();
            }
        }
        return blocks;
    }

    /// <summary>The blocks as JSON, or null when one of them is not valid JSON.</summary>
    public static List<JsonNode>? Parse(IEnumerable<string> blocks)
    {
        var parsed = new List<JsonNode>();
        foreach (var b in blocks)
        {
            try
            {
                if (JsonNode.Parse(b) is { } node)
                {
                    parsed.Add(node);
                }
            }
            catch (System.Text.Json.JsonException)
            {
                return null;
            }
        }
        return parsed;
    }

    /// <summary>The last value measured under <paramref name="name"/> (one of the ";"-separated names), if any.</summary>
    public static double? Last(IEnumerable<JsonNode> blocks, string name)
    {
        double? last = null;
        foreach (var b in blocks)
        {
            if (b["Measurements"] is not JsonArray measurements)
            {
                continue;
            }
            foreach (var m in measurements)
            {
                if (m?["Name"]?.GetValue<string>() is { } n && n.Split(';').Contains(name)
                    && m["Value"] is JsonValue v && v.TryGetValue<double>(out var d))
                {
                    last = d;
                }
            }
        }
        return last;
    }

    /// <summary>One block: a metadata entry per name (the first line of that name) and a measurement per row.</summary>
    public static JsonObject Block(string source, IReadOnlyList<Measurement> rows, DateTime now)
    {
        var metadata = new JsonArray();
        var seen = new HashSet<string>();
        var measurements = new JsonArray();
        var ts = now.ToUniversalTime().ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'", CultureInfo.InvariantCulture);
        foreach (var m in rows)
        {
            if (seen.Add(m.Name))
            {
                metadata.Add(new JsonObject
                {
                    ["Source"] = source,
                    ["Name"] = m.Name,
                    ["Aggregate"] = m.Aggregate,
                    ["Reduce"] = m.Reduce,
                    ["ShortDescription"] = m.Short,
                    ["LongDescription"] = m.Long,
                    ["Format"] = m.Format,
                });
            }
            measurements.Add(new JsonObject { ["Timestamp"] = ts, ["Name"] = m.Name, ["Value"] = Round10(m.Value) });
        }
        return new JsonObject { ["Metadata"] = metadata, ["Measurements"] = measurements };
    }

    /// <summary>Ten significant digits: the precision the figures were always written with.</summary>
    public static double Round10(double v) => double.Parse(v.ToString("G10", CultureInfo.InvariantCulture), CultureInfo.InvariantCulture);
}

/// <summary>The process figures of one role over the measured window, from crank/proc-sample.sh's lines
/// (<c>phase role epoch-ns utime stime VmRSS VmHWM threads wchar rchar port-bytes</c>), and the steadiness check.</summary>
internal static class Window
{
    private sealed record Sample(double T, double Cpu, double Rss, double Hwm, double Threads, double Bytes);

    /// <summary>crank's own names keep crank's meaning: benchmarks/cpu and benchmarks/working-set are the maximum of
    /// the 1-second samples (benchmarks/cpu: 100 % = all cores; /raw: 100 % = one core). Window averages and deltas
    /// have their own names (proc/...). steady/* compares the CPU us/request of the window's two halves; the requests
    /// of each half come from the request bytes received on the load's port (ss), which grow in proportion to the
    /// requests when every request is the same, as in every scenario here. <paramref name="jitShare"/>: the share of
    /// its CPU time the process spent JIT-compiling in its window without the window's first and last second (its
    /// own jit/interior-share, %; null for a process that reports none; src/Shared/SampleWindow.cs says why): a .NET
    /// process is steady only when that is at most <paramref name="jitLimit"/> %. Empty when no window was sampled.</summary>
    public static List<Measurement> Figures(string role, IEnumerable<string> sampleLines, double requests, int ticksPerSecond,
        int nproc, double tolerance, double? jitShare, double jitLimit)
    {
        var s = new List<Sample>();
        var ended = false;
        foreach (var line in sampleLines)
        {
            var f = line.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries);
            if (f.Length < 11 || f[1] != role || f[0] is not ("measure-start" or "tick" or "measure-end"))
            {
                continue;
            }
            if (f[0] == "measure-start")
            {
                s.Clear();
            }
            double N(int i) => double.TryParse(f[i], NumberStyles.Float, CultureInfo.InvariantCulture, out var d) ? d : 0;
            s.Add(new Sample(N(2), N(3) + N(4), N(5), N(6), N(7), N(10)));
            ended |= f[0] == "measure-end";
        }
        var rows = new List<Measurement>();
        if (!ended || s.Count < 2)
        {
            return rows;
        }
        var (first, end) = (s[0], s[^1]);
        var win = (end.T - first.T) / 1e9;
        var cpuUs = (end.Cpu - first.Cpu) * 1e6 / ticksPerSecond;
        var avgRaw = win > 0 ? cpuUs / 1e6 / win * 100 : 0;
        var maxRss = s.Max(x => x.Rss);
        double maxRaw = 0;
        for (var i = 1; i < s.Count; i++)
        {
            var dt = (s[i].T - s[i - 1].T) / 1e9;
            // crank samples every second: a last interval much shorter than that is too coarse to count.
            if (dt < 0.5)
            {
                continue;
            }
            maxRaw = Math.Max(maxRaw, (s[i].Cpu - s[i - 1].Cpu) / ticksPerSecond / dt * 100);
        }
        if (maxRaw == 0)
        {
            maxRaw = avgRaw;
        }
        void Add(string name, string agg, string reduce, string shortD, string longD, string format, double v) =>
            rows.Add(new Measurement(name, agg, reduce, shortD, longD, format, v));
        Add("benchmarks/cpu", "Max", "Max", "CPU usage (%)", "Highest 1-second CPU usage in the measured window, 100% = all cores", "n0", maxRaw / nproc);
        Add("benchmarks/cpu/raw", "Max", "Max", "Cores usage (%)", "Highest 1-second CPU usage in the measured window, 100% = one core", "n0", maxRaw);
        Add("benchmarks/working-set", "Max", "Max", "Working set (MB)", "Highest 1-second resident set (VmRSS) in the measured window", "n0", maxRss / 1024);
        Add("proc/cpu/average", "Max", "Avg", "CPU average (%)", "Average CPU usage over the measured window, 100% = all cores", "n1", avgRaw / nproc);
        Add("proc/cpu/raw/average", "Max", "Avg", "Cores average (%)", "Average CPU usage over the measured window, 100% = one core", "n1", avgRaw);
        Add("proc/working-set/end", "Max", "Max", "Working set at end (MB)", "Resident set (VmRSS) at the end of the measured window", "n0", end.Rss / 1024);
        Add("proc/working-set/peak", "Max", "Max", "Peak working set (MB)", "Peak resident set of the process since it started (VmHWM)", "n0", end.Hwm / 1024);
        Add("proc/cpu/time", "Max", "Sum", "CPU time (ms)", "User + system CPU time over the measured window (ms)", "n0", cpuUs / 1000);
        if (requests > 0)
        {
            Add("proc/cpu/per-request", "Max", "Avg", "CPU per request (us)", "CPU time per completed request over the measured window (us)", "n2", cpuUs / requests);
        }
        Add("proc/threads", "Max", "Max", "Threads", "Threads at the end of the measured window", "n0", end.Threads);
        Add("proc/window", "Max", "Max", "Measured window (s)", "Wall-clock seconds between the two edge samples", "n2", win);

        // The two halves: from the first sample to the last one that still saw the load connections (the edge sample
        // after wrk exits sees none), split at the sample nearest to the middle. Requests per half: request bytes of
        // the half / bytes per request, the latter from the whole stretch.
        var last = s.Count - 1;
        while (last > 0 && s[last].Bytes <= 0)
        {
            last--;
        }
        var mid = 0;
        var tm = (s[0].T + s[last].T) / 2;
        for (var i = 0; i <= last; i++)
        {
            if (Math.Abs(s[i].T - tm) < Math.Abs(s[mid].T - tm))
            {
                mid = i;
            }
        }
        var span = (s[last].T - s[0].T) / (end.T - first.T);
        if (requests > 0 && span > 0.5 && mid > 0 && mid < last && s[mid].Bytes > s[0].Bytes && s[last].Bytes > s[mid].Bytes)
        {
            var perRequest = (s[last].Bytes - s[0].Bytes) / (requests * span);
            var r1 = (s[mid].Bytes - s[0].Bytes) / perRequest;
            var r2 = (s[last].Bytes - s[mid].Bytes) / perRequest;
            var h1 = (s[mid].Cpu - s[0].Cpu) * 1e6 / ticksPerSecond / r1;
            var h2 = (s[last].Cpu - s[mid].Cpu) * 1e6 / ticksPerSecond / r2;
            var verdict = Steadiness.Decide(h1, h2, tolerance, jitShare, jitLimit);
            Add("steady/first-half", "Max", "Avg", "CPU us/request, 1st half", "CPU time per request in the first half of the measured window (us)", "n2", h1);
            Add("steady/second-half", "Max", "Avg", "CPU us/request, 2nd half", "CPU time per request in the second half of the measured window (us)", "n2", h2);
            Add("steady/change", "Max", "Max", "Change between halves (%)", "(2nd half - 1st half) / their mean, CPU us/request", "n1", verdict.Change);
            Add("steady/tolerance", "Max", "Max", "Steady tolerance (%)", "Largest change between halves that counts as steady", "n0", tolerance);
            Add("steady/cpu-ok", "Max", "Min", "Halves agree", "1 when the change between halves is within the tolerance, else 0", "n0", verdict.CpuOk ? 1 : 0);
            if (jitShare is { } share)
            {
                Add("steady/jit-share", "Max", "Max", "JIT share (%)", "Time the JIT spent compiling / the process CPU time, in the window without its first and last second", "n2", share);
                Add("steady/jit-limit", "Max", "Max", "JIT share limit (%)", "Largest JIT share of the window CPU time that counts as steady", "n2", jitLimit);
                Add("steady/jit-ok", "Max", "Min", "JIT quiet", "1 when the JIT share is within the limit, else 0", "n0", verdict.JitOk ? 1 : 0);
            }
            Add("steady/ok", "Max", "Min", "Steady", "1 when the halves agree and, for a .NET process, its JIT was quiet in the window, else 0", "n0", verdict.Steady ? 1 : 0);
        }
        return rows;
    }
}

/// <summary>The steadiness decision (docs/methodology.md, "The steadiness check").</summary>
internal sealed record Steadiness(double Change, bool CpuOk, bool JitOk)
{
    public bool Steady => CpuOk && JitOk;

    /// <summary>Steady when the CPU us/request of the window's halves (<paramref name="firstHalf"/>,
    /// <paramref name="secondHalf"/>) differ by at most <paramref name="tolerance"/> % of their mean and, for a process
    /// that reports a JIT share, that share is at most <paramref name="jitLimit"/> %.</summary>
    public static Steadiness Decide(double firstHalf, double secondHalf, double tolerance, double? jitShare, double jitLimit)
    {
        var change = (secondHalf - firstHalf) / ((firstHalf + secondHalf) / 2) * 100;
        return new Steadiness(change, change <= tolerance && change >= -tolerance, jitShare is not { } j || j <= jitLimit);
    }

    /// <summary>Whether another attempt is due: the run was judged unsteady (steady/ok = 0; a run without a verdict is
    /// not retried) and attempts are left.</summary>
    public static bool Retry(double? steadyOk, int attempt, int retries) => steadyOk == 0 && attempt <= retries;
}
