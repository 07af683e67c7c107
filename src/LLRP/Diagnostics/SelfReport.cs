using System.Globalization;
using System.Text;
using LLRP.Connections;

namespace LLRP.Diagnostics;

/// <summary>
/// The proxy's own numbers over the measured window, printed as crank's stdout statistics block
/// (#StartJobStatistics ... #EndJobStatistics, parsed by crank's agent) every statsInterval and at shutdown.
/// </summary>
/// <remarks>
/// A crank application job cannot see when the load job's measured run starts, so every statsInterval the proxy
/// samples its cumulative counters (requests, GC.GetTotalAllocatedBytes, process CPU time) and reports the figures
/// over a trailing window: the last statsWindow seconds that end with the last interval in which requests were
/// served. With statsWindow = the load's measured duration, the window is the measured run (to one statsInterval),
/// warm-up and start-up excluded, and it stays put once the load stops, so crank's "Last" aggregate is that window.
/// statsWindow = 0 reports everything from the first interval that served requests (warm-up included).
/// The window is also split in two halves by time, so that a runner can check that the proxy was steady. The
/// methods the JIT compiled in the window and in each half, and the time it spent compiling them
/// (System.Runtime.JitInfo), tell a runner whether tiered compilation was still replacing code while the window was
/// measured, and what share of the window's CPU time that cost.
/// </remarks>
internal sealed class SelfReport : IDisposable
{
    // One sample per statsInterval; 4096 covers over an hour at 1 s, far more than any window worth measuring.
    internal const int MaxSamples = 4096;

    private readonly ProxyCounters _counters;
    private readonly Timer? _timer;
    private readonly WindowSampler _sampler;
    // The block's text, reused under the sampler's lock (a block is about 4,300 characters).
    private readonly StringBuilder _text = new(8 * 1024);
    private static readonly string s_blockStart = BlockStart();

    public SelfReport(ProxyServer server, TimeSpan interval)
    {
        _counters = server.Counters;
        _sampler = new WindowSampler(server.Options.StatsWindow, MaxSamples);
        _sampler.Add(Now());
        if (interval > TimeSpan.Zero)
        {
            _timer = new Timer(static s => ((SelfReport)s!).Tick(), this, interval, interval);
        }
    }

    private Sample Now() =>
        new(TimeSpan.FromTicks(Environment.TickCount64 * TimeSpan.TicksPerMillisecond), _counters.Requests,
            GC.GetTotalAllocatedBytes(), Environment.CpuUsage.TotalTime, System.Runtime.JitInfo.GetCompiledMethodCount(currentThread: false),
            System.Runtime.JitInfo.GetCompilationTime(currentThread: false));

    private void Tick()
    {
        lock (_sampler)
        {
            // Printed every interval, with or without new requests: a reader sees the proxy is alive and idle. Written
            // from the reused builder under the lock, so a tick allocates next to nothing.
            _sampler.Add(Now());
            WriteBlock(_text, Console.Out, _sampler.Window(), _counters.Requests, _counters.Rejected, _counters.Failed.Total);
        }
    }

    /// <summary>Takes a last sample and returns one readable line for the shutdown log.</summary>
    public string Summary()
    {
        WindowFigures w;
        lock (_sampler)
        {
            _sampler.Add(Now());
            w = _sampler.Window();
        }
        var inWindow = w.Requests > 0
            ? string.Create(CultureInfo.InvariantCulture,
                $"over the {w.Seconds:F1} s window: {Wording.Count(w.Requests, "request", "requests")}, {w.AllocatedPerRequest:F1} bytes/request, {w.CpuUsPerRequest:F1} us CPU/request, {w.JitMethods} methods JIT-compiled ({w.FirstHalfJitMethods} + {w.SecondHalfJitMethods} by half) in {w.JitMilliseconds:F1} ms.")
            : "no requests in the window.";
        return string.Create(CultureInfo.InvariantCulture,
            $"LLRP served {Wording.Count(_counters.Requests, "request", "requests")}, rejected {_counters.Rejected}, {_counters.Failed.Describe()}, {_counters.Tunnels.Describe()}, allocated {Wording.Count(GC.GetTotalAllocatedBytes(), "byte", "bytes")} in all; {inWindow}");
    }

    /// <summary>The statistics block of the window as of the last sample.</summary>
    public string Block()
    {
        lock (_sampler)
        {
            AppendBlock(_text.Clear(), _sampler.Window(), _counters.Requests, _counters.Rejected, _counters.Failed.Total);
            return _text.ToString();
        }
    }

    /// <summary>
    /// Writes the block of <paramref name="w"/> through <paramref name="text"/>, which is reused: the process this block
    /// reports on includes the reporter, and a block built afresh cost about 17 KB, about 1 B per request at
    /// statsInterval 1 and 20,000 requests a second.
    /// </summary>
    internal static void WriteBlock(StringBuilder text, TextWriter writer, WindowFigures w, long totalRequests, long rejected, long failed = 0)
    {
        AppendBlock(text.Clear(), w, totalRequests, rejected, failed);
        writer.Write(text);
    }

    private static void AppendBlock(StringBuilder sb, WindowFigures w, long totalRequests, long rejected, long failed)
    {
        Span<char> now = stackalloc char[40];
        DateTime.UtcNow.TryFormat(now, out var length, "o", CultureInfo.InvariantCulture);
        now = now[..length];
        sb.Append(s_blockStart);
        Measure(sb, now, "llrp/requests", w.Requests).Append(',');
        Measure(sb, now, "llrp/requests/total", totalRequests).Append(',');
        Measure(sb, now, "llrp/rejected", rejected).Append(',');
        Measure(sb, now, "llrp/failed", failed).Append(',');
        Measure(sb, now, "llrp/allocated-per-request", w.AllocatedPerRequest).Append(',');
        Measure(sb, now, "llrp/cpu-per-request", w.CpuUsPerRequest).Append(',');
        Measure(sb, now, "llrp/cpu-per-request/first-half", w.FirstHalfCpuUsPerRequest).Append(',');
        Measure(sb, now, "llrp/cpu-per-request/second-half", w.SecondHalfCpuUsPerRequest).Append(',');
        Measure(sb, now, "llrp/window", w.Seconds).Append(',');
        Measure(sb, now, "jit/methods", System.Runtime.JitInfo.GetCompiledMethodCount(currentThread: false)).Append(',');
        Measure(sb, now, "jit/methods-in-window", w.JitMethods).Append(',');
        Measure(sb, now, "jit/methods/first-half", w.FirstHalfJitMethods).Append(',');
        Measure(sb, now, "jit/methods/second-half", w.SecondHalfJitMethods).Append(',');
        Measure(sb, now, "jit/time-in-window", w.JitMilliseconds).Append(',');
        Measure(sb, now, "jit/interior-share", w.JitInteriorSharePercent);
        sb.Append("]}\n#EndJobStatistics\n");
    }

    // Everything before the measurements never changes: built once.
    private static string BlockStart()
    {
        var sb = new StringBuilder("#StartJobStatistics\n{\"Metadata\":[");
        // Aggregate Last: the last block describes the window (it no longer moves once the load stops).
        // Reduce: counts add up over several proxies, per-request figures average.
        Meta(sb, "llrp/requests", "Last", "Sum", "Proxy requests (window)", "Requests the proxy completed in the measured window", "n0").Append(',');
        Meta(sb, "llrp/requests/total", "Max", "Sum", "Proxy requests (all)", "Requests the proxy completed since it started", "n0").Append(',');
        Meta(sb, "llrp/rejected", "Max", "Sum", "Proxy rejections", "Requests the proxy refused since it started (4xx it generated)", "n0").Append(',');
        Meta(sb, "llrp/failed", "Max", "Sum", "Proxy failed exchanges", "Exchanges answered with an error, aborted mid-response or left by their client since the proxy started", "n0").Append(',');
        Meta(sb, "llrp/allocated-per-request", "Last", "Avg", "Allocated B/request", "Bytes allocated per request in the measured window (whole process)", "n1").Append(',');
        Meta(sb, "llrp/cpu-per-request", "Last", "Avg", "CPU us/request", "Process CPU time per request in the measured window (us)", "n2").Append(',');
        Meta(sb, "llrp/cpu-per-request/first-half", "Last", "Avg", "CPU us/request, 1st half", "Process CPU time per request in the first half of the window (us)", "n2").Append(',');
        Meta(sb, "llrp/cpu-per-request/second-half", "Last", "Avg", "CPU us/request, 2nd half", "Process CPU time per request in the second half of the window (us)", "n2").Append(',');
        Meta(sb, "llrp/window", "Last", "Max", "Window (s)", "Seconds the window covers", "n1").Append(',');
        Meta(sb, "jit/methods", "Max", "Max", "JIT methods (all)", "Methods the JIT compiled since the process started", "n0").Append(',');
        Meta(sb, "jit/methods-in-window", "Last", "Max", "JIT methods (window)", "Methods the JIT compiled in the measured window", "n0").Append(',');
        Meta(sb, "jit/methods/first-half", "Last", "Max", "JIT methods, 1st half", "Methods the JIT compiled in the first half of the window", "n0").Append(',');
        Meta(sb, "jit/methods/second-half", "Last", "Max", "JIT methods, 2nd half", "Methods the JIT compiled in the second half of the window", "n0").Append(',');
        Meta(sb, "jit/time-in-window", "Last", "Max", "JIT time (window, ms)", "Time the JIT spent compiling in the measured window (ms, all threads)", "n1").Append(',');
        Meta(sb, "jit/interior-share", "Last", "Max", "JIT share, interior (%)", "JIT time / process CPU time in the window without its first and last interval (%)", "n2");
        return sb.Append("],\"Measurements\":[").ToString();
    }

    private static StringBuilder Meta(StringBuilder sb, string name, string aggregate, string reduce, string shortDescription, string longDescription, string format) =>
        sb.Append(CultureInfo.InvariantCulture,
            $"{{\"Source\":\"llrp\",\"Name\":\"{name}\",\"Aggregate\":\"{aggregate}\",\"Reduce\":\"{reduce}\",\"ShortDescription\":\"{shortDescription}\",\"LongDescription\":\"{longDescription}\",\"Format\":\"{format}\"}}");

    private static StringBuilder Measure(StringBuilder sb, ReadOnlySpan<char> timestamp, string name, double value) =>
        sb.Append(CultureInfo.InvariantCulture, $"{{\"Timestamp\":\"{timestamp}\",\"Name\":\"{name}\",\"Value\":{(double.IsFinite(value) ? value : 0):0.###}}}");

    public void Dispose() => _timer?.Dispose();
}

/// <summary>Cumulative counters at one instant.</summary>
internal readonly record struct Sample(TimeSpan At, long Requests, long AllocatedBytes, TimeSpan Cpu, long JitMethods, TimeSpan JitTime);

/// <summary>Figures between two samples; per-request values are NaN when no request completed.</summary>
internal readonly record struct WindowFigures(
    double Seconds, long Requests, double AllocatedPerRequest, double CpuUsPerRequest,
    double FirstHalfCpuUsPerRequest, double SecondHalfCpuUsPerRequest,
    long JitMethods, long FirstHalfJitMethods, long SecondHalfJitMethods, double JitMilliseconds, double JitInteriorSharePercent)
{
    public static WindowFigures Between(Sample from, Sample mid, Sample to, Sample interiorFrom, Sample interiorTo) => new(
        (to.At - from.At).TotalSeconds,
        to.Requests - from.Requests,
        PerRequest(to.AllocatedBytes - from.AllocatedBytes, to.Requests - from.Requests),
        PerRequest((to.Cpu - from.Cpu).Ticks / (double)TimeSpan.TicksPerMicrosecond, to.Requests - from.Requests),
        PerRequest((mid.Cpu - from.Cpu).Ticks / (double)TimeSpan.TicksPerMicrosecond, mid.Requests - from.Requests),
        PerRequest((to.Cpu - mid.Cpu).Ticks / (double)TimeSpan.TicksPerMicrosecond, to.Requests - mid.Requests),
        to.JitMethods - from.JitMethods, mid.JitMethods - from.JitMethods, to.JitMethods - mid.JitMethods,
        (to.JitTime - from.JitTime).TotalMilliseconds,
        SampleWindow.JitSharePercent(interiorFrom.JitTime, interiorTo.JitTime, interiorFrom.Cpu, interiorTo.Cpu));

    private static double PerRequest(double amount, long requests) => requests > 0 ? amount / requests : double.NaN;
}

/// <summary>
/// The samples and the window over them: the last <c>window</c> of time ending at the last sample whose interval served
/// requests (window zero: from the last sample before the first request to that end).
/// </summary>
internal sealed class WindowSampler(TimeSpan window, int capacity)
{
    private readonly List<Sample> _samples = [];

    public int Count => _samples.Count;

    /// <summary>Adds a sample; returns whether requests were served since the previous one.</summary>
    public bool Add(Sample sample)
    {
        var served = _samples.Count > 0 && sample.Requests > _samples[^1].Requests;
        _samples.Add(sample);
        if (_samples.Count > capacity)
        {
            _samples.RemoveAt(0);
        }
        return served;
    }

    public WindowFigures Window()
    {
        // An interval is busy when it served requests (src/Shared/SampleWindow.cs: the window rule).
        if (!SampleWindow.TryFind(_samples.Count, i => _samples[i].At, i => _samples[i].Requests != _samples[i - 1].Requests,
            window, out var start, out var mid, out var end))
        {
            return default;
        }
        var (from, to) = SampleWindow.Interior(start, end);
        return WindowFigures.Between(_samples[start], _samples[mid], _samples[end], _samples[from], _samples[to]);
    }
}
