namespace LLRP.Transport;

/// <summary>
/// A connection feature of the epoll transport: one callback for the moment the client's side closes (its FIN, a reset,
/// or the connection's end), what <see cref="Microsoft.AspNetCore.Connections.ConnectionContext.ConnectionClosed"/>
/// reports, without a token. A registration on that token gives its source a registration table and a node that stay
/// for the connection's life (some 150 B, with the source itself); an idle connection has no use for them.
/// </summary>
internal interface IClientClosedFeature
{
    /// <summary>
    /// Calls <paramref name="callback"/> with <paramref name="state"/> once, when the client's side closes, on the
    /// thread pool (or on the caller's thread at once if it has closed already). One callback per connection.
    /// </summary>
    void OnClientClosed(Action<object?> callback, object? state);
}
