using System.IO.Pipelines;
using LLRP.Buffers;
using LLRP.Errors;
using LLRP.Exchanges;
using Microsoft.AspNetCore.Connections;

namespace LLRP.Connections;

/// <summary>
/// A client and a downstream connection joined after a 101 (RFC 9110 §7.8): opaque bytes both ways until either side
/// ends. The client end is a connection, or an HTTP/2 stream after an extended CONNECT (RFC 8441), <see cref="ITunnelClient"/>.
/// Each direction's end of stream is carried to the other as a half-close where the transport can (TCP
/// shutdown(SHUT_WR), TLS close_notify, END_STREAM), and the other direction goes on until it ends too; where it cannot, the
/// tunnel ends both ways then, as nginx ends an upgraded connection at either side's close. A reset or failed read or
/// write on either side ends both at once, the other side dropped. Nothing is allocated per message: client bytes go
/// from the input pipe's own buffers straight to the downstream socket, downstream bytes through one pooled buffer.
/// </summary>
/// <remarks>
/// Idle time is kept by the proxy's one deadline sweep (<see cref="Check"/>), as every other timeout: each transfer
/// restarts the deadline with one volatile write, no timer is armed.
/// </remarks>
internal sealed class Tunnel
{
    /// <summary>
    /// The buffer downstream bytes pass through on their way to the client. A tunnel holds it for its whole life, also
    /// while idle (a WebSocket waits for messages), so it is a quarter of a body buffer: 16 KiB, the most plaintext one
    /// TLS record carries (RFC 8446 §5.1), so a TLS downstream's reads fill it whole.
    /// </summary>
    internal const int BufferLength = 16 * 1024;

    private readonly ITunnelClient _client;
    private readonly PipeReader _input;
    private readonly PipeWriter _output;
    private readonly ITunnelDownstream _downstream;
    private readonly long _idleMs;
    private readonly TunnelCounters _counters;
    // Ends both directions' waits: the idle timeout, a stop, a failure, or an end of stream that cannot be half-closed.
    private readonly CancellationTokenSource _stop = new();
    private long _idleDeadline;
    // How the tunnel ended, plus one (0: not yet): the first end decides.
    private int _end;
    private long _toDownstream;
    private long _toClient;

    public Tunnel(ITunnelClient client, ITunnelDownstream downstream, TimeSpan idleTimeout, TunnelCounters counters)
    {
        _client = client;
        _input = client.Input;
        _output = client.Output;
        _downstream = downstream;
        _idleMs = (long)idleTimeout.TotalMilliseconds;
        _counters = counters;
        // Armed before the owner publishes the tunnel to the deadline sweep: a deadline of zero would read as long
        // expired and end a tunnel that has not started yet.
        Touch();
    }

    /// <summary>
    /// Copies both ways until both have ended, then closes the downstream connection; returns how it ended. After
    /// <see cref="TunnelEnd.Error"/> the client end was aborted; otherwise it may close gracefully.
    /// </summary>
    public async Task<TunnelEnd> RunAsync()
    {
        _counters.Opened();
        try
        {
            var toDownstream = ClientToDownstreamAsync();
            await DownstreamToClientAsync();
            await toDownstream;
        }
        finally
        {
            var end = Outcome;
            _counters.Ended(end, _toDownstream, _toClient);
            if (end is TunnelEnd.Error)
            {
                _downstream.Abort();
                _client.Abort();
            }
            _downstream.Dispose();
            _stop.Dispose();
        }
        return Outcome;
    }

    /// <summary>Whether something has decided how the tunnel ends (the sweep, a stop, either direction).</summary>
    internal bool HasEnded => Volatile.Read(ref _end) != 0;

    // Every way out of a direction records an end first; none recorded would be a bug, counted as an error.
    private TunnelEnd Outcome => Volatile.Read(ref _end) is > 0 and var end ? (TunnelEnd)(end - 1) : TunnelEnd.Error;

    /// <summary>
    /// Called by the deadline sweep: ends the tunnel once it has been idle for tunnelIdleTimeout, or when the proxy is
    /// stopping (a tunnel has no end a graceful stop could wait for).
    /// </summary>
    public void Check(long now, bool stopping)
    {
        if (stopping)
        {
            End(TunnelEnd.Stopped);
        }
        else if (now >= Volatile.Read(ref _idleDeadline))
        {
            End(TunnelEnd.IdleTimeout);
        }
        else
        {
            return;
        }
        Stop();
    }

    private void Touch() => Volatile.Write(ref _idleDeadline, Environment.TickCount64 + _idleMs);

    // Records how the tunnel ended, unless something ended it first.
    private void End(TunnelEnd end) => Interlocked.CompareExchange(ref _end, (int)end + 1, 0);

    private void Stop()
    {
        try
        {
            _stop.Cancel();
        }
        catch (ObjectDisposedException)
        {
            // The tunnel ended this moment.
        }
    }

    private async Task ClientToDownstreamAsync()
    {
        try
        {
            while (true)
            {
                var result = await _input.ReadAsync(_stop.Token);
                var buffer = result.Buffer;
                foreach (var segment in buffer)
                {
                    await _downstream.WriteAsync(segment, _stop.Token);
                }
                if (!buffer.IsEmpty)
                {
                    _toDownstream += buffer.Length;
                    Touch();
                }
                _input.AdvanceTo(buffer.End);
                // A canceled result is a stale CancelPendingRead of the request loop's (the tunnel's own waits end by
                // its token): read on.
                if (result.IsCompleted)
                {
                    End(TunnelEnd.ClientClosed);
                    if (!await _downstream.CloseOutputAsync())
                    {
                        Stop();
                    }
                    return;
                }
            }
        }
        catch (Exception e)
        {
            if (!EndedBy(e))
            {
                throw;
            }
        }
    }

    private async Task DownstreamToClientAsync()
    {
        var buffer = ProxyBuffers.Bytes.Rent(BufferLength);
        try
        {
            while (true)
            {
                var read = await _downstream.ReadAsync(buffer, _stop.Token);
                if (read == 0)
                {
                    End(TunnelEnd.DownstreamClosed);
                    if (!await _client.CloseOutputAsync())
                    {
                        Stop();
                    }
                    return;
                }
                _toClient += read;
                Touch();
                if ((await _output.WriteAsync(buffer.AsMemory(0, read), _stop.Token)).IsCompleted)
                {
                    // The client connection is gone (its output completed under the flush).
                    End(TunnelEnd.Error);
                    Stop();
                    return;
                }
            }
        }
        catch (Exception e)
        {
            if (!EndedBy(e))
            {
                throw;
            }
        }
        finally
        {
            // Every read into it has completed: the loop awaited each one.
            ProxyBuffers.Bytes.Return(buffer);
        }
    }

    /// <summary>
    /// A direction's wait or transfer threw: nothing more to do when the tunnel was already stopping (the other
    /// direction, the idle timeout or a stop ended it); otherwise the tunnel ends as failed, both ways, and the exception
    /// is swallowed when it is a transfer failure, passed on when it is a bug (the connection's loop logs it; the other
    /// direction must not wait for it either way).
    /// </summary>
    private bool EndedBy(Exception e)
    {
        if (_stop.IsCancellationRequested)
        {
            return true;
        }
        End(TunnelEnd.Error);
        Stop();
        return IsTransferFailure(e);
    }

    private static bool IsTransferFailure(Exception e) =>
        e is IOException or ConnectionResetException or ConnectionAbortedException or OperationCanceledException or ObjectDisposedException
            or InvalidOperationException or System.Net.Sockets.SocketException
            // An HTTP/2 stream's input fails with the reason the stream ended (the client's RST_STREAM).
            or ProxyException;
}
