namespace LLRP.Connections;

/// <summary>
/// The layer a variant adds: send the connection's current request downstream and relay the response into
/// <see cref="ProxyConnection.Response"/>. Reading and validating heads, body de-framing, header policy, client
/// framing, timeouts and error answers are the connection's. One instance per inbound connection.
/// </summary>
internal interface IForwarder : IDisposable
{
    /// <summary>
    /// Completes when the response was written (the connection flushes it). Failures are
    /// <see cref="Errors.ProxyException"/>s, or cancellation of <see cref="ProxyConnection.Aborted"/>.
    /// </summary>
    ValueTask ForwardAsync(ProxyConnection connection);

    /// <summary>
    /// Called by <see cref="ProxyServer"/>'s sweep while the connection waits for its next request, on the timer's
    /// thread and so concurrently with the connection: let go of what an idle connection should not keep.
    /// </summary>
    void OnIdle()
    {
    }
}
