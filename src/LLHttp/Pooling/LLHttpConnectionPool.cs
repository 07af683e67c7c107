using System.Net;
using System.Net.Security;
using LLHttp.Transports;

namespace LLHttp.Pooling;

/// <summary>
/// Idle connections to one destination, reused last-in first-out: the most recently used connection is the least
/// likely to have been closed by the origin's keep-alive timeout, and the bottom of the stack ages out.
/// Connections idle longer than <see cref="LLHttpOptions.PooledConnectionIdleTimeout"/> are closed on the next rent or
/// return, and by a background sweep every half timeout so an idle pool does not keep sockets open.
/// There is no cap on connections in use; <see cref="LLHttpOptions.MaxIdleConnections"/> caps the idle ones.
/// </summary>
public sealed class LLHttpConnectionPool : IDisposable
{
    private readonly Func<CancellationToken, ValueTask<LLHttpConnection>> _connect;
    private readonly LLHttpOptions _options;
    private readonly LLHttpConnection[] _idle;
    private readonly ITimer? _sweeper;
    private readonly Lock _lock = new();
    private int _count;
    private bool _disposed;

    public LLHttpConnectionPool(EndPoint endPoint, LLHttpOptions? options = null)
        : this(endPoint, tls: null, options)
    {
    }

    /// <summary>A pool whose new connections run a TLS handshake with <paramref name="tls"/> (null: plain TCP).</summary>
    public LLHttpConnectionPool(EndPoint endPoint, SslClientAuthenticationOptions? tls, LLHttpOptions? options = null)
        : this(ct => LLHttpConnection.ConnectAsync(endPoint, tls, options, ct), options ?? LLHttpOptions.Default)
    {
        ArgumentNullException.ThrowIfNull(endPoint);
    }

    internal LLHttpConnectionPool(Func<CancellationToken, ValueTask<LLHttpConnection>> connect, LLHttpOptions options)
    {
        options.Validate();
        _connect = connect;
        _options = options;
        _idle = new LLHttpConnection[options.MaxIdleConnections];
        TimeSpan idle = options.PooledConnectionIdleTimeout;
        if (idle != Timeout.InfiniteTimeSpan && idle > TimeSpan.Zero)
        {
            TimeSpan period = idle / 2;
            _sweeper = options.TimeProvider.CreateTimer(static s => ((LLHttpConnectionPool)s!).EvictExpired(), this, period, period);
        }
    }

    public int IdleCount
    {
        get
        {
            lock (_lock)
            {
                return _count;
            }
        }
    }

    /// <summary>The most recently returned live idle connection, or a new one.</summary>
    public ValueTask<LLHttpConnection> RentAsync(CancellationToken cancellationToken = default)
    {
        while (true)
        {
            LLHttpConnection? connection;
            lock (_lock)
            {
                ObjectDisposedException.ThrowIf(_disposed, this);
                EvictExpiredLocked();
                connection = _count == 0 ? null : _idle[--_count];
                if (connection is not null)
                {
                    _idle[_count] = null!;
                }
            }

            if (connection is null)
            {
                return _connect(cancellationToken);
            }

            // Readable while idle = closed by the origin or unsolicited bytes: either way unusable.
            if (_options.CheckIdleConnectionOnRent && connection.IsReadableWhileIdle())
            {
                connection.Dispose();
                continue;
            }

            return new ValueTask<LLHttpConnection>(connection);
        }
    }

    /// <summary>
    /// Gives a connection back. It is kept only if <see cref="LLHttpConnection.IsReusable"/> (exchange finished, body read
    /// to the end, no close) and there is room, without its buffers (<see cref="LLHttpConnection.ReleaseIdleBuffers"/>);
    /// otherwise it is closed.
    /// </summary>
    public void Return(LLHttpConnection connection)
    {
        ArgumentNullException.ThrowIfNull(connection);
        if (connection.IsReusable)
        {
            // Before it is visible to the sweep, which may dispose it from another thread.
            connection.ReleaseIdleBuffers();
            lock (_lock)
            {
                if (!_disposed && _count < _idle.Length)
                {
                    _idle[_count++] = connection;
                    return;
                }
            }
        }

        connection.Dispose();
    }

    /// <summary>Closes idle connections older than the idle timeout (also run by the background sweep).</summary>
    public void EvictExpired()
    {
        lock (_lock)
        {
            EvictExpiredLocked();
        }
    }

    private void EvictExpiredLocked()
    {
        TimeSpan limit = _options.PooledConnectionIdleTimeout;
        if (_count == 0 || limit == Timeout.InfiniteTimeSpan)
        {
            return;
        }

        // Returns push newer timestamps on top, so the expired ones are a prefix from the bottom.
        long now = _options.TimeProvider.GetTimestamp();
        int expired = 0;
        while (expired < _count && _options.TimeProvider.GetElapsedTime(_idle[expired].LastUsedTimestamp, now) >= limit)
        {
            _idle[expired].Dispose();
            expired++;
        }

        if (expired != 0)
        {
            Array.Copy(_idle, expired, _idle, 0, _count - expired);
            Array.Clear(_idle, _count - expired, expired);
            _count -= expired;
        }
    }

    public void Dispose()
    {
        _sweeper?.Dispose();
        lock (_lock)
        {
            _disposed = true;
            for (int i = 0; i < _count; i++)
            {
                _idle[i].Dispose();
                _idle[i] = null!;
            }

            _count = 0;
        }
    }
}
