using LLRP.Buffers;
using Microsoft.Extensions.Logging;

namespace LLRP.Connections;

/// <summary>
/// The one thread that keeps the proxy's time: every <see cref="Interval"/> it has what is in flight act on its
/// deadlines (<see cref="InFlightRegistry.CheckDeadlines"/>), gives the front ends' idle forwarders their idle calls
/// (<see cref="UseIdleSlots"/>), and once the proxy has been idle after a burst, has what is kept between exchanges
/// given back and the heap trimmed (<see cref="IdleTrim"/>).
/// </summary>
internal sealed class DeadlineSweep : IDisposable
{
    /// <summary>
    /// How often connections' deadlines are checked, so a timeout fires at most this much after its deadline (a 1 s
    /// downstreamResponseTimeout answers 504 within about 1.05 s). One pass over the open connections 20 times a second
    /// costs far less than arming a timer per wait, which would also allocate or take a lock per request.
    /// </summary>
    internal static readonly TimeSpan Interval = TimeSpan.FromMilliseconds(50);

    private readonly InFlightRegistry _inFlight;
    private readonly ProxyCounters _counters;
    private readonly IdleTrim _idleTrim;
    private readonly Thread _thread;
    private volatile bool _disposed;
    private IIdleForwarders[] _idleSlots = [];
    private ILogger? _log;

    public DeadlineSweep(InFlightRegistry inFlight, ProxyCounters counters, TimeSpan idleTrimAfter)
    {
        _inFlight = inFlight;
        _counters = counters;
        _idleTrim = new IdleTrim(idleTrimAfter, IdleTrim.DefaultMinAllocatedBytes);
        // A thread of its own rather than a Timer: a timer's callback runs on the thread pool, and each of the 20 a second
        // wakes an idle pool worker that then spins on the proxy's core before it sleeps again.
        _thread = new Thread(static state => ((DeadlineSweep)state!).Loop()) { IsBackground = true, Name = "LLRP deadline sweep" };
        _thread.Start(this);
    }

    /// <summary>Where a failed pass is logged (set once the host's logging exists; tests without it log nothing).</summary>
    public void UseLog(ILogger log) => _log = log;

    /// <summary>
    /// A front end that keeps forwarders between exchanges outside a raw connection (the pooled exchange slots of the
    /// HTTP/2 front end and of Kestrel's HTTP layer) names them here: the sweep gives each idle one the calls a raw
    /// connection gives its forwarder while it waits for the next request (<see cref="Exchanges.IForwarder.OnIdle"/>,
    /// <see cref="Exchanges.IForwarder.ReleaseIdle"/>).
    /// </summary>
    public void UseIdleSlots(IIdleForwarders slots)
    {
        lock (_idleTrim)
        {
            _idleSlots = [.. _idleSlots, slots];
        }
    }

    /// <summary>
    /// One pass of the sweep per interval. An exception thrown out of the thread ends the process, and with it every
    /// connection: a failed pass is logged, and the next pass runs as usual.
    /// </summary>
    private void Loop()
    {
        while (true)
        {
            Thread.Sleep(Interval);
            if (_disposed)
            {
                return;
            }
            SweepOnce();
        }
    }

    private void SweepOnce()
    {
        try
        {
            Sweep();
        }
        catch (Exception e)
        {
            _log?.LogCritical(e, "The deadline sweep failed; it runs again at its next interval.");
        }
    }

    private void Sweep()
    {
        var now = Environment.TickCount64;
        var busy = _inFlight.CheckDeadlines(now);
        var pooled = Volatile.Read(ref _idleSlots);
        foreach (var slots in pooled)
        {
            slots.ForEachIdle(release: false);
        }
        // One look at a time: UseIdleSlots takes the same lock, and a pass that finds it held skips the look.
        if (Monitor.TryEnter(_idleTrim))
        {
            try
            {
                if (_idleTrim.Observe(now, _counters.Activity, busy, GC.GetTotalAllocatedBytes()))
                {
                    // What idle connections keep between exchanges first, so that the collection reclaims it too.
                    _inFlight.ReleaseIdle();
                    foreach (var slots in pooled)
                    {
                        slots.ForEachIdle(release: true);
                    }
                    IdleTrim.TrimNow();
                }
            }
            finally
            {
                Monitor.Exit(_idleTrim);
            }
        }
    }

    /// <summary>The sweep ends at its next wake-up.</summary>
    public void Dispose() => _disposed = true;
}
