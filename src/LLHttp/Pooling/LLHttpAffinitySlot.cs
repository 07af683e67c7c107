using System.Net;

namespace LLHttp.Pooling;

/// <summary>
/// Affinity mode: one upstream connection held for one inbound connection (LLRP's original model), replaced whenever
/// it becomes unusable. Not thread-safe, like the inbound connection that owns it.
/// </summary>
public sealed class LLHttpAffinitySlot : IDisposable
{
    private readonly Func<CancellationToken, ValueTask<LLHttpConnection>> _connect;
    private readonly LLHttpOptions _options;
    private LLHttpConnection? _connection;

    public LLHttpAffinitySlot(EndPoint endPoint, LLHttpOptions? options = null)
        : this(ct => LLHttpConnection.ConnectAsync(endPoint, options, ct), options ?? LLHttpOptions.Default)
    {
        ArgumentNullException.ThrowIfNull(endPoint);
    }

    internal LLHttpAffinitySlot(Func<CancellationToken, ValueTask<LLHttpConnection>> connect, LLHttpOptions options)
    {
        _connect = connect;
        _options = options;
    }

    /// <summary>
    /// The held connection when it is reusable, not idle past the pool idle timeout and not closed by the origin;
    /// otherwise a new one (the old one is closed).
    /// </summary>
    public ValueTask<LLHttpConnection> GetAsync(CancellationToken cancellationToken = default)
    {
        LLHttpConnection? held = _connection;
        if (held is not null)
        {
            if (held.IsReusable
                && _options.TimeProvider.GetElapsedTime(held.LastUsedTimestamp) < _options.PooledConnectionIdleTimeout
                && !(_options.CheckIdleConnectionOnRent && held.IsReadableWhileIdle()))
            {
                return new ValueTask<LLHttpConnection>(held);
            }

            held.Dispose();
            _connection = null;
        }

        return ConnectAsync(cancellationToken);
    }

    private async ValueTask<LLHttpConnection> ConnectAsync(CancellationToken cancellationToken)
    {
        LLHttpConnection connection = await _connect(cancellationToken).ConfigureAwait(false);
        _connection = connection;
        return connection;
    }

    public void Dispose()
    {
        _connection?.Dispose();
        _connection = null;
    }
}
