using System.Globalization;
using LLRP.Diagnostics;

namespace LLRP.Baselines;

/// <summary>
/// The baselines' JIT activity over the measured window, printed as crank's stdout statistics block
/// (#StartJobStatistics ... #EndJobStatistics) every statsInterval and at shutdown, under the names LLRP's own
/// report uses (jit/methods, jit/methods-in-window, jit/methods/first-half, jit/methods/second-half, jit/time-in-window,
/// jit/interior-share),
/// so that a runner can tell a window measured while tiered compilation was still replacing code from a steady one.
/// </summary>
/// <remarks>
/// The baselines count no requests: counting them would add code to the very pipeline being measured. The window is
/// therefore the last statsWindow seconds that end with the last interval in which the process was busy (at least
/// <see cref="BusyCoreFraction"/> of one core): with statsWindow = the load's measured duration, that is the measured
/// run to one interval, as for LLRP's request-based window. The same file is linked into both baselines.
/// </remarks>
internal sealed class JitActivity : IDisposable
{
    // An idle Kestrel process uses well under 1 % of a core; under the benchmark's load a proxy uses most of one. A
    // fifth of a core separates the two with room on either side.
    private const double BusyCoreFraction = 0.2;

    // One sample per interval; 4096 covers over an hour at 1 s, far more than any window worth measuring.
    private const int MaxSamples = 4096;

    private readonly List<(TimeSpan At, TimeSpan Cpu, long Methods, TimeSpan JitTime)> _samples = [];
    private readonly TimeSpan _window;
    private readonly Timer? _timer;

    private JitActivity(TimeSpan interval, TimeSpan window)
    {
        _window = window;
        _samples.Add(Now());
        if (interval > TimeSpan.Zero)
        {
            _timer = new Timer(static s => ((JitActivity)s!).Tick(), this, interval, interval);
        }
    }

    /// <summary>
    /// Starts the report from --statsInterval (seconds between blocks, 0 = off, the default) and --statsWindow (seconds
    /// the window covers, 0 = since the first busy interval); prints a last block when the application stops.
    /// </summary>
    /// <exception cref="FormatException">An option is not a number of seconds from 0 to 86400.</exception>
    public static void Attach(IConfiguration config, IHostApplicationLifetime lifetime)
    {
        var interval = Seconds(config, "statsInterval");
        var window = Seconds(config, "statsWindow");
        if (interval == TimeSpan.Zero)
        {
            return;
        }
        var report = new JitActivity(interval, window);
        lifetime.ApplicationStopped.Register(() =>
        {
            report.Dispose();
            Console.Out.Write(report.Block(add: true));
        });
    }

    /// <summary>Reads an option now, so that a bad value stops the process before it starts listening.</summary>
    public static void Validate(IConfiguration config)
    {
        _ = Seconds(config, "statsInterval");
        _ = Seconds(config, "statsWindow");
    }

    private static TimeSpan Seconds(IConfiguration config, string name)
    {
        if (config[name] is not { Length: > 0 } value)
        {
            return TimeSpan.Zero;
        }
        if (!double.TryParse(value, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var seconds) || seconds > 86_400)
        {
            throw new FormatException($"--{name} '{value}' is not 0 (off) or a number of seconds up to 86400.");
        }
        return TimeSpan.FromSeconds(seconds);
    }

    private static (TimeSpan, TimeSpan, long, TimeSpan) Now() =>
        (TimeSpan.FromMilliseconds(Environment.TickCount64), Environment.CpuUsage.TotalTime, System.Runtime.JitInfo.GetCompiledMethodCount(currentThread: false),
            System.Runtime.JitInfo.GetCompilationTime(currentThread: false));

    private void Tick()
    {
        string block;
        lock (_samples)
        {
            var before = _samples[^1];
            block = Block(add: true);
            var after = _samples[^1];
            // Only while busy: once the load stops, the last block printed describes the measured window.
            if (!Busy(before, after))
            {
                return;
            }
        }
        Console.Out.Write(block);
    }

    private static bool Busy((TimeSpan At, TimeSpan Cpu, long Methods, TimeSpan JitTime) from, (TimeSpan At, TimeSpan Cpu, long Methods, TimeSpan JitTime) to) =>
        to.At > from.At && (to.Cpu - from.Cpu) >= (to.At - from.At) * BusyCoreFraction;

    private string Block(bool add)
    {
        lock (_samples)
        {
            if (add)
            {
                _samples.Add(Now());
                if (_samples.Count > MaxSamples)
                {
                    _samples.RemoveAt(0);
                }
            }
            var (inWindow, firstHalf, secondHalf, jitMs, interiorShare, seconds) = Window();
            var now = DateTime.UtcNow.ToString("o", CultureInfo.InvariantCulture);
            string Meta(string name, string aggregate, string shortDescription, string longDescription, string format = "n0") =>
                $"{{\"Source\":\"baseline\",\"Name\":\"{name}\",\"Aggregate\":\"{aggregate}\",\"Reduce\":\"Max\",\"ShortDescription\":\"{shortDescription}\",\"LongDescription\":\"{longDescription}\",\"Format\":\"{format}\"}}";
            string Measure(string name, double value) =>
                string.Create(CultureInfo.InvariantCulture, $"{{\"Timestamp\":\"{now}\",\"Name\":\"{name}\",\"Value\":{value:0.###}}}");
            return "#StartJobStatistics\n{\"Metadata\":[" +
                Meta("jit/methods", "Max", "JIT methods (all)", "Methods the JIT compiled since the process started") + "," +
                Meta("jit/methods-in-window", "Last", "JIT methods (window)", "Methods the JIT compiled in the measured window") + "," +
                Meta("jit/methods/first-half", "Last", "JIT methods, 1st half", "Methods the JIT compiled in the first half of the window") + "," +
                Meta("jit/methods/second-half", "Last", "JIT methods, 2nd half", "Methods the JIT compiled in the second half of the window") + "," +
                Meta("jit/time-in-window", "Last", "JIT time (window, ms)", "Time the JIT spent compiling in the measured window (ms, all threads)", "n1") + "," +
                Meta("jit/interior-share", "Last", "JIT share, interior (%)", "JIT time / process CPU time in the window without its first and last interval (%)", "n2") + "," +
                Meta("jit/window", "Last", "JIT window (s)", "Seconds the JIT window covers") +
                "],\"Measurements\":[" +
                Measure("jit/methods", _samples[^1].Methods) + "," + Measure("jit/methods-in-window", inWindow) + "," +
                Measure("jit/methods/first-half", firstHalf) + "," + Measure("jit/methods/second-half", secondHalf) + "," +
                Measure("jit/time-in-window", jitMs) + "," +
                Measure("jit/interior-share", double.IsFinite(interiorShare) ? interiorShare : 0) + "," +
                Measure("jit/window", seconds) +
                "]}\n#EndJobStatistics\n";
        }
    }

    /// <summary>
    /// Methods compiled in the window and its two halves, and the JIT's time in the window (Shared/SampleWindow.cs says
    /// where they lie).
    /// </summary>
    private (long InWindow, long FirstHalf, long SecondHalf, double JitMilliseconds, double InteriorSharePercent, double Seconds) Window()
    {
        if (!SampleWindow.TryFind(_samples.Count, i => _samples[i].At, i => Busy(_samples[i - 1], _samples[i]), _window,
            out var start, out var mid, out var end))
        {
            return default;
        }
        var (from, to) = SampleWindow.Interior(start, end);
        return (_samples[end].Methods - _samples[start].Methods, _samples[mid].Methods - _samples[start].Methods,
            _samples[end].Methods - _samples[mid].Methods, (_samples[end].JitTime - _samples[start].JitTime).TotalMilliseconds,
            SampleWindow.JitSharePercent(_samples[from].JitTime, _samples[to].JitTime, _samples[from].Cpu, _samples[to].Cpu),
            (_samples[end].At - _samples[start].At).TotalSeconds);
    }

    public void Dispose() => _timer?.Dispose();
}
