using System.Net;
using System.Net.Security;

namespace LLHttp.Http2;

/// <summary>
/// HTTP/2 connections to one downstream: a stream goes on the first connection with room (below the server's
/// SETTINGS_MAX_CONCURRENT_STREAMS); when every one is full, another is opened, up to
/// <see cref="MaxConnections"/>; beyond, the caller waits for a stream to end. A connection that received GOAWAY or
/// failed leaves the pool (its streams in progress finish on it). Taking a stream allocates nothing when a connection
/// has room.
/// </summary>
public sealed class LLHttp2ConnectionPool : IDisposable
{
    /// <summary>
    /// Connections per destination by default. Ours: with Kestrel's 100 streams per connection, 4 carry 400 requests
    /// at once; more streams on fewer connections is HTTP/2's point (RFC 9113 §9.1 asks clients not to open more than
    /// one without need).
    /// </summary>
    public const int DefaultMaxConnections = 4;

    private readonly EndPoint _endPoint;
    private readonly SslClientAuthenticationOptions? _tls;
    private readonly LLHttpOptions _options;
    private readonly Lock _sync = new();
    private readonly List<LLHttp2Connection> _connections = [];
    private readonly Action _onStreamReleased;
    private TaskCompletionSource? _room;
    private int _connecting;
    private bool _disposed;

    public LLHttp2ConnectionPool(EndPoint endPoint, SslClientAuthenticationOptions? tls = null, LLHttpOptions? options = null, int maxConnections = DefaultMaxConnections)
    {
        ArgumentNullException.ThrowIfNull(endPoint);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxConnections, 1);
        _endPoint = endPoint;
        _tls = tls;
        _options = options ?? LLHttpOptions.Default;
        _options.Validate();
        MaxConnections = maxConnections;
        _onStreamReleased = () => Interlocked.Exchange(ref _room, null)?.TrySetResult();
    }

    public int MaxConnections { get; }

    /// <summary>Connections in the pool (usable, or with room checked at the next take).</summary>
    public int ConnectionCount
    {
        get
        {
            lock (_sync)
            {
                return _connections.Count;
            }
        }
    }

    /// <summary>
    /// A stream on a connection with room, a new connection when all are full (connect errors as
    /// <see cref="LLHttpConnection.ConnectAsync(EndPoint, LLHttpOptions?, CancellationToken)"/> reports them), or, at
    /// <see cref="MaxConnections"/>, the first stream freed. Give it back with <see cref="LLHttp2Stream.Dispose"/>.
    /// </summary>
    public ValueTask<LLHttp2Stream> OpenStreamAsync(CancellationToken cancellationToken = default)
        => TryOpenExisting(out var stream, out _, reserveConnect: false) ? new ValueTask<LLHttp2Stream>(stream) : OpenStreamSlowAsync(cancellationToken);

    public void Dispose()
    {
        LLHttp2Connection[] connections;
        lock (_sync)
        {
            _disposed = true;
            connections = [.. _connections];
            _connections.Clear();
        }

        foreach (var connection in connections)
        {
            connection.Dispose();
        }

        Interlocked.Exchange(ref _room, null)?.TrySetResult();
    }

    private async ValueTask<LLHttp2Stream> OpenStreamSlowAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            // One signal shared by every waiter, armed before looking, so a stream freed between the look and the wait
            // is not missed; freeing one wakes them all and each looks again.
            var room = Volatile.Read(ref _room);
            if (room is null)
            {
                var fresh = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                room = Interlocked.CompareExchange(ref _room, fresh, null) ?? fresh;
            }

            if (TryOpenExisting(out var stream, out bool mayConnect, reserveConnect: true))
            {
                return stream;
            }

            if (!mayConnect)
            {
                await room.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
                continue;
            }

            LLHttp2Connection connection;
            try
            {
                connection = await LLHttp2Connection.ConnectAsync(_endPoint, _tls, _options, cancellationToken).ConfigureAwait(false);
            }
            catch
            {
                lock (_sync)
                {
                    _connecting--;
                }

                // Another caller waiting at the cap may connect in its place.
                _onStreamReleased();
                throw;
            }

            connection.StreamReleased = _onStreamReleased;
            bool taken;
            lock (_sync)
            {
                _connecting--;
                if (_disposed)
                {
                    connection.Dispose();
                    throw new ObjectDisposedException(nameof(LLHttp2ConnectionPool));
                }

                _connections.Add(connection);
                taken = connection.TryOpenStream(out stream);
            }

            // Callers that waited while this connection was being opened may fit on it too.
            _onStreamReleased();
            if (taken)
            {
                return stream!;
            }
        }
    }

    /// <summary>A stream on a connection with room; otherwise whether another connection may be opened (counted as connecting when <paramref name="reserveConnect"/>).</summary>
    private bool TryOpenExisting([NotNullWhen(true)] out LLHttp2Stream? stream, out bool mayConnect, bool reserveConnect)
    {
        lock (_sync)
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            for (int i = _connections.Count - 1; i >= 0; i--)
            {
                var connection = _connections[i];
                if (!connection.IsUsable)
                {
                    // GOAWAY or failed: its streams in progress finish on it, and it closes itself after the last.
                    _connections.RemoveAt(i);
                }
            }

            foreach (var connection in _connections)
            {
                if (connection.TryOpenStream(out stream))
                {
                    mayConnect = false;
                    return true;
                }
            }

            stream = null;
            mayConnect = _connections.Count + _connecting < MaxConnections;
            if (mayConnect && reserveConnect)
            {
                _connecting++;
            }

            return false;
        }
    }
}
