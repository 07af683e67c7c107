namespace LLHttp;

/// <summary>
/// One reusable CancellationTokenSource per connection carries both the timeouts and the caller's token, so no request
/// allocates a CTS or a linked CTS. I/O always gets <see cref="Token"/>; the caller's token is linked and the timer armed
/// only once an operation actually goes asynchronous, and <see cref="Exit"/> disarms with
/// <see cref="CancellationTokenSource.TryReset"/>. Only a source that fired (a timeout or a cancellation, both of which
/// abort the connection) is replaced.
/// </summary>
internal sealed class TimeoutGate : IDisposable
{
    private static readonly Action<object?> s_cancel = static state => ((CancellationTokenSource)state!).Cancel();

    private CancellationTokenSource _cts = new();
    private CancellationTokenRegistration _callerRegistration;
    private bool _entered;
    private bool _disposed;

    public CancellationToken Token => _cts.Token;

    /// <summary>Links <paramref name="callerToken"/> and starts <paramref name="timeout"/>, once per operation.</summary>
    public void Enter(TimeSpan timeout, CancellationToken callerToken)
    {
        if (_entered)
        {
            return;
        }

        _entered = true;
        if (callerToken.CanBeCanceled)
        {
            _callerRegistration = callerToken.UnsafeRegister(s_cancel, _cts);
        }

        if (timeout != Timeout.InfiniteTimeSpan)
        {
            _cts.CancelAfter(timeout);
        }
    }

    public void Exit()
    {
        // Dispose may race with an operation it just aborted; that operation's Exit has nothing left to reset.
        if (!_entered || _disposed)
        {
            return;
        }

        _entered = false;
        _callerRegistration.Dispose();
        _callerRegistration = default;
        if (!_cts.TryReset())
        {
            _cts.Dispose();
            _cts = new CancellationTokenSource();
        }
    }

    public void Dispose()
    {
        _disposed = true;
        _callerRegistration.Dispose();
        _cts.Dispose();
    }
}
