using System.Threading.Tasks.Sources;

namespace LLRP.Forwarding;

/// <summary>
/// The two reusable hand-offs between a connection's request loop and a forwarder's long-lived exchange loop:
/// "an exchange may start" (or "stop": the connection ended) and "the exchange completed" (or failed). Each is a
/// <see cref="ManualResetValueTaskSourceCore{TResult}"/> reset when its result is taken, so its version makes every
/// ValueTask handed out valid for exactly one exchange and no exchange allocates. Continuations run synchronously (the
/// core's default): a hand-off adds no thread hop. Exactly one exchange is in flight at a time, which is what makes
/// reuse safe: the connection starts the next one only after it took the previous one's result.
/// </summary>
internal sealed class ExchangeSignals : IValueTaskSource<bool>, IValueTaskSource
{
    private ManualResetValueTaskSourceCore<bool> _start;
    private ManualResetValueTaskSourceCore<bool> _completed;

    /// <summary>The connection: start an exchange; the returned ValueTask completes (or fails) with it.</summary>
    public ValueTask Start()
    {
        _start.SetResult(true);
        return new ValueTask(this, _completed.Version);
    }

    /// <summary>The connection ended (no exchange is in flight): the exchange loop's next wait returns false.</summary>
    public void Stop() => _start.SetResult(false);

    /// <summary>The exchange loop: true when an exchange should start, false when the loop should end.</summary>
    public ValueTask<bool> WaitForStartAsync() => new(this, _start.Version);

    /// <summary>The exchange loop: the exchange is over; <paramref name="failure"/> is what the connection's await throws.</summary>
    public void Complete(Exception? failure)
    {
        if (failure is null)
        {
            _completed.SetResult(true);
        }
        else
        {
            _completed.SetException(failure);
        }
    }

    bool IValueTaskSource<bool>.GetResult(short token)
    {
        try
        {
            return _start.GetResult(token);
        }
        finally
        {
            _start.Reset();
        }
    }

    ValueTaskSourceStatus IValueTaskSource<bool>.GetStatus(short token) => _start.GetStatus(token);

    void IValueTaskSource<bool>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _start.OnCompleted(continuation, state, token, flags);

    void IValueTaskSource.GetResult(short token)
    {
        try
        {
            _completed.GetResult(token);
        }
        finally
        {
            _completed.Reset();
        }
    }

    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => _completed.GetStatus(token);

    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _completed.OnCompleted(continuation, state, token, flags);
}
