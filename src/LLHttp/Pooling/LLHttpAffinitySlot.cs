using System.Net;

namespace LLHttp.Pooling;

/// <summary>
/// Affinity mode: one downstream connection held for one inbound connection (LLRP's original model), replaced whenever
/// it becomes unusable. <see cref="GetAsync"/> and <see cref="Return"/> come from the inbound connection's one caller;
/// <see cref="EvictExpired"/> may run concurrently on a timer thread, so an idle client connection does not pin an idle
/// downstream connection for longer than <see cref="LLHttpOptions.PooledConnectionIdleTimeout"/>.
/// With an idle pool, a connection left idle for the slot's share time moves to that pool (shared by every slot to the
/// same destination, capped at <see cref="LLHttpOptions.MaxIdleConnections"/>), and a slot without a connection rents
/// from it before connecting: a busy client connection keeps its downstream connection, while thousands of idle ones
/// pin none.
/// </summary>
public sealed class LLHttpAffinitySlot : IDisposable
{
    // How a slot without a connection gets one; null means renting from the idle pool (which connects when it has
    // none), so a slot per client connection holds no delegate of its own for it.
    private readonly Func<CancellationToken, ValueTask<LLHttpConnection>>? _connect;
    private readonly LLHttpOptions _options;
    private readonly LLHttpConnectionPool? _idlePool;
    private readonly TimeSpan _shareAfter;
    // The connection between exchanges: set by Return, taken (atomically) by GetAsync or by EvictExpired.
    private LLHttpConnection? _idle;
    // The connection handed out by GetAsync and not returned yet (only the owner's caller touches it).
    private LLHttpConnection? _inUse;

    public LLHttpAffinitySlot(EndPoint endPoint, LLHttpOptions? options = null)
        : this(ct => LLHttpConnection.ConnectAsync(endPoint, options, ct), options ?? LLHttpOptions.Default)
    {
        ArgumentNullException.ThrowIfNull(endPoint);
    }

    /// <summary>
    /// A slot that gives its connection to <paramref name="idlePool"/> (a pool to the same destination) once it has
    /// been idle for <paramref name="shareAfter"/>, and rents from that pool when it has none.
    /// </summary>
    public LLHttpAffinitySlot(LLHttpConnectionPool idlePool, TimeSpan shareAfter, LLHttpOptions? options = null)
        : this(connect: null, options ?? LLHttpOptions.Default, idlePool, shareAfter)
    {
    }

    internal LLHttpAffinitySlot(
        Func<CancellationToken, ValueTask<LLHttpConnection>>? connect, LLHttpOptions options, LLHttpConnectionPool? idlePool = null, TimeSpan shareAfter = default)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(shareAfter, TimeSpan.Zero);
        if (connect is null && idlePool is null)
        {
            throw new ArgumentException("A slot connects through a delegate or rents from an idle pool.", nameof(connect));
        }
        _connect = connect;
        _options = options;
        _idlePool = idlePool;
        _shareAfter = shareAfter;
    }

    /// <summary>Whether an idle connection is held (for tests and diagnostics).</summary>
    public bool HoldsIdleConnection => Volatile.Read(ref _idle) is not null;

    /// <summary>
    /// The held connection when it is reusable, not idle past the pool idle timeout and not closed by the origin;
    /// otherwise a new one (the old one is closed). Give it back with <see cref="Return"/> after a finished exchange.
    /// </summary>
    public ValueTask<LLHttpConnection> GetAsync(CancellationToken cancellationToken = default)
    {
        // A caller that never returns the connection gets it again while it stays usable (checked below).
        LLHttpConnection? held = _inUse ?? Interlocked.Exchange(ref _idle, null);
        _inUse = null;
        if (held is not null)
        {
            if (held.IsReusable
                && !IsExpired(held, _options.TimeProvider.GetTimestamp())
                && !(_options.CheckIdleConnectionOnRent && held.IsReadableWhileIdle()))
            {
                _inUse = held;
                return new ValueTask<LLHttpConnection>(held);
            }

            held.Dispose();
        }

        return ConnectAsync(cancellationToken);
    }

    /// <summary>
    /// Gives back the connection <see cref="GetAsync"/> handed out once its exchange finished: kept without its buffers
    /// (<see cref="LLHttpConnection.ReleaseIdleBuffers"/>) if reusable, closed otherwise.
    /// </summary>
    public void Return(LLHttpConnection connection)
    {
        ArgumentNullException.ThrowIfNull(connection);
        if (!ReferenceEquals(connection, _inUse))
        {
            ThrowHelper.ThrowInvalidOperation("The connection was not handed out by this slot.");
        }

        _inUse = null;
        if (!connection.IsReusable)
        {
            connection.Dispose();
            return;
        }

        // Before it is visible to EvictExpired, which may dispose it from another thread.
        connection.ReleaseIdleBuffers();
        Volatile.Write(ref _idle, connection);
    }

    /// <summary>
    /// The connection handed out leaves the slot for good without being closed: its caller owns it (a connection that
    /// switched protocols, which is never reused). The slot connects anew for its next exchange.
    /// </summary>
    public void Detach(LLHttpConnection connection)
    {
        ArgumentNullException.ThrowIfNull(connection);
        if (!ReferenceEquals(connection, _inUse))
        {
            ThrowHelper.ThrowInvalidOperation("The connection was not handed out by this slot.");
        }

        _inUse = null;
    }

    /// <summary>
    /// Gives the held connection to the idle pool once idle for the share time, or closes it once idle for
    /// <see cref="LLHttpOptions.PooledConnectionIdleTimeout"/> (without an idle pool). The owner calls it periodically
    /// while its client is idle (LLRP: from its deadline sweep); safe beside GetAsync/Return.
    /// </summary>
    public void EvictExpired()
    {
        LLHttpConnection? held = Volatile.Read(ref _idle);
        if (held is null)
        {
            return;
        }

        long now = _options.TimeProvider.GetTimestamp();
        bool share = _idlePool is not null && _options.TimeProvider.GetElapsedTime(held.LastUsedTimestamp, now) >= _shareAfter;
        if ((share || IsExpired(held, now)) && Interlocked.CompareExchange(ref _idle, null, held) == held)
        {
            if (share)
            {
                // The pool keeps it while there is room and closes it after its idle timeout.
                _idlePool!.Return(held);
            }
            else
            {
                held.Dispose();
            }
        }
    }

    /// <summary>
    /// Gives the held idle connection to the idle pool now, without waiting for the share time: the owner's memory trim
    /// (LLRP's idle trim). Without an idle pool the connection stays (its idle timeout still closes it). Safe beside
    /// GetAsync/Return.
    /// </summary>
    public void ShareIdle()
    {
        LLHttpConnection? held = Volatile.Read(ref _idle);
        if (held is not null && _idlePool is not null && Interlocked.CompareExchange(ref _idle, null, held) == held)
        {
            _idlePool.Return(held);
        }
    }

    private bool IsExpired(LLHttpConnection connection, long now)
        => _options.PooledConnectionIdleTimeout != Timeout.InfiniteTimeSpan
        && _options.TimeProvider.GetElapsedTime(connection.LastUsedTimestamp, now) >= _options.PooledConnectionIdleTimeout;

    private async ValueTask<LLHttpConnection> ConnectAsync(CancellationToken cancellationToken)
    {
        LLHttpConnection connection = await (_connect is { } connect ? connect(cancellationToken) : _idlePool!.RentAsync(cancellationToken))
            .ConfigureAwait(false);
        _inUse = connection;
        return connection;
    }

    /// <summary>Closes the slot: an idle connection goes to the idle pool (if any), one still in use is closed.</summary>
    public void Dispose()
    {
        LLHttpConnection? idle = Interlocked.Exchange(ref _idle, null);
        if (idle is not null && _idlePool is not null)
        {
            _idlePool.Return(idle);
        }
        else
        {
            idle?.Dispose();
        }

        _inUse?.Dispose();
        _inUse = null;
    }
}
