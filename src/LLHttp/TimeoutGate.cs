namespace LLHttp;

/// <summary>
/// One reusable CancellationTokenSource per connection carries both the timeouts and the caller's token, so no request
/// allocates a CTS or a linked CTS. I/O gets <see cref="TokenFor"/>; the caller's token is linked and the timer armed
/// only once an operation actually goes asynchronous, and <see cref="Exit"/> disarms with
/// <see cref="CancellationTokenSource.TryReset"/>. Only a source that fired (a timeout or a cancellation, both of which
/// abort the connection) is replaced. An operation without a timeout gets the caller's token itself: there is no timer
/// to arm, so linking would only add a registration to make and undo per wait.
/// </summary>
internal sealed class TimeoutGate : IDisposable
{
    private static readonly Action<object?> s_cancel = static state => ((CancellationTokenSource)state!).Cancel();

    private CancellationTokenSource _cts = new();
    private CancellationTokenRegistration _callerRegistration;
    private bool _entered;
    private bool _disposed;

    /// <summary>The token for an operation bounded by <paramref name="timeout"/> on behalf of <paramref name="callerToken"/>.</summary>
    public CancellationToken TokenFor(TimeSpan timeout, CancellationToken callerToken)
        => timeout == Timeout.InfiniteTimeSpan ? callerToken : _cts.Token;

    /// <summary>
    /// Links <paramref name="callerToken"/> and starts <paramref name="timeout"/>, once per operation; nothing to do
    /// without a timeout (the operation holds the caller's token, <see cref="TokenFor"/>).
    /// </summary>
    public void Enter(TimeSpan timeout, CancellationToken callerToken)
    {
        if (_entered || timeout == Timeout.InfiniteTimeSpan)
        {
            return;
        }

        _entered = true;
        if (callerToken.CanBeCanceled)
        {
            _callerRegistration = callerToken.UnsafeRegister(s_cancel, _cts);
        }

        _cts.CancelAfter(timeout);
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
