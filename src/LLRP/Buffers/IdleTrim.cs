namespace LLRP.Buffers;

/// <summary>
/// Decides when an idle proxy gives back the memory a burst left: the arrays <see cref="ProxyBuffers"/> kept for the
/// exchanges that were in flight at once, and the heap the GC keeps after it (garbage no collection has reclaimed,
/// since nothing allocates while everything is idle, and the holes and free regions the burst left). At 10,000 client
/// connections that opened with one request each that was ~2.6 KiB per idle connection of the proxy's RSS
/// (docs/methodology.md, "Decisions and their evidence"). The deadline sweep calls <see cref="Observe"/>; when it answers
/// true the caller trims the pools and runs one compacting collection (<see cref="TrimNow"/>).
/// </summary>
/// <param name="idleAfter">How long nothing must have happened (no connection opened, no request started or
/// answered, no exchange in flight) before trimming: idleTrimAfter.</param>
/// <param name="minAllocatedBytes">Bytes allocated since the last trim below which a trim is not worth a full
/// collection: <see cref="DefaultMinAllocatedBytes"/>.</param>
internal sealed class IdleTrim(TimeSpan idleAfter, long minAllocatedBytes)
{
    /// <summary>
    /// 16 MiB: a burst that allocated less leaves at most that much garbage and pooled arrays (under 2 KiB per
    /// connection even at 10,000 connections), while a full compacting collection of a heap of ~100 MB stops the
    /// process for tens of milliseconds. A process that allocates nothing per request (llhttp) reaches it only through
    /// connection churn.
    /// </summary>
    public const long DefaultMinAllocatedBytes = 16L * 1024 * 1024;

    private readonly long _idleAfterMs = (long)idleAfter.TotalMilliseconds;
    private long _lastActivity = -1;
    private long _idleSince;
    private long _allocatedAtTrim;

    /// <summary>
    /// One look at the proxy: <paramref name="activity"/> is any counter that moves with connections and requests,
    /// <paramref name="busy"/> whether an exchange is in flight. True once per idle period, when it has lasted
    /// <c>idleAfter</c> and at least <c>minAllocatedBytes</c> were allocated since the last trim.
    /// </summary>
    public bool Observe(long nowMs, long activity, bool busy, long allocatedBytes)
    {
        if (_idleAfterMs <= 0)
        {
            return false;
        }
        if (busy || activity != _lastActivity)
        {
            _lastActivity = activity;
            _idleSince = nowMs;
            return false;
        }
        if (nowMs - _idleSince < _idleAfterMs || allocatedBytes - _allocatedAtTrim < minAllocatedBytes)
        {
            return false;
        }
        _allocatedAtTrim = allocatedBytes;
        return true;
    }

    /// <summary>
    /// Drops the pools' arrays, then one blocking compacting collection of every generation that also gives the freed
    /// regions back to the operating system (GCCollectionMode.Aggressive).
    /// </summary>
    public static void TrimNow()
    {
        ProxyBuffers.Trim();
        GC.Collect(GC.MaxGeneration, GCCollectionMode.Aggressive, blocking: true, compacting: true);
    }
}
