using System.Threading.Tasks.Sources;

namespace LLRP.Http2;

/// <summary>
/// A reusable wake-up for one waiter, allocation-free: <see cref="Set"/> before the wait makes the next wait return at
/// once, several sets before a wait count as one (a waiter re-checks its condition after every wake-up, so a spare one
/// is harmless). The waiter's continuation runs on the thread that calls <see cref="Set"/>, so no set is made while a
/// lock is held.
/// </summary>
internal sealed class AsyncSignal : IValueTaskSource
{
    private const int Idle = 0;
    private const int Signalled = 1;
    private const int Waiting = 2;

    private ManualResetValueTaskSourceCore<bool> _core;
    private int _state;

    public ValueTask WaitAsync()
    {
        if (Interlocked.CompareExchange(ref _state, Idle, Signalled) == Signalled)
        {
            return default;
        }
        _core.Reset();
        if (Interlocked.CompareExchange(ref _state, Waiting, Idle) != Idle)
        {
            // Set between the check and the reset: consumed here.
            Volatile.Write(ref _state, Idle);
            return default;
        }
        return new ValueTask(this, _core.Version);
    }

    public void Set()
    {
        while (true)
        {
            var state = Volatile.Read(ref _state);
            if (state == Signalled)
            {
                return;
            }
            if (state == Idle)
            {
                if (Interlocked.CompareExchange(ref _state, Signalled, Idle) == Idle)
                {
                    return;
                }
                continue;
            }
            if (Interlocked.CompareExchange(ref _state, Idle, Waiting) == Waiting)
            {
                _core.SetResult(true);
                return;
            }
        }
    }

    void IValueTaskSource.GetResult(short token) => _core.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => _core.GetStatus(token);

    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _core.OnCompleted(continuation, state, token, flags);
}
