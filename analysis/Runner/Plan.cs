using System.Text;

namespace LLRP.Runner;

/// <summary>The order in which one round of an interleaved sitting runs its scenarios or configurations.</summary>
internal static class Rounds
{
    /// <summary>The items in round <paramref name="round"/>'s order (1-based): rotated one place per round and
    /// reversed every other round (4 items: A B C D, A D C B, C D A B, C B A D, ...), so that no item always runs first,
    /// last or right after the same one. Machine state that one run leaves to the next (and the slow and fast spells of
    /// a shared host) then falls on every item alike.</summary>
    public static IReadOnlyList<T> Order<T>(int round, IReadOnlyList<T> items)
    {
        if (items.Count == 0)
        {
            return [];
        }
        var i = round - 1;
        var shift = ((i % items.Count) + items.Count) % items.Count;
        var order = items.Skip(shift).Concat(items.Take(shift)).ToList();
        if (i % 2 != 0)
        {
            order.Reverse();
        }
        return order;
    }
}

/// <summary>What the machine offers: CPUs, and crank's tools if they are installed.</summary>
internal sealed record Machine(int Nproc, string? CrankBin, string? AgentBin);

/// <summary>The topology, the mode and the time estimate of a run-local invocation: everything --dry-run prints.</summary>
internal sealed class Plan
{
    // Seconds a run costs beyond warm-up + measured time: start the origin and the proxy, wait for them, one first
    // request, stop both (SIGTERM), write the JSON. Timed on the 2-core box.
    public const int RunOverhead = 6;
    // Seconds an adaptive warm-up can run past --warmup-max: crank/wrk-job.sh's settle cycles after it (6 x (1 s pause +
    // 3 s load) = 24 s) and the JIT probe's own time each second; the 134 .NET runs of the sittings of 2026-11-27
    // (cap 60 s) warmed up for 39-85 s in all.
    public const int WarmSettleMax = 30;
    // The typical adaptive warm-up in percent of its cap: those 134 runs' median was 51 s, 85 % of the 60 s cap.
    public const int WarmTypicalPercent = 85;
    // The JIT is quiet when it compiled at most --warm-jit methods over this many seconds (crank/jit-quiet.sh).
    public const int WarmQuietSeconds = 3;

    public Options O { get; }
    public Machine Machine { get; }
    public string Mode { get; }
    /// <summary>"load", "proxy" or "none".</summary>
    public string Pin { get; set; }
    /// <summary>"nginx" or "downstream".</summary>
    public string Origin { get; set; }
    public bool OriginDefaulted { get; }
    public string TopologyNote { get; set; } = "";

    public Plan(Options o, Machine machine)
    {
        O = o;
        Machine = machine;
        // h2load's shape is the .NET lab's: one connection per core of the load machine (this one), --streams each.
        if (o.Load == "h2load" && !o.ConnectionsGiven)
        {
            o.Connections = Math.Max(machine.Nproc, 1);
        }
        if (o.Load == "h2load" && o.LoadThreads > o.Connections)
        {
            throw new UsageException("h2load needs connections >= threads");
        }
        Mode = o.UseCrank && machine.CrankBin is not null ? "crank" : "fallback";
        // The default is the README headline's (--pin-proxy --origin nginx) wherever it can run: the fallback on one
        // machine with 2 CPUs or more. Elsewhere (crank, several machines or namespaces, 1 CPU) the shared topology.
        var headlineOk = !(Mode == "crank" || o.Multimachine || machine.Nproc < 2 || o.Shared);
        Pin = o.Pin.Length > 0 ? o.Pin : headlineOk ? "proxy" : "none";
        Origin = o.Origin;
        if (Origin.Length == 0)
        {
            Origin = "downstream";
            OriginDefaulted = true;
            if (headlineOk && o.Load == "websocket")
            {
                TopologyNote = " (Downstream: the nginx origin has no WebSocket echo)";
            }
            else if (headlineOk && o.BodySize != 0)
            {
                TopologyNote = " (Downstream: the nginx origin answers GET and HEAD only, and this run sends bodies)";
            }
            else if (headlineOk)
            {
                if (o.Path is "/" or "/?s=0" or "/?s=10" or "/?s=1024" or "/?s=65536")
                {
                    Origin = "nginx";
                }
                else
                {
                    TopologyNote = $" (Downstream: the nginx origin serves / and /?s=0|10|1024|65536 only, not {o.Path})";
                }
            }
        }
        if (!headlineOk && !o.Shared)
        {
            var why = Mode == "crank" ? "crank" : o.Multimachine ? "several hosts" : "1 CPU";
            TopologyNote = $" (the default where --pin-proxy --origin nginx cannot run: {why})";
        }
        // A cap at or below the minimum is a fixed warm-up.
        if (o.WarmupMax <= o.Warmup)
        {
            o.WarmupMax = 0;
        }
    }

    /// <summary>The pinning in words.</summary>
    public string PinningText => Pin switch
    {
        "load" => "load on CPU 0, proxy + origin on CPU 1",
        "proxy" => "proxy alone on CPU 1, load + origin on CPU 0",
        _ => "none",
    };

    /// <summary>The pinning as role=cpu lists (run.json, each run's properties).</summary>
    public string PinningShort => Pin switch
    {
        "load" => "load=cpu0 application,downstream=cpu1",
        "proxy" => "application=cpu1 load,downstream=cpu0",
        _ => "none",
    };

    public string OriginText => Origin == "nginx" ? "nginx (crank/nginx/origin.conf)" : "Downstream (Kestrel)";

    public string TopologyText => $"{(Pin == "none" ? "nothing pinned" : PinningText)}; origin {OriginText}{TopologyNote}";

    public static bool IsDotnet(string scenario) => scenario != "direct" && !Peers.Is(scenario);

    /// <summary>The expected time (every run steady at once, each .NET warm-up the typical share of its cap) and the
    /// longest (every .NET warm-up at its cap plus the settle cycles, every run taking all its attempts). The adaptive
    /// warm-up runs in the fallback only; crank's is fixed.</summary>
    public string Estimate(IReadOnlyList<string> scenarios)
    {
        var (expected, longest, typWarm, maxWarm) = Times(scenarios);
        var n = scenarios.Count;
        var nDotnet = scenarios.Count(IsDotnet);
        var adaptive = maxWarm == O.Warmup ? "" : $" ({nDotnet} .NET: until the JIT is quiet, typically {typWarm}s, at most {maxWarm}s)";
        return $"expected time ~{(expected + 59) / 60} min, at most ~{(longest + 59) / 60} min: {n} scenario(s) x {O.Rounds} round(s); "
            + $"a run is {O.Warmup}s warm-up{adaptive} + {O.Duration}s measured + ~{RunOverhead}s start/stop; "
            + $"at most {O.SteadyRetries} retries per unsteady run{(O.Report ? "; then the report (~1 min)" : "")}";
    }

    /// <summary>The expected time of the runs in seconds (<see cref="Estimate"/>'s first figure), for the progress line.</summary>
    public long ExpectedSeconds(IReadOnlyList<string> scenarios) => Times(scenarios).Expected;

    private (long Expected, long Longest, int TypWarm, int MaxWarm) Times(IReadOnlyList<string> scenarios)
    {
        var n = scenarios.Count;
        var nDotnet = scenarios.Count(IsDotnet);
        int typWarm = O.Warmup, maxWarm = O.Warmup;
        if (Mode == "fallback" && O.WarmupMax > 0)
        {
            typWarm = Math.Max(O.WarmupMax * WarmTypicalPercent / 100, O.Warmup);
            maxWarm = O.WarmupMax + WarmSettleMax;
        }
        long fixedRun = O.Warmup + O.Duration + RunOverhead;
        long expected = (long)O.Rounds * (((n - nDotnet) * fixedRun) + (nDotnet * (typWarm + O.Duration + RunOverhead)));
        long longest = (1L + O.SteadyRetries) * O.Rounds * (((n - nDotnet) * fixedRun) + (nDotnet * (maxWarm + O.Duration + RunOverhead)));
        return (expected, longest, typWarm, maxWarm);
    }

    /// <summary>The load in words, with the proxies' protocols when any are passed.</summary>
    public string LoadText => O.Load switch
    {
        "wrk" => $"wrk -t {O.LoadThreads}",
        "h2load" => $"h2load -t {O.LoadThreads} -m {O.Streams}{(O.Rate.Length > 0 ? $" at {O.Rate}/s" : "")}",
        "websocket" => $"websocket echo of {O.MessageSize}-byte messages",
        _ => $"fixed rate {O.Rate}/s",
    } + $" -c {O.Connections}{(O.Protocols.Length > 0 ? $", protocols {O.Protocols}" : "")}{(O.FrontEnd.Length > 0 ? $", LLRP front end {O.FrontEnd}" : "")}";

    /// <summary>--dry-run's plan (after the two log lines every run prints).</summary>
    public string DryRun()
    {
        var s = new StringBuilder();
        s.Append("plan (").Append(Mode == "crank" ? "crank" : "the job scripts without crank").Append("), nothing run:\n");
        s.Append("  scenarios:  ").Append(string.Join(' ', O.Scenarios)).Append('\n');
        s.Append($"  load:       {LoadText}, path {O.Path}, {O.ServerScheme} to the proxy, {O.DownstreamScheme} to the origin, proxy threads {O.ProxyThreads}\n");
        for (var r = 1; r <= O.Rounds; r++)
        {
            s.Append($"  round {r}:    ");
            foreach (var item in Rounds.Order(r + O.RoundOffset, O.Scenarios))
            {
                s.Append(item).Append(' ');
            }
            s.Append('\n');
        }
        s.Append("  topology:   ").Append(TopologyText).Append('\n');
        s.Append("  ").Append(Estimate(O.Scenarios)).Append('\n');
        s.Append("  results:    ").Append(O.JsonDir.Length > 0 ? O.JsonDir : "artifacts/crank/<date>-<time>")
            .Append(O.Report ? ", then report.md and PNG charts (analysis/Report)" : "").Append('\n');
        return s.ToString();
    }
}
