using System.Threading.Tasks.Sources;

namespace LLHttp;

/// <summary>
/// The completion of one kind of operation on one connection, reused by every exchange. Unlike pooled async state
/// machine boxes, whose per-thread caches miss whenever the caller's thread differs from the completing thread (a
/// blocked caller, or a continuation that hops), this never allocates.
/// </summary>
internal sealed class ReusableValueTaskSource<T> : IValueTaskSource<T>
{
    private ManualResetValueTaskSourceCore<T> _core;

    /// <param name="runContinuationsAsynchronously">
    /// True when it is completed under a lock (HTTP/2's read loop): the awaiter's continuation must not run there.
    /// </param>
    public ReusableValueTaskSource(bool runContinuationsAsynchronously = false)
        => _core.RunContinuationsAsynchronously = runContinuationsAsynchronously;

    public short Reset()
    {
        _core.Reset();
        return _core.Version;
    }

    public void SetResult(T result) => _core.SetResult(result);

    public void SetException(Exception exception) => _core.SetException(exception);

    public T GetResult(short token) => _core.GetResult(token);

    public ValueTaskSourceStatus GetStatus(short token) => _core.GetStatus(token);

    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _core.OnCompleted(continuation, state, token, flags);
}
