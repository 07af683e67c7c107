using System.Buffers;
using System.IO.Pipelines;
using System.Net.Sockets;
using System.Threading.Tasks.Sources;
using LLHttp.Sockets;
using LLRP.Buffers;

namespace LLRP.Transport;

internal sealed partial class EpollConnection
{
    /// <summary>
    /// The connection's input: a PipeReader over one receive buffer of its own, filled straight from the socket when the
    /// app reads. No pipe and no receive loop: a read that finds nothing waits for the socket's readiness and receives on
    /// the engine's thread, then resumes the app there (or on the thread pool without inline scheduling). The buffer is
    /// rented when bytes arrive and given back once the app consumed them all, so an idle connection holds none.
    /// While the app does not read (an exchange is in flight) a readiness wait stays armed, so a client that closes or
    /// resets is seen at once (one peek tells its FIN from a pipelined request) and fires ConnectionClosed.
    /// </summary>
    private sealed class SocketReader : PipeReader, IValueTaskSource<ReadResult>
    {
        // Kestrel's memory pool block: one receive of this size takes a typical request head.
        private const int InitialBufferLength = 4096;

        // After a receive that filled all the room there was (a request body streaming in), the next buffer is this long,
        // the size of the buffer the body moves through on its way to the downstream (LLHttpForwarder's
        // BodyBufferLength): a large body takes a sixteenth of the receives, and LLHttp of the sends, that 4 KiB buffers
        // would. A receive that does not fill its buffer sends the next one back to InitialBufferLength, and a buffer
        // is given back once consumed, so only a connection with bytes streaming in holds one this long.
        private const int StreamingBufferLength = 64 * 1024;

        private static readonly Action<object?, CancellationToken> s_cancelRead =
            static (state, token) => ((SocketReader)state!).CancelRead(token);

        private readonly EpollConnection _connection;
        private readonly EpollSocket _socket;
        // The connection's one lock, shared with the writer (EpollConnection's constructor).
        private readonly Lock _sync;
        private readonly Action _onReadable;
        private ManualResetValueTaskSourceCore<ReadResult> _core;
        private ValueTask<int> _wait;
        // A readiness wait is pending on the socket; _onReadable runs when it ends.
        private bool _waiting;
        // The app's ReadAsync is pending: the next readiness receives for it.
        private bool _reading;
        private bool _cancelNextRead;
        private bool _ended;
        private bool _completed;
        private Exception? _error;
        private CancellationToken _readToken;
        private CancellationTokenRegistration _readRegistration;

        // The bytes received and not consumed are _buffer[_start.._end); the app examined them up to _examined.
        private byte[]? _buffer;
        private int _start;
        private int _examined;
        private int _end;
        // The length of the next buffer rented: InitialBufferLength, or StreamingBufferLength while bytes keep coming.
        private int _nextLength = InitialBufferLength;

        public SocketReader(EpollConnection connection, EpollSocket socket, Lock sync, bool inlineScheduling)
        {
            _connection = connection;
            _socket = socket;
            _sync = sync;
            _onReadable = OnReadable;
            _core.RunContinuationsAsynchronously = !inlineScheduling;
        }

        public override ValueTask<ReadResult> ReadAsync(CancellationToken cancellationToken = default)
        {
            if (cancellationToken.IsCancellationRequested)
            {
                return ValueTask.FromCanceled<ReadResult>(cancellationToken);
            }

            lock (_sync)
            {
                ObjectDisposedException.ThrowIf(_completed, this);
                if (_reading)
                {
                    throw new InvalidOperationException("A read is already pending.");
                }

                if (_cancelNextRead)
                {
                    _cancelNextRead = false;
                    return new ValueTask<ReadResult>(Result(canceled: true));
                }

                if (!HasNews() && !_waiting)
                {
                    ReceiveOrWatch();
                }

                if (HasNews())
                {
                    var failure = TakeResult(out var result);
                    WatchWhileNotRead();
                    return failure is null ? new ValueTask<ReadResult>(result) : ValueTask.FromException<ReadResult>(failure);
                }

                // The previous read's result was taken (its await ended): the core is free for this one.
                _core.Reset();
                _reading = true;
                if (cancellationToken.CanBeCanceled)
                {
                    _readToken = cancellationToken;
                    _readRegistration = cancellationToken.UnsafeRegister(s_cancelRead, this);
                }

                return new ValueTask<ReadResult>(this, _core.Version);
            }
        }

        public override bool TryRead(out ReadResult result)
        {
            lock (_sync)
            {
                ObjectDisposedException.ThrowIf(_completed, this);
                if (_cancelNextRead)
                {
                    _cancelNextRead = false;
                    result = Result(canceled: true);
                    return true;
                }

                if (!HasNews() && !_waiting && !_reading)
                {
                    ReceiveOrWatch();
                }

                if (!HasNews())
                {
                    result = default;
                    return false;
                }

                var failure = TakeResult(out result);
                return failure is null ? true : throw failure;
            }
        }

        public override void AdvanceTo(SequencePosition consumed) => AdvanceTo(consumed, consumed);

        public override void AdvanceTo(SequencePosition consumed, SequencePosition examined)
        {
            lock (_sync)
            {
                if (_buffer is null)
                {
                    return; // the app was handed an empty buffer
                }

                if (!ReferenceEquals(consumed.GetObject(), _buffer) || !ReferenceEquals(examined.GetObject(), _buffer))
                {
                    throw new InvalidOperationException("The position is not in the buffer the last read returned.");
                }

                int consumedAt = consumed.GetInteger(), examinedAt = examined.GetInteger();
                if (consumedAt < _start || consumedAt > examinedAt || examinedAt > _end)
                {
                    throw new InvalidOperationException("The positions are out of order or outside the buffer the last read returned.");
                }

                // As a pipe does: the next read waits for more bytes only when the app examined everything there is.
                _start = consumedAt;
                _examined = examinedAt;
                if (_start == _end)
                {
                    ReturnBuffer();
                }
            }
        }

        public override void CancelPendingRead()
        {
            ReadResult result;
            CancellationTokenRegistration registration;
            lock (_sync)
            {
                if (!_reading)
                {
                    _cancelNextRead = true;
                    return;
                }

                registration = EndRead();
                result = Result(canceled: true);
            }

            registration.Unregister();
            _core.SetResult(result);
        }

        public override void Complete(Exception? exception = null)
        {
            lock (_sync)
            {
                if (_completed)
                {
                    return;
                }

                _completed = true;
                if (!_reading)
                {
                    ReturnBuffer();
                }
            }
        }

        ReadResult IValueTaskSource<ReadResult>.GetResult(short token) => _core.GetResult(token);

        ValueTaskSourceStatus IValueTaskSource<ReadResult>.GetStatus(short token) => _core.GetStatus(token);

        void IValueTaskSource<ReadResult>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
            => _core.OnCompleted(continuation, state, token, flags);

        // Under the lock: bytes the app has not examined, the end of stream, or a failure, to hand to a read.
        private bool HasNews() => _end > _examined || _ended || _error is not null;

        // Under the lock: the result a read returns now, or the failure it throws (after the bytes before it).
        private Exception? TakeResult(out ReadResult result)
        {
            result = Result(canceled: false);
            return _end > _examined || _error is null ? null : _error;
        }

        private ReadResult Result(bool canceled) => new(
            _buffer is null ? ReadOnlySequence<byte>.Empty : new ReadOnlySequence<byte>(_buffer, _start, _end - _start),
            canceled,
            _ended);

        // Under the lock, with no readiness wait pending and the app not reading past what it has: receives what the
        // socket holds, or arms a wait when it holds nothing.
        private void ReceiveOrWatch()
        {
            while (true)
            {
                if (Receive())
                {
                    return;
                }

                if (Watch())
                {
                    return;
                }
            }
        }

        // Under the lock: one receive into the buffer's free end. True when it got bytes, the end of stream or a failure.
        private bool Receive()
        {
            if (!_socket.MayBeReadable)
            {
                return false;
            }

            if (_buffer is null)
            {
                _buffer = ProxyBuffers.Bytes.Rent(_nextLength);
            }
            else if (_end == _buffer.Length && !MakeRoom())
            {
                return true;
            }

            try
            {
                var room = _buffer.Length - _end;
                var received = _socket.TryReceive(_buffer.AsSpan(_end));
                if (received > 0)
                {
                    _end += received;
                    _nextLength = received == room ? StreamingBufferLength : InitialBufferLength;
                    return true;
                }

                if (received == 0)
                {
                    _ended = true;
                    _connection.FireConnectionClosed();
                    return true;
                }

                if (_start == _end)
                {
                    ReturnBuffer(); // nothing came: no buffer while waiting
                }

                return false;
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                Fail(e);
                return true;
            }
        }

        // Under the lock, the buffer full: moves the unconsumed bytes to its start or into one twice as long. False
        // (and the read fails) once MaxUnreadRequestBytes are held unconsumed.
        private bool MakeRoom()
        {
            var buffer = _buffer!;
            var length = _end - _start;
            if (_start > 0)
            {
                buffer.AsSpan(_start, length).CopyTo(buffer);
            }
            else if (buffer.Length >= MaxUnreadRequestBytes)
            {
                _error = new InvalidOperationException($"The app left {MaxUnreadRequestBytes} request bytes unread.");
                return false;
            }
            else
            {
                _buffer = ProxyBuffers.Bytes.Rent(buffer.Length * 2);
                buffer.AsSpan(_start, length).CopyTo(_buffer);
                ProxyBuffers.Bytes.Return(buffer);
            }

            _examined -= _start;
            _end = length;
            _start = 0;
            return true;
        }

        // Under the lock, no wait pending: waits for the socket to become readable. False when it already is (a receive
        // will find something) or the wait failed at once (recorded).
        private bool Watch()
        {
            var wait = _socket.ReceiveAsync(Memory<byte>.Empty, CancellationToken.None);
            if (!wait.IsCompleted)
            {
                _waiting = true;
                _wait = wait;
                wait.GetAwaiter().UnsafeOnCompleted(_onReadable);
                return true;
            }

            try
            {
                wait.GetAwaiter().GetResult();
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                Fail(e);
            }

            return false;
        }

        // Under the lock, after a read took its result: keeps a readiness wait armed while the app works on what it read,
        // so a client that goes away meanwhile is seen. Not when bytes are still waiting in the socket (a large body the
        // app will read on) or the input has ended.
        private void WatchWhileNotRead()
        {
            if (!_waiting && !_ended && _error is null && !_completed && !_socket.MayBeReadable)
            {
                _ = Watch();
            }
        }

        // The readiness wait ended (on the engine's thread): receive for a pending read, or check whether the client left.
        private void OnReadable()
        {
            Exception? waitFailure = null;
            try
            {
                _wait.GetAwaiter().GetResult();
            }
            catch (Exception e)
            {
                waitFailure = e;
            }

            ReadResult result;
            Exception? readFailure;
            CancellationTokenRegistration registration;
            lock (_sync)
            {
                _waiting = false;
                _wait = default;
                if (waitFailure is not null)
                {
                    Fail(waitFailure);
                }

                if (!_reading)
                {
                    // Nobody reads: a FIN or reset is the client leaving; a byte (a pipelined request) waits for the app,
                    // and a wake that found nothing waits again.
                    if (!_completed && _error is null)
                    {
                        if (_socket.HasEnded())
                        {
                            _connection.FireConnectionClosed();
                        }
                        else
                        {
                            WatchWhileNotRead();
                        }
                    }

                    return;
                }

                if (!HasNews())
                {
                    ReceiveOrWatch();
                    if (!HasNews())
                    {
                        return; // spurious: waiting again
                    }
                }

                registration = EndRead();
                readFailure = TakeResult(out result);
                WatchWhileNotRead();
            }

            registration.Unregister();
            if (readFailure is null)
            {
                _core.SetResult(result);
            }
            else
            {
                _core.SetException(readFailure);
            }
        }

        private void CancelRead(CancellationToken token)
        {
            CancellationTokenRegistration registration;
            lock (_sync)
            {
                if (!_reading || _readToken != token)
                {
                    return; // the read ended before the cancellation reached it
                }

                registration = EndRead();
            }

            registration.Unregister();
            _core.SetException(new OperationCanceledException(token));
        }

        // Under the lock: the pending read is over; the caller completes it once the lock is released.
        private CancellationTokenRegistration EndRead()
        {
            var registration = _readRegistration;
            _reading = false;
            _readToken = default;
            _readRegistration = default;
            return registration;
        }

        // Under the lock: the receive failed. A reset is the client's; a socket closed by the transport reports why.
        private void Fail(Exception e)
        {
            _error ??= _connection._shutdownReason ?? ClientFailure(e);
            _connection.FireConnectionClosed();
        }

        private void ReturnBuffer()
        {
            if (_buffer is not null)
            {
                ProxyBuffers.Bytes.Return(_buffer);
                _buffer = null;
            }

            _start = _examined = _end = 0;
        }
    }
}
