namespace LLRP.Jobs;

/// <summary>What the warm-up did: its seconds in all (load and pauses) and whether a cap ended it before the probe
/// said warm (statistics warmup/seconds and warmup/capped).</summary>
internal readonly record struct WarmResult(int Seconds, bool Capped);

/// <summary>The warm-up of a load job (wrk, h2load): fixed, or adaptive, ended by a probe rather than by the clock.
/// The probe is the runner's WRK_JOB_WARM_PROBE (crank/jit-quiet.sh: the proxy's JIT is quiet); a job runs its load
/// through <c>load(seconds, outputFile)</c>, which starts the tool (or its own load) for at most that many seconds.</summary>
internal sealed class Warmup(string job, Func<int, string, ILoadRun> load, TextWriter log)
{
    // Settle: under uninterrupted load the runtime's tiering falls behind (its background compiler competes with the
    // load for the cores, and promotion waits for a lull), and it catches up in a batch each time the load pauses: a
    // trial on the 2-core box saw ~560 methods compiled in the second after the warm-up run ended and ~340 after the
    // next pause, i.e. inside a measured window that starts after a pause. So the load pauses and runs again in short
    // cycles until a whole cycle compiles no more than the probe's quiet threshold.

    /// <summary>Ten times the runtime's 100 ms tiering delay (TieredCompilation's call-counting delay).</summary>
    public const int SettlePauseSeconds = 1;

    /// <summary>Makes a cycle (4 s) longer than the probe's 3 s span, so each check covers a whole pause.</summary>
    public const int SettleLoadSeconds = 3;

    /// <summary>Bounds the settling to 24 s.</summary>
    public const int SettleCycles = 6;

    /// <summary>The environment variable naming the probe (exit 0: warm).</summary>
    public const string ProbeVariable = "WRK_JOB_WARM_PROBE";

    /// <summary>The probe when the adaptive warm-up applies: a minimum, a larger cap and a probe; else null.</summary>
    public static string? AdaptiveProbe(int min, int? max)
    {
        var probe = Environment.GetEnvironmentVariable(ProbeVariable);
        return min > 0 && max > min && !string.IsNullOrEmpty(probe) ? probe : null;
    }

    /// <summary>Load for <paramref name="seconds"/>; its output shown (never parsed).</summary>
    public WarmResult Fixed(int seconds)
    {
        var output = Path.GetTempFileName();
        try
        {
            using (var run = load(seconds, output))
            {
                run.WaitForExit();
            }
            ShowOutput(output);
        }
        finally
        {
            File.Delete(output);
        }
        return new WarmResult(seconds, false);
    }

    /// <summary>Load for at least <paramref name="min"/> seconds, then until <paramref name="probe"/> exits 0, at most
    /// <paramref name="max"/> seconds in all; then the settle cycles. <paramref name="stopSignal"/> ends the load early
    /// (wrk prints its report on SIGINT; h2load needs SIGTERM).</summary>
    public WarmResult Adaptive(int min, int max, string probe, int stopSignal)
    {
        log.WriteLine($"{job}: warm-up: at least {min}s, then until {probe} says warm, at most {max}s");
        var clock = System.Diagnostics.Stopwatch.StartNew();
        var first = false;
        var output = Path.GetTempFileName();
        try
        {
            using (var run = load(max, output))
            {
                // The load still runs: the cap is not reached yet.
                if (!run.WaitForExit(TimeSpan.FromSeconds(min)))
                {
                    while (!run.HasExited)
                    {
                        if (Probe(probe, quiet: false))
                        {
                            first = true;
                            run.Signal(stopSignal);
                            break;
                        }
                        run.WaitForExit(TimeSpan.FromSeconds(1));
                    }
                }
                run.WaitForExit();
            }
            ShowOutput(output);
        }
        finally
        {
            File.Delete(output);
        }
        log.WriteLine($"{job}: warm-up: {(int)clock.Elapsed.TotalSeconds} s, {State(first)}");

        var settleClock = System.Diagnostics.Stopwatch.StartNew();
        var settled = false;
        var cycles = 0;
        while (!settled && cycles < SettleCycles)
        {
            cycles++;
            // The probe compares against its observation from before the pause: a cycle lasts longer than its span.
            Probe(probe, quiet: true);
            Thread.Sleep(TimeSpan.FromSeconds(SettlePauseSeconds));
            using (var run = load(SettleLoadSeconds, "/dev/null"))
            {
                run.WaitForExit();
            }
            settled = Probe(probe, quiet: false);
        }
        log.WriteLine($"{job}: settle: {(int)settleClock.Elapsed.TotalSeconds} s, {cycles} cycle(s) of {SettlePauseSeconds} s pause"
            + $" + {SettleLoadSeconds} s load, {State(settled)}");
        var seconds = (int)clock.Elapsed.TotalSeconds;
        log.WriteLine($"{job}: warm-up: {seconds} s in all, {State(first)} then {State(settled)}");
        return new WarmResult(seconds, !(first && settled));
    }

    private static string State(bool warm) => warm ? "warm" : "cap";

    private static bool Probe(string probe, bool quiet)
    {
        using var run = ToolRun.Start(probe, [], quiet ? "/dev/null" : null);
        return run.WaitForExit() == 0;
    }

    private void ShowOutput(string file)
    {
        foreach (var line in File.ReadLines(file))
        {
            log.WriteLine($"  warm-up| {line}");
        }
    }
}
