using System.Buffers;
using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading.Tasks.Sources;
using static LLHttp.Sockets.Native;

namespace LLHttp.Sockets;

/// <summary>
/// A connected TCP socket served by <see cref="EpollEngine"/>, never blocking (every recv and send passes MSG_DONTWAIT).
/// One receive and one send may be pending at a time (each side of a full-duplex exchange has its own). Every system
/// call on the descriptor is made under the socket's lock after checking that it is open, so a call never reaches a descriptor that was closed and reused. Completions of
/// pending operations run inline: on the engine's thread for readiness, on the caller's for cancellation and dispose.
/// Steady-state receives and sends allocate nothing. LLHttp's downstream connections and LLRP's client connections (its
/// Kestrel transport) both run on it.
/// </summary>
public sealed class EpollSocket : IDisposable
{
    private readonly Lock _lock = new();
    private readonly PendingOperation<Memory<byte>> _receive;
    private readonly PendingOperation<ReadOnlyMemory<byte>> _send;
    private bool _closed;

    // Set by every readable event, cleared by a receive that drained the socket (it returned fewer bytes than asked,
    // or EAGAIN). False means: no byte and no end of stream arrived since the socket was last drained. False at first:
    // registering a socket that is already readable reports an event at once, so a new socket is not tried before
    // its first event (and an accepted connection that has sent nothing yet is not given a buffer to wait in).
    private bool _readReady;

    // The peer's FIN (or an error) was reported. Its event may come with the last bytes, and a receive that takes those
    // bytes is short without having read the end of stream, which no later event announces: from here on every
    // receive tries.
    private bool _readClosed;

    // Set by the first writable event (a connect ended) and never cleared: a send tries first anyway.
    private bool _writableSeen;

    private EpollSocket(int fd)
    {
        Fd = fd;
        _receive = new PendingOperation<Memory<byte>>(_lock);
        _send = new PendingOperation<ReadOnlyMemory<byte>>(_lock);
    }

    /// <summary>The descriptor, the engine's own: <see cref="TakeDescriptor"/> took it from the runtime's socket.</summary>
    internal int Fd { get; }

    /// <summary>The socket's SO_RCVBUF as the kernel reports it.</summary>
    public int ReceiveBufferSize => GetSocketOption(SoRcvBuf);

    /// <summary>The event data of this socket's registration (set by <see cref="EpollEngine.Register"/>).</summary>
    internal ulong Token { get; set; }

    internal int LoopEpollFd { get; set; }

    /// <summary>Serves a connected socket (an accepted one, say) from now on; the runtime must not have served it.</summary>
    public static EpollSocket Serve(Socket connected)
    {
        // The descriptor stays in the mode the runtime gave it: every recv and send here passes MSG_DONTWAIT, so its
        // O_NONBLOCK flag decides nothing. Socket.Blocking = false would also create the runtime's per-socket async
        // context (a SocketAsyncContext and its queues' lock objects, some 200 B) that only the runtime's own engine
        // uses.
        var fd = TakeDescriptor(connected);
        try
        {
            var served = new EpollSocket(fd);
            EpollEngine.Register(served);
            return served;
        }
        catch
        {
            close(fd);
            throw;
        }
    }

    /// <summary>
    /// Makes the socket's connection the engine's alone: a duplicate of its descriptor (close-on-exec, as the runtime
    /// opens its sockets), then the socket disposed, which closes only its own descriptor. The runtime's Socket and its
    /// handle (and a SocketAsyncContext, for a socket made non-blocking) would otherwise stay for the connection's
    /// life, some 180 B for an accepted connection and 400 for a connected one; the cost is one fcntl and one close
    /// per connection. Every system call from here on is this class's, under its lock.
    /// </summary>
    private static int TakeDescriptor(Socket socket)
    {
        try
        {
            var fd = fcntl((int)socket.SafeHandle.DangerousGetHandle(), FDupFdCloexec, 0);
            if (fd < 0)
            {
                throw new SocketException((int)ToSocketError(Marshal.GetLastPInvokeError()));
            }
            return fd;
        }
        finally
        {
            socket.Dispose();
        }
    }

    /// <summary>
    /// The peer's address (getpeername), read each time it is asked for: a connection that keeps its peer's end point
    /// holds an IPEndPoint and an IPAddress (72 B) for a value its users read once. Null once the socket is closed or
    /// the peer is gone, or for a family other than IPv4 and IPv6.
    /// </summary>
    public unsafe IPEndPoint? PeerEndPoint()
    {
        var address = new SocketAddress(AddressFamily.InterNetworkV6);
        var length = address.Size;
        lock (_lock)
        {
            if (_closed)
            {
                return null;
            }
            fixed (byte* buffer = address.Buffer.Span)
            {
                if (getpeername(Fd, buffer, &length) != 0)
                {
                    return null;
                }
            }
        }
        address.Size = length;
        return address.Family switch
        {
            AddressFamily.InterNetwork => (IPEndPoint)new IPEndPoint(IPAddress.Any, 0).Create(address),
            AddressFamily.InterNetworkV6 => (IPEndPoint)new IPEndPoint(IPAddress.IPv6Any, 0).Create(address),
            _ => null,
        };
    }

    // An int-valued SOL_SOCKET option, read under the lock while the socket is open.
    private unsafe int GetSocketOption(int name)
    {
        int value = 0, length = sizeof(int);
        lock (_lock)
        {
            ObjectDisposedException.ThrowIf(_closed, this);
            if (getsockopt(Fd, SolSocket, name, &value, &length) != 0)
            {
                throw new SocketException((int)ToSocketError(Marshal.GetLastPInvokeError()));
            }
        }
        return value;
    }

    /// <summary>Connects to the first address of <paramref name="endPoint"/> that accepts, then serves the socket.</summary>
    public static async ValueTask<EpollSocket> ConnectAsync(EndPoint endPoint, int receiveBufferSize, CancellationToken cancellationToken)
    {
        if (endPoint is IPEndPoint ip)
        {
            return await ConnectAsync(ip, receiveBufferSize, cancellationToken).ConfigureAwait(false);
        }

        if (endPoint is not DnsEndPoint dns)
        {
            throw new ArgumentException($"The epoll engine connects to IP and DNS end points, not {endPoint.GetType().Name}.", nameof(endPoint));
        }

        IPAddress[] addresses = await Dns.GetHostAddressesAsync(dns.Host, cancellationToken).ConfigureAwait(false);
        SocketException? last = null;
        foreach (var address in addresses)
        {
            try
            {
                return await ConnectAsync(new IPEndPoint(address, dns.Port), receiveBufferSize, cancellationToken).ConfigureAwait(false);
            }
            catch (SocketException e)
            {
                last = e;
            }
        }

        throw last ?? new SocketException((int)SocketError.HostNotFound);
    }

    private static async ValueTask<EpollSocket> ConnectAsync(IPEndPoint endPoint, int receiveBufferSize, CancellationToken cancellationToken)
    {
        var socket = new Socket(endPoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        EpollSocket? served = null;
        try
        {
            // A head and its body may leave in two sends; Nagle would hold the second for the ACK of the first.
            socket.NoDelay = true;
            ReceiveBuffer.Set(socket, receiveBufferSize);
            // A synchronous call on a non-blocking socket: the runtime's own engine never registers the socket.
            socket.Blocking = false;
            bool connected = true;
            try
            {
                socket.Connect(endPoint);
            }
            catch (SocketException e) when (e.SocketErrorCode is SocketError.WouldBlock or SocketError.InProgress)
            {
                connected = false;
            }

            // A connect in progress goes on with the duplicate: the connection belongs to the descriptions, not to a
            // descriptor.
            served = new EpollSocket(TakeDescriptor(socket));
            EpollEngine.Register(served);
            if (!connected)
            {
                // Writable means the connect ended, either way; SO_ERROR tells which.
                await served.SendAsync(ReadOnlyMemory<byte>.Empty, cancellationToken).ConfigureAwait(false);
                var errno = served.GetSocketOption(SoError);
                if (errno != 0)
                {
                    throw new SocketException((int)ToSocketError(errno));
                }
            }

            return served;
        }
        catch
        {
            if (served is not null)
            {
                served.Dispose();
            }
            else
            {
                socket.Dispose(); // (again, if TakeDescriptor failed: that disposed it)
            }

            throw;
        }
    }

    /// <summary>
    /// Receives at least one byte, or returns 0 at end of stream. An empty buffer waits until the socket is readable
    /// and returns 0, without a system call: a caller can wait for data before it takes a buffer.
    /// </summary>
    public ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<int>(cancellationToken);
        }

        lock (_lock)
        {
            if (_closed)
            {
                return ValueTask.FromException<int>(new ObjectDisposedException(nameof(Socket)));
            }

            if (_readReady)
            {
                nint received = Receive(buffer.Span, out int errno);
                if (received >= 0)
                {
                    return new ValueTask<int>((int)received);
                }

                if (errno != EAgain)
                {
                    return ValueTask.FromException<int>(new SocketException((int)ToSocketError(errno)));
                }
            }

            return new ValueTask<int>(_receive, _receive.Start(buffer, cancellationToken));
        }
    }

    /// <summary>
    /// False when no byte and no end of stream arrived since the socket was last drained, as the readiness events tell
    /// (no system call; a racy read, which a caller may only use to skip a receive that would find nothing). A caller
    /// that owns its buffer checks it before taking one.
    /// </summary>
    public bool MayBeReadable => Volatile.Read(ref _readReady);

    /// <summary>
    /// Receives what is there now without waiting: the byte count, 0 at end of stream, or -1 when nothing is there (no
    /// receive is left pending; <see cref="ReceiveAsync"/> with an empty buffer waits for more). A failure throws its
    /// <see cref="SocketException"/>; a closed socket throws <see cref="ObjectDisposedException"/>.
    /// </summary>
    public int TryReceive(Span<byte> buffer)
    {
        lock (_lock)
        {
            ObjectDisposedException.ThrowIf(_closed, this);
            if (!_readReady || buffer.IsEmpty)
            {
                return -1;
            }

            nint received = Receive(buffer, out int errno);
            if (received >= 0)
            {
                return (int)received;
            }

            return errno == EAgain ? -1 : throw new SocketException((int)ToSocketError(errno));
        }
    }

    /// <summary>
    /// True when the peer ended its side (a FIN or a reset) and no byte is left to read before that end: one peek,
    /// and none when the readiness events say nothing arrived. Bytes still to read, or nothing at all, give false.
    /// </summary>
    public bool HasEnded()
    {
        lock (_lock)
        {
            return Peek() == Readable.Ended;
        }
    }

    /// <summary>Sends every byte of <paramref name="buffer"/>; an empty buffer waits until the socket was writable once (its connect ended).</summary>
    public ValueTask SendAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }

        lock (_lock)
        {
            if (_closed)
            {
                return ValueTask.FromException(new ObjectDisposedException(nameof(Socket)));
            }

            if (buffer.IsEmpty)
            {
                // The wait for a connect: its writable event may have come before this call.
                return _writableSeen ? default : new ValueTask(_send, _send.Start(buffer, cancellationToken));
            }

            int errno = Send(ref buffer);
            if (buffer.IsEmpty)
            {
                return default;
            }

            if (errno != EAgain)
            {
                return ValueTask.FromException(new SocketException((int)ToSocketError(errno)));
            }

            return new ValueTask(_send, _send.Start(buffer, cancellationToken));
        }
    }

    /// <summary>
    /// True when the peer closed the connection or sent bytes since it was last drained. Known from the readiness events
    /// without a system call, except after a receive that filled its buffer, which one peek settles.
    /// </summary>
    public bool IsReadable()
    {
        lock (_lock)
        {
            return Peek() != Readable.Nothing;
        }
    }

    private enum Readable : byte
    {
        Nothing,
        Bytes,
        /// <summary>A FIN or a reset with nothing before it, or the socket is closed.</summary>
        Ended,
    }

    // Under the lock: what a receive would find now, without taking it. One peek, unless the readiness events or the
    // close settle it.
    private unsafe Readable Peek()
    {
        if (_closed)
        {
            return Readable.Ended;
        }

        if (!_readReady)
        {
            return Readable.Nothing;
        }

        byte peek;
        nint n = recv(Fd, &peek, 1, MsgPeek | MsgDontWait);
        if (n > 0)
        {
            return Readable.Bytes;
        }

        if (n < 0 && Marshal.GetLastPInvokeError() == EAgain)
        {
            _readReady = false;
            return Readable.Nothing;
        }

        return Readable.Ended;
    }

    internal void OnEvents(uint events)
    {
        if ((events & (EpollIn | EpollRdHup | EpollHup | EpollErr)) != 0)
        {
            OnReadable((events & (EpollRdHup | EpollHup | EpollErr)) != 0);
        }

        if ((events & (EpollOut | EpollHup | EpollErr)) != 0)
        {
            OnWritable();
        }
    }

    private void OnReadable(bool closed)
    {
        nint received;
        int errno;
        CancellationTokenRegistration registration;
        lock (_lock)
        {
            if (_closed)
            {
                return;
            }

            _readReady = true;
            _readClosed |= closed;
            if (!_receive.IsPending)
            {
                return;
            }

            received = Receive(_receive.Buffer.Span, out errno);
            if (errno == EAgain)
            {
                return;
            }

            registration = _receive.End();
        }

        _receive.Complete(registration, (int)received, errno);
    }

    private void OnWritable()
    {
        int errno;
        CancellationTokenRegistration registration;
        lock (_lock)
        {
            if (_closed)
            {
                return;
            }

            _writableSeen = true;
            if (!_send.IsPending)
            {
                return;
            }

            errno = Send(ref _send.Buffer);
            if (errno == EAgain)
            {
                return;
            }

            registration = _send.End();
        }

        _send.Complete(registration, 0, errno);
    }

    // Under the lock, socket open. Returns the byte count (0: end of stream) with errno 0, or -1 with the errno; clears
    // the ready flag when the socket is drained.
    private unsafe nint Receive(Span<byte> buffer, out int errno)
    {
        errno = 0;
        if (buffer.IsEmpty)
        {
            // A wait for readability: the caller comes back with a buffer.
            return 0;
        }

        nint received;
        fixed (byte* p = buffer)
        {
            received = recv(Fd, p, (nuint)buffer.Length, MsgDontWait);
        }

        if (received < 0)
        {
            errno = Marshal.GetLastPInvokeError();
            if (errno == EAgain)
            {
                _readReady = false;
            }

            return -1;
        }

        if (received > 0 && received < buffer.Length && !_readClosed)
        {
            _readReady = false;
        }

        return received;
    }

    // Under the lock, socket open. Sends until the buffer is empty or the socket is full; returns the errno that stopped
    // it (EAGAIN: full) or 0.
    private unsafe int Send(ref ReadOnlyMemory<byte> buffer)
    {
        while (!buffer.IsEmpty)
        {
            nint sent;
            fixed (byte* p = buffer.Span)
            {
                sent = send(Fd, p, (nuint)buffer.Length, MsgDontWait | MsgNoSignal);
            }

            if (sent < 0)
            {
                return Marshal.GetLastPInvokeError();
            }

            buffer = buffer[(int)sent..];
        }

        return 0;
    }

    /// <summary>Shuts down one or both directions (a FIN for <see cref="SocketShutdown.Send"/>); nothing once closed.</summary>
    public void Shutdown(SocketShutdown how)
    {
        lock (_lock)
        {
            if (_closed)
            {
                return;
            }

            // A failure (ENOTCONN after a reset) means nothing is left to shut down.
            shutdown(Fd, (int)how);
        }
    }

    public void Dispose()
    {
        lock (_lock)
        {
            if (_closed)
            {
                return;
            }

            _closed = true;
        }

        EpollEngine.Unregister(this);
        // No system call reaches the descriptor after _closed is set, so it cannot be reused under one.
        close(Fd);

        // As the runtime's sockets do, a receive or send pending at close fails with OperationAborted.
        _receive.Abort();
        _send.Abort();
    }

    /// <summary>
    /// A receive or a send waiting for readiness: its buffer, its cancellation, and the value-task source its caller
    /// awaits. Started, ended and cancelled under the socket's lock; completed after the lock is released, since the
    /// caller's continuation runs inline.
    /// </summary>
    private sealed class PendingOperation<TBuffer>(Lock socketLock) : IValueTaskSource<int>, IValueTaskSource
        where TBuffer : struct
    {
        private static readonly Action<object?, CancellationToken> s_cancel =
            static (state, token) => ((PendingOperation<TBuffer>)state!).Cancel(token);

        private ManualResetValueTaskSourceCore<int> _core;
        private CancellationToken _token;
        private CancellationTokenRegistration _registration;

        // What is left to receive into or to send; a field, so that a partial send can advance it in place.
        public TBuffer Buffer;

        public bool IsPending { get; private set; }

        // Under the lock. Returns the token of the value task the caller gets.
        public short Start(TBuffer buffer, CancellationToken cancellationToken)
        {
            _core.Reset();
            Buffer = buffer;
            IsPending = true;
            if (cancellationToken.CanBeCanceled)
            {
                _token = cancellationToken;
                _registration = cancellationToken.UnsafeRegister(s_cancel, this);
            }

            return _core.Version;
        }

        // Under the lock: no longer pending. The caller completes it once the lock is released.
        public CancellationTokenRegistration End()
        {
            var registration = _registration;
            IsPending = false;
            Buffer = default;
            _token = default;
            _registration = default;
            return registration;
        }

        // Outside the lock: errno 0 is success with the result; any other fails with its SocketError.
        public void Complete(CancellationTokenRegistration registration, int result, int errno)
        {
            registration.Unregister();
            if (errno == 0)
            {
                _core.SetResult(result);
            }
            else
            {
                _core.SetException(new SocketException((int)ToSocketError(errno)));
            }
        }

        public void Abort()
        {
            CancellationTokenRegistration registration;
            lock (socketLock)
            {
                if (!IsPending)
                {
                    return;
                }

                registration = End();
            }

            registration.Unregister();
            _core.SetException(new SocketException((int)SocketError.OperationAborted));
        }

        private void Cancel(CancellationToken token)
        {
            lock (socketLock)
            {
                // A registration that fired for an operation that has ended since (or for a later one with another token).
                if (!IsPending || _token != token)
                {
                    return;
                }

                _ = End();
            }

            _core.SetException(new OperationCanceledException(token));
        }

        int IValueTaskSource<int>.GetResult(short token) => _core.GetResult(token);

        void IValueTaskSource.GetResult(short token) => _core.GetResult(token);

        public ValueTaskSourceStatus GetStatus(short token) => _core.GetStatus(token);

        public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
            => _core.OnCompleted(continuation, state, token, flags);
    }
}
