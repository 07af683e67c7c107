using System.IO.Pipelines;
using System.Net.Sockets;
using System.Threading.Tasks.Sources;
using LLHttp.Sockets;
using LLRP.Buffers;

namespace LLRP.Transport;

internal sealed partial class EpollConnection
{
    /// <summary>
    /// The connection's output: a PipeWriter over one send buffer of its own. A flush sends the buffer on the flushing
    /// thread, in one system call; only a client that does not take it (a full socket buffer) leaves the flush pending
    /// until the engine finishes the send. No pipe and no send loop; the socket's buffer is the only queue, so a flush
    /// completes once its bytes are with the kernel. The buffer is rented by the first write and given back by the flush
    /// that sent it, so an idle connection holds none. A failed send closes the socket and every later flush reports
    /// IsCompleted, as a pipe whose reader ended does. Completing the writer sends what is left and closes the socket;
    /// <see cref="CloseOutput"/> ends the sending side alone.
    /// </summary>
    private sealed class SocketWriter : PipeWriter, IValueTaskSource<FlushResult>
    {
        // Kestrel's memory pool block; a larger write gets a larger array.
        private const int InitialBufferLength = 4096;

        private readonly EpollConnection _connection;
        private readonly EpollSocket _socket;
        // Created by the first send that has to wait for the socket (most responses never do), so an idle connection
        // holds no delegate for it.
        private Action? _onSent;
        // Orders Complete against the end of a pending send: whichever comes second closes the socket. The reader's lock
        // (EpollConnection's constructor): the writer's sections only set flags, so sharing it orders nothing new.
        private readonly Lock _sync;
        private ManualResetValueTaskSourceCore<FlushResult> _core;
        private ValueTask _send;
        private byte[]? _buffer;
        private int _length;
        // A send is pending on the socket with _buffer[0.._length); the app may not write until its flush completes.
        private bool _sending;
        private bool _completed;
        // A send failed, or the socket was closed: what the app writes now is dropped.
        private volatile bool _failed;

        public SocketWriter(EpollConnection connection, EpollSocket socket, Lock sync, bool inlineScheduling)
        {
            _connection = connection;
            _socket = socket;
            _sync = sync;
            _core.RunContinuationsAsynchronously = !inlineScheduling;
        }

        public override bool CanGetUnflushedBytes => true;

        public override long UnflushedBytes => _sending ? 0 : _length;

        public override Memory<byte> GetMemory(int sizeHint = 0) => Reserve(sizeHint).AsMemory(_length);

        public override Span<byte> GetSpan(int sizeHint = 0) => Reserve(sizeHint).AsSpan(_length);

        public override void Advance(int bytes)
        {
            ArgumentOutOfRangeException.ThrowIfNegative(bytes);
            if (_buffer is null ? bytes > 0 : bytes > _buffer.Length - _length)
            {
                throw new InvalidOperationException("Advanced past the memory the writer handed out.");
            }

            _length += bytes;
        }

        public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default)
        {
            ThrowIfSending();
            if (_failed)
            {
                Drop();
                return new ValueTask<FlushResult>(new FlushResult(isCanceled: false, isCompleted: true));
            }

            if (_length == 0)
            {
                return new ValueTask<FlushResult>(new FlushResult(isCanceled: false, isCompleted: false));
            }

            // The previous flush's result was taken (its await ended): the core is free for this one.
            _core.Reset();
            return StartSend(cancellationToken) is bool sent
                ? new ValueTask<FlushResult>(new FlushResult(isCanceled: false, isCompleted: !sent))
                : new ValueTask<FlushResult>(this, _core.Version);
        }

        /// <summary>Not supported: a flush is a send the kernel has taken or the engine finishes; abort the connection instead.</summary>
        public override void CancelPendingFlush() =>
            throw new NotSupportedException("A client connection's flush cannot be cancelled; abort the connection instead.");

        /// <summary>Sends what is left (unless a send failed) and then closes the socket, at once or when the pending send ends.</summary>
        public override void Complete(Exception? exception = null)
        {
            lock (_sync)
            {
                if (_completed)
                {
                    return;
                }

                _completed = true;
                if (_sending)
                {
                    return; // OnSent closes
                }
            }

            if (!_failed && _length > 0 && StartSend(CancellationToken.None) is null)
            {
                return; // OnSent closes
            }

            Drop();
            _connection.CloseSocket(null);
        }

        /// <summary>
        /// The half-close (<see cref="IHalfCloseFeature.CloseOutput"/>): a FIN after what was sent, the socket's
        /// receiving side left open. Writes after it are dropped, as after a failed send; completing the writer then
        /// closes the socket.
        /// </summary>
        public bool CloseOutput()
        {
            lock (_sync)
            {
                if (_completed || _failed)
                {
                    return false;
                }

                if (_sending || _length > 0)
                {
                    throw new InvalidOperationException("The output is closed only after its last flush completed.");
                }

                _failed = true;
            }

            _socket.Shutdown(SocketShutdown.Send);
            return true;
        }

        /// <summary>The socket was closed under the writer: later flushes report IsCompleted.</summary>
        public void OnSocketClosed() => _failed = true;

        FlushResult IValueTaskSource<FlushResult>.GetResult(short token) => _core.GetResult(token);

        ValueTaskSourceStatus IValueTaskSource<FlushResult>.GetStatus(short token) => _core.GetStatus(token);

        void IValueTaskSource<FlushResult>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
            => _core.OnCompleted(continuation, state, token, flags);

        private byte[] Reserve(int sizeHint)
        {
            ThrowIfSending();
            var needed = Math.Max(sizeHint, 1);
            if (_buffer is null)
            {
                _buffer = ProxyBuffers.Bytes.Rent(Math.Max(needed, InitialBufferLength));
            }
            else if (_buffer.Length - _length < needed)
            {
                var bigger = ProxyBuffers.Bytes.Rent(_length + needed);
                _buffer.AsSpan(0, _length).CopyTo(bigger);
                ProxyBuffers.Bytes.Return(_buffer);
                _buffer = bigger;
            }

            return _buffer;
        }

        // Sends what the buffer holds: whether every byte went (see Sent), or null when the send waits for the socket and
        // OnSent will end it.
        private bool? StartSend(CancellationToken cancellationToken)
        {
            var send = _socket.SendAsync(_buffer.AsMemory(0, _length), cancellationToken);
            if (send.IsCompleted)
            {
                return Sent(send);
            }

            _sending = true;
            _send = send;
            send.GetAwaiter().UnsafeOnCompleted(_onSent ??= OnSent);
            return null;
        }

        // A send ended (on the engine's thread, or on the one that closed the socket): the flush completes.
        private void OnSent()
        {
            var sent = Sent(_send);
            _send = default;
            bool completed;
            lock (_sync)
            {
                _sending = false;
                completed = _completed;
            }

            if (completed)
            {
                Drop();
                _connection.CloseSocket(null);
                return;
            }

            _core.SetResult(new FlushResult(isCanceled: false, isCompleted: !sent));
        }

        // The send is over: true when every byte went; the buffer is given back either way (a failed send closed the
        // socket, and the app only learns that the client is gone).
        private bool Sent(ValueTask send)
        {
            try
            {
                send.GetAwaiter().GetResult();
                Drop();
                return true;
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException or OperationCanceledException)
            {
                _failed = true;
                Drop();
                _connection.CloseSocket(ClientFailure(e));
                return false;
            }
        }

        private void Drop()
        {
            if (_buffer is not null)
            {
                ProxyBuffers.Bytes.Return(_buffer);
                _buffer = null;
            }

            _length = 0;
        }

        private void ThrowIfSending()
        {
            if (_sending)
            {
                throw new InvalidOperationException("The previous flush has not completed.");
            }
        }
    }
}
