using System.Collections.Concurrent;
using LLRP.Exchanges;

namespace LLRP.Connections;

/// <summary>An exchange slot a front end lends to one stream at a time and keeps between streams (<see cref="IdleSlots{TSlot}"/>).</summary>
internal interface IPooledSlot : IDisposable
{
    /// <summary>The variant's forwarder, kept with the slot between exchanges.</summary>
    IForwarder Forwarder { get; }

    /// <summary>The slot's last exchange ended so that it may serve another.</summary>
    bool Reusable { get; }

    /// <summary>Held by whoever uses the slot: the stream it is lent to, or the deadline sweep for a moment.</summary>
    SlotGate Gate { get; }
}

/// <summary>
/// Who uses a pooled slot now. A stream holds it from the rent to the return; the sweep takes it only when free, so its
/// idle calls never meet an exchange on the same forwarder (neither LLHttp's connection nor a client's state is made for
/// two threads at once), and a rent waits out the sweep's short hold.
/// </summary>
internal sealed class SlotGate
{
    private int _held = 1;

    public bool TryEnter() => Interlocked.CompareExchange(ref _held, 1, 0) == 0;

    public void Enter()
    {
        var spin = new SpinWait();
        while (!TryEnter())
        {
            spin.SpinOnce();
        }
    }

    public void Exit() => Volatile.Write(ref _held, 0);
}

/// <summary>What the deadline sweep calls on every front end's idle slots (<see cref="DeadlineSweep.UseIdleSlots"/>).</summary>
internal interface IIdleForwarders
{
    /// <summary>Each idle forwarder's <see cref="IForwarder.OnIdle"/>, or with <paramref name="release"/> its <see cref="IForwarder.ReleaseIdle"/>.</summary>
    void ForEachIdle(bool release);
}

/// <summary>
/// The idle exchange slots of a front end that lends one per stream (the proxy's HTTP/2 front end, Kestrel's HTTP layer):
/// a slot and its forwarder (with llhttp its downstream connection) serve stream after stream, and while idle they get
/// the sweep's idle calls as a raw connection's forwarder does between requests.
/// </summary>
internal sealed class IdleSlots<TSlot> : IIdleForwarders, IDisposable
    where TSlot : class, IPooledSlot
{
    /// <summary>
    /// The most idle slots kept: 1,024, the exchanges in flight the buffer pools are sized for (ProxyBuffers). A slot holds
    /// a forwarder (and with llhttp its downstream connection), so beyond a burst's peak they are disposed, not kept.
    /// </summary>
    internal const int MaxIdleSlots = 1024;

    private readonly ConcurrentQueue<TSlot> _idle = new();
    private volatile bool _disposed;

    public IdleSlots(ProxyServer server) => server.Sweep.UseIdleSlots(this);

    /// <summary>An idle slot, now held by the caller; false when none is idle (the caller makes one: a new slot is held).</summary>
    public bool TryRent(out TSlot slot)
    {
        if (!_idle.TryDequeue(out slot!))
        {
            return false;
        }
        slot.Gate.Enter();
        return true;
    }

    /// <summary>A slot whose stream ended: kept for the next unless it failed, the pool is full or the proxy is stopping.</summary>
    public void Return(TSlot slot)
    {
        if (slot.Reusable && !_disposed && _idle.Count < MaxIdleSlots)
        {
            slot.Gate.Exit();
            _idle.Enqueue(slot);
            return;
        }
        slot.Dispose();
    }

    public void ForEachIdle(bool release)
    {
        // The queue's enumeration is a snapshot: a slot in it may have been rented since, and then its gate is held.
        foreach (var slot in _idle)
        {
            if (!slot.Gate.TryEnter())
            {
                continue;
            }
            try
            {
                if (release)
                {
                    slot.Forwarder.ReleaseIdle();
                }
                else
                {
                    slot.Forwarder.OnIdle();
                }
            }
            finally
            {
                slot.Gate.Exit();
            }
        }
    }

    public void Dispose()
    {
        _disposed = true;
        while (_idle.TryDequeue(out var slot))
        {
            slot.Gate.Enter();
            slot.Dispose();
        }
    }
}
