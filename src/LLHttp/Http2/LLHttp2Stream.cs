using System.Threading.Tasks.Sources;
using LLHttp2.Connection;

namespace LLHttp.Http2;

/// <summary>
/// One request on an <see cref="LLHttp2Connection"/>, shaped like <see cref="LLHttpConnection"/>'s exchange:
/// <see cref="StartRequest"/> and <see cref="AddHeader"/>, then <see cref="SendRequest"/> (no body) or
/// <see cref="StartRequestBody"/>, <see cref="WriteBodyAsync"/> (which waits for the flow-control windows) and
/// <see cref="CompleteRequest"/> (END_STREAM, or the trailers added with <see cref="AddTrailer"/>); then
/// <see cref="ReadResponseHeadAsync"/> (1xx heads returned first, as LLHttpConnection does), <see cref="ReadBodyAsync"/>
/// into the caller's memory (the windows given back as it reads), <see cref="Trailers"/>. <see cref="Abort"/> resets
/// the stream (RST_STREAM CANCEL); <see cref="Dispose"/> gives the object back to its connection, which reuses it.
/// Waits complete through the stream's own reusable sources: nothing is allocated per request once it is warm.
/// </summary>
public sealed class LLHttp2Stream : IValueTaskSource<int>, IValueTaskSource<LLHttp2ResponseHead>, IValueTaskSource, IDisposable
{
    private static readonly Action<object?> s_receiveCanceled = static state => ((LLHttp2Stream)state!).OnWaitCanceled(send: false);
    private static readonly Action<object?> s_sendCanceled = static state => ((LLHttp2Stream)state!).OnWaitCanceled(send: true);

    private readonly LLHttp2Connection _connection;
    private readonly object _sync;
    private readonly TimeoutGate _receiveGate = new();
    private readonly TimeoutGate _sendGate = new();
    private ManualResetValueTaskSourceCore<LLHttp2ResponseHead> _head;
    private ManualResetValueTaskSourceCore<int> _read;
    private ManualResetValueTaskSourceCore<bool> _send;
    private CancellationTokenRegistration _receiveRegistration;
    private CancellationTokenRegistration _sendRegistration;
    private CancellationToken _receiveToken;
    private CancellationToken _sendToken;

    // The request: pseudo-headers (the first four entries), fields, then trailers, copied so the block is encoded at once.
    private readonly FieldList _request = new();
    private int _trailersStart;
    private RequestPhase _phase;
    private int _id;

    // The response: every head's fields and the trailers' (one list, a range per block), and the body's ring.
    private readonly FieldList _response = new();
    private HeadRecord[] _heads = new HeadRecord[2];
    private int _headCount;
    private int _headsRead;
    private int _blockStart;
    private int _trailersFirst = -1;
    private bool _finalHeadRead;
    private bool _ended;
    private byte[] _ring = [];
    private int _ringStart;
    private int _ringCount;
    private LLHttpException? _failure;

    // What a waiting caller asked for.
    private bool _headWaiting;
    private bool _readWaiting;
    private Memory<byte> _readDestination;
    private bool _sendWaiting;
    private ReadOnlyMemory<byte> _sendRemaining;

    internal LLHttp2Stream(LLHttp2Connection connection)
    {
        _connection = connection;
        _sync = connection.Sync;
        _head.RunContinuationsAsynchronously = true;
        _read.RunContinuationsAsynchronously = true;
        _send.RunContinuationsAsynchronously = true;
    }

    private enum RequestPhase : byte
    {
        Reserved,
        Started,
        Body,
        Complete,
        Released,
    }

    /// <summary>The stream's identifier once its HEADERS left, 0 before.</summary>
    public int StreamId => _id;

    /// <summary>The response's trailers (empty when it had none), once <see cref="ReadBodyAsync"/> returned 0.</summary>
    public LLHttp2Fields Trailers => _trailersFirst < 0 ? default : new LLHttp2Fields(_response, _trailersFirst, _response.Count - _trailersFirst);

    internal void Begin()
    {
        _phase = RequestPhase.Reserved;
        _id = 0;
        _request.Clear();
        _trailersStart = -1;
        _response.Clear();
        _headCount = _headsRead = _blockStart = 0;
        _trailersFirst = -1;
        _finalHeadRead = _ended = false;
        _ringStart = _ringCount = 0;
        _failure = null;
    }

    /// <summary>
    /// The request's pseudo-headers (RFC 9113 §8.3.1); an empty <paramref name="scheme"/>, <paramref name="authority"/>
    /// or <paramref name="path"/> is left out (CONNECT, §8.5).
    /// </summary>
    public void StartRequest(ReadOnlySpan<byte> method, ReadOnlySpan<byte> scheme, ReadOnlySpan<byte> authority, ReadOnlySpan<byte> path)
    {
        if (_phase != RequestPhase.Reserved)
        {
            ThrowHelper.ThrowInvalidOperation("The request was started already.");
        }

        if (method.IsEmpty)
        {
            ThrowHelper.ThrowArgument(nameof(method), "The method is empty.");
        }

        _request.Add(method, default);
        _request.Add(scheme, default);
        _request.Add(authority, default);
        _request.Add(path, default);
        _phase = RequestPhase.Started;
    }

    /// <summary>
    /// A regular request field, checked now against the codec's rules (lowercase name, no CR/LF/NUL, no
    /// connection-specific field, TE only "trailers", RFC 9113 §8.2): an <see cref="ArgumentException"/> before anything
    /// reaches the wire.
    /// </summary>
    public void AddHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        if (_phase != RequestPhase.Started)
        {
            ThrowHelper.ThrowInvalidOperation("Fields go between StartRequest and SendRequest or StartRequestBody.");
        }

        CheckField(name, value);
        _request.Add(name, value);
    }

    /// <summary>A request trailer, sent by <see cref="CompleteRequest"/> (RFC 9113 §8.1: HEADERS with END_STREAM).</summary>
    public void AddTrailer(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        if (_phase is not (RequestPhase.Started or RequestPhase.Body))
        {
            ThrowHelper.ThrowInvalidOperation("Trailers belong to a request with a body not yet complete.");
        }

        CheckField(name, value);
        if (_trailersStart < 0)
        {
            _trailersStart = _request.Count;
        }

        _request.Add(name, value);
    }

    /// <summary>Sends the request head with END_STREAM: a request without a body.</summary>
    public void SendRequest() => SendHeaders(endStream: true);

    /// <summary>Sends the request head; the body follows with <see cref="WriteBodyAsync"/> and <see cref="CompleteRequest"/>.</summary>
    public void StartRequestBody() => SendHeaders(endStream: false);

    /// <summary>
    /// Sends <paramref name="body"/> as DATA, waiting for the server's flow-control windows (RFC 9113 §6.9) as long as
    /// <see cref="LLHttpOptions.BodyIdleTimeout"/> allows each wait (<see cref="LLHttpError.BodyIdleTimeout"/>, the
    /// stream reset). The bytes are copied: the memory is the caller's again when the task completes.
    /// </summary>
    public ValueTask WriteBodyAsync(ReadOnlyMemory<byte> body, CancellationToken cancellationToken = default)
    {
        lock (_sync)
        {
            RequirePhase(RequestPhase.Body);
            if (_sendWaiting)
            {
                ThrowHelper.ThrowInvalidOperation("A body write is already waiting.");
            }

            ThrowIfFailedLocked();
            _sendRemaining = body;
            if (PumpSendLocked())
            {
                return default;
            }

            _sendWaiting = true;
            _connection.AddBlockedSenderLocked(this);
            short version = BeginWait(ref _send, _sendGate, ref _sendRegistration, ref _sendToken, s_sendCanceled, _connection.Options.BodyIdleTimeout, cancellationToken);
            return new ValueTask(this, version);
        }
    }

    /// <summary>Ends the request: the trailers added, or an empty DATA frame with END_STREAM.</summary>
    public void CompleteRequest()
    {
        lock (_sync)
        {
            RequirePhase(RequestPhase.Body);
            if (_sendWaiting)
            {
                ThrowHelper.ThrowInvalidOperation("A body write is still waiting.");
            }

            ThrowIfFailedLocked();
            var codec = _connection.Codec;
            if (_trailersStart >= 0)
            {
                var fields = codec.BeginTrailers(_id);
                for (int i = _trailersStart; i < _request.Count; i++)
                {
                    fields.Add(_request.Name(i), _request.Value(i));
                }

                codec.SendTrailers(ref fields, _connection.Output);
            }
            else
            {
                codec.SendData(_id, default, endStream: true, _connection.Output);
            }

            _phase = RequestPhase.Complete;
            _connection.SignalWriterLocked();
        }
    }

    /// <summary>
    /// The next response head: informational (1xx) heads first, each returned (<see cref="LLHttp2ResponseHead.IsInformational"/>),
    /// then the final one. Bounded by <see cref="LLHttpOptions.ResponseHeadTimeout"/> from this call. Its fields are
    /// valid until the stream is given back.
    /// </summary>
    public ValueTask<LLHttp2ResponseHead> ReadResponseHeadAsync(CancellationToken cancellationToken = default)
    {
        lock (_sync)
        {
            if (_phase is RequestPhase.Reserved or RequestPhase.Started or RequestPhase.Released || _finalHeadRead)
            {
                ThrowHelper.ThrowInvalidOperation("No response head is expected now.");
            }

            if (_headsRead < _headCount)
            {
                return new ValueTask<LLHttp2ResponseHead>(NextHeadLocked());
            }

            ThrowIfFailedLocked();
            _headWaiting = true;
            short version = BeginWait(ref _head, _receiveGate, ref _receiveRegistration, ref _receiveToken, s_receiveCanceled, _connection.Options.ResponseHeadTimeout, cancellationToken);
            return new ValueTask<LLHttp2ResponseHead>(this, version);
        }
    }

    /// <summary>
    /// Response body bytes into <paramref name="destination"/>; 0 at its end (then <see cref="Trailers"/> holds the
    /// trailers). Each wait is bounded by <see cref="LLHttpOptions.BodyIdleTimeout"/>. What is read is given back to the
    /// server's windows (WINDOW_UPDATE once half of a window is owed).
    /// </summary>
    public ValueTask<int> ReadBodyAsync(Memory<byte> destination, CancellationToken cancellationToken = default)
    {
        lock (_sync)
        {
            if (!_finalHeadRead)
            {
                ThrowHelper.ThrowInvalidOperation("Read the final response head before the body.");
            }

            if (destination.IsEmpty)
            {
                ThrowHelper.ThrowArgument(nameof(destination), "The destination is empty.");
            }

            if (_ringCount != 0)
            {
                return new ValueTask<int>(TakeFromRingLocked(destination.Span));
            }

            if (_ended)
            {
                return new ValueTask<int>(0);
            }

            ThrowIfFailedLocked();
            _readWaiting = true;
            _readDestination = destination;
            short version = BeginWait(ref _read, _receiveGate, ref _receiveRegistration, ref _receiveToken, s_receiveCanceled, _connection.Options.BodyIdleTimeout, cancellationToken);
            return new ValueTask<int>(this, version);
        }
    }

    /// <summary>Cancels the exchange (RST_STREAM CANCEL, RFC 9113 §8.7); waits fail with <see cref="LLHttpError.ConnectionAborted"/>.</summary>
    public void Abort()
    {
        lock (_sync)
        {
            AbortLocked(new LLHttpException(LLHttpError.ConnectionAborted, "The stream was aborted by its caller."));
        }
    }

    /// <summary>
    /// Gives the stream back to its connection: an exchange not finished both ways is reset first (RST_STREAM CANCEL),
    /// as LLHttpConnection closes a connection whose body was not read to its end.
    /// </summary>
    public void Dispose()
    {
        lock (_sync)
        {
            if (_phase == RequestPhase.Released)
            {
                return;
            }

            bool finished = _phase == RequestPhase.Complete && _ended && _failure is null;
            if (_headWaiting || _readWaiting || _sendWaiting)
            {
                // Only a misused stream has waiters left: the exception is not paid for per request.
                CompleteWaitersLocked(new LLHttpException(LLHttpError.ConnectionAborted, "The stream was given back."));
            }
            bool reserved = _phase is RequestPhase.Reserved or RequestPhase.Started;
            _connection.ReleaseLocked(this, _id, reserved, reset: !finished && _failure is null);
            _phase = RequestPhase.Released;
        }
    }

    // ---- From the connection (under the lock) ----

    internal void OnFieldLocked(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) => _response.Add(name, value);

    internal void OnHeadersLocked(int status, bool endStream)
    {
        if (status == 0)
        {
            _trailersFirst = _blockStart;
            _blockStart = _response.Count;
            EndLocked();
            return;
        }

        if (status < 200 && _headCount >= _connection.Options.MaxInformationalResponses)
        {
            var tooMany = new LLHttpException(LLHttpError.TooManyInformationalResponses, "Too many informational responses.");
            AbortLocked(tooMany);
            return;
        }

        if (_headCount == _heads.Length)
        {
            Array.Resize(ref _heads, _heads.Length * 2);
        }

        _heads[_headCount++] = new HeadRecord(status, _blockStart, _response.Count - _blockStart, endStream);
        _blockStart = _response.Count;
        if (_headWaiting)
        {
            _headWaiting = false;
            _head.SetResult(NextHeadLocked());
        }

        if (endStream)
        {
            EndLocked();
        }
    }

    internal void OnDataLocked(ReadOnlySequence<byte> data, bool endStream)
    {
        if (_readWaiting && !data.IsEmpty)
        {
            int n = (int)Math.Min(data.Length, _readDestination.Length);
            data.Slice(0, n).CopyTo(_readDestination.Span);
            data = data.Slice(n);
            _connection.Codec.ConsumeData(_id, n, _connection.Output);
            _readWaiting = false;
            _readDestination = default;
            _read.SetResult(n);
        }

        if (!data.IsEmpty)
        {
            AppendToRingLocked(data);
        }

        if (endStream)
        {
            EndLocked();
        }
    }

    internal void FailLocked(LLHttpException failure)
    {
        _failure ??= failure;
        CompleteWaitersLocked(_failure);
    }

    /// <summary>Sends what the windows allow of the waiting body; true when all of it left.</summary>
    internal bool PumpSendLocked()
    {
        var codec = _connection.Codec;
        var output = _connection.Output;
        while (!_sendRemaining.IsEmpty)
        {
            int sent = codec.SendData(_id, _sendRemaining.Span, endStream: false, output);
            if (sent == 0)
            {
                break;
            }

            _sendRemaining = _sendRemaining[sent..];
        }

        _connection.SignalWriterLocked();
        if (!_sendRemaining.IsEmpty)
        {
            return false;
        }

        if (_sendWaiting)
        {
            _sendWaiting = false;
            _send.SetResult(true);
        }

        return true;
    }

    // ---- Internals ----

    private void SendHeaders(bool endStream)
    {
        lock (_sync)
        {
            RequirePhase(RequestPhase.Started);
            ThrowIfFailedLocked();
            if (!_connection.TryRegisterLocked(this, out _id))
            {
                _phase = RequestPhase.Complete;
                _failure = new LLHttpException(LLHttpError.StreamRefused, "The connection stopped taking streams (GOAWAY) before the request left: it may be retried.");
                throw new LLHttpException(_failure.Error, _failure.Message);
            }

            var codec = _connection.Codec;
            var fields = codec.BeginRequestHeaders(_id, _request.Name(0), _request.Name(1), _request.Name(2), _request.Name(3));
            int end = _trailersStart < 0 ? _request.Count : _trailersStart;
            for (int i = 4; i < end; i++)
            {
                fields.Add(_request.Name(i), _request.Value(i));
            }

            codec.SendRequestHeaders(ref fields, endStream, _connection.Output);
            _phase = endStream ? RequestPhase.Complete : RequestPhase.Body;
            _connection.SignalWriterLocked();
        }
    }

    private static void CheckField(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        long contentLength = -1;
        string? error = name.IsEmpty || name[0] == (byte)':'
            ? "Pseudo-headers are written by StartRequest (RFC 9113 §8.3)."
            : LLHttp2.Connection.Http2FieldRules.CheckSyntax(name, value) ?? LLHttp2.Connection.Http2FieldRules.CheckRegular(name, value, ref contentLength);
        if (error is null && name.SequenceEqual("te"u8) && !value.SequenceEqual("trailers"u8))
        {
            error = "TE other than \"trailers\" (RFC 9113 §8.2.2).";
        }

        if (error is not null)
        {
            ThrowHelper.ThrowArgument(nameof(name), error);
        }
    }

    private void RequirePhase(RequestPhase phase)
    {
        if (_phase != phase)
        {
            ThrowHelper.ThrowInvalidOperation($"The request is not in the {phase} state.");
        }
    }

    private void ThrowIfFailedLocked()
    {
        if (_failure is not null)
        {
            // A new exception per throw: the stored one may be thrown to several waiters.
            throw new LLHttpException(_failure.Error, _failure.Message, _failure.InnerException);
        }

        _connection.ThrowIfFailedLocked();
    }

    private LLHttp2ResponseHead NextHeadLocked()
    {
        var head = new LLHttp2ResponseHead(this, _response, _heads[_headsRead++]);
        _finalHeadRead = !head.IsInformational;
        return head;
    }

    private void EndLocked()
    {
        _ended = true;
        if (_readWaiting && _ringCount == 0)
        {
            _readWaiting = false;
            _readDestination = default;
            _read.SetResult(0);
        }
    }

    private void AbortLocked(Exception reason)
    {
        if (_phase == RequestPhase.Released)
        {
            return;
        }

        if (_id != 0 && !(_phase == RequestPhase.Complete && _ended) && _failure is null)
        {
            _connection.ResetLocked(_id);
            _connection.RemoveBlockedSenderLocked(this);
        }

        _failure ??= reason as LLHttpException ?? new LLHttpException(LLHttpError.ConnectionAborted, reason.Message, reason);
        CompleteWaitersLocked(reason);
    }

    private void CompleteWaitersLocked(Exception error)
    {
        if (_headWaiting)
        {
            _headWaiting = false;
            _head.SetException(error);
        }

        if (_readWaiting)
        {
            _readWaiting = false;
            _readDestination = default;
            _read.SetException(error);
        }

        if (_sendWaiting)
        {
            _sendWaiting = false;
            _sendRemaining = default;
            _send.SetException(error);
        }
    }

    private int TakeFromRingLocked(Span<byte> destination)
    {
        int n = Math.Min(destination.Length, _ringCount);
        int first = Math.Min(n, _ring.Length - _ringStart);
        _ring.AsSpan(_ringStart, first).CopyTo(destination);
        _ring.AsSpan(0, n - first).CopyTo(destination[first..]);
        _ringStart = (_ringStart + n) % _ring.Length;
        _ringCount -= n;
        _connection.Codec.ConsumeData(_id, n, _connection.Output);
        _connection.SignalWriterLocked();
        return n;
    }

    private void AppendToRingLocked(ReadOnlySequence<byte> data)
    {
        // Never more than the stream's receive window is unread (the codec refuses DATA beyond it), so a ring of the
        // window's size, allocated once per pooled stream, always has room.
        if (_ring.Length == 0)
        {
            _ring = GC.AllocateUninitializedArray<byte>(Math.Max(_connection.StreamReceiveWindow, 1));
        }

        foreach (var segment in data)
        {
            var span = segment.Span;
            while (!span.IsEmpty)
            {
                int tail = (_ringStart + _ringCount) % _ring.Length;
                int n = Math.Min(span.Length, Math.Min(_ring.Length - _ringCount, _ring.Length - tail));
                if (n == 0)
                {
                    AbortLocked(new LLHttpException(LLHttpError.StreamReset, "The server sent more than the stream's window."));
                    return;
                }

                span[..n].CopyTo(_ring.AsSpan(tail));
                _ringCount += n;
                span = span[n..];
            }
        }
    }

    private short BeginWait<T>(
        ref ManualResetValueTaskSourceCore<T> core, TimeoutGate gate, ref CancellationTokenRegistration registration, ref CancellationToken tokenSlot,
        Action<object?> onCanceled, TimeSpan timeout, CancellationToken cancellationToken)
    {
        core.Reset();
        tokenSlot = cancellationToken;
        gate.Enter(timeout, cancellationToken);
        var token = gate.TokenFor(timeout, cancellationToken);
        if (token.CanBeCanceled)
        {
            // A token that fired already runs the callback here, on this thread, which holds the lock already.
            registration = token.UnsafeRegister(onCanceled, this);
        }

        return core.Version;
    }

    private void EndWait(bool send)
    {
        if (send)
        {
            _sendRegistration.Dispose();
            _sendRegistration = default;
            _sendGate.Exit();
        }
        else
        {
            _receiveRegistration.Dispose();
            _receiveRegistration = default;
            _receiveGate.Exit();
        }
    }

    private void OnWaitCanceled(bool send)
    {
        lock (_sync)
        {
            if (send ? !_sendWaiting : !(_headWaiting || _readWaiting))
            {
                return;
            }

            var callerToken = send ? _sendToken : _receiveToken;
            Exception reason = callerToken.IsCancellationRequested
                ? new OperationCanceledException(callerToken)
                : send || _readWaiting
                    ? new LLHttpException(LLHttpError.BodyIdleTimeout, send ? "The server's flow-control window stayed closed too long." : "No response body bytes within BodyIdleTimeout.")
                    : new LLHttpException(LLHttpError.ResponseHeadTimeout, "No response head within ResponseHeadTimeout.");
            AbortLocked(reason);
        }
    }

    LLHttp2ResponseHead IValueTaskSource<LLHttp2ResponseHead>.GetResult(short token) => Finish(ref _head, token, send: false);

    ValueTaskSourceStatus IValueTaskSource<LLHttp2ResponseHead>.GetStatus(short token) => _head.GetStatus(token);

    void IValueTaskSource<LLHttp2ResponseHead>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _head.OnCompleted(continuation, state, token, flags);

    int IValueTaskSource<int>.GetResult(short token) => Finish(ref _read, token, send: false);

    ValueTaskSourceStatus IValueTaskSource<int>.GetStatus(short token) => _read.GetStatus(token);

    void IValueTaskSource<int>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _read.OnCompleted(continuation, state, token, flags);

    void IValueTaskSource.GetResult(short token) => Finish(ref _send, token, send: true);

    /// <summary>The awaiter takes the result: the wait's timer and registration are disarmed on its thread, outside the lock.</summary>
    private T Finish<T>(ref ManualResetValueTaskSourceCore<T> core, short token, bool send)
    {
        try
        {
            return core.GetResult(token);
        }
        finally
        {
            EndWait(send);
        }
    }

    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => _send.GetStatus(token);

    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _send.OnCompleted(continuation, state, token, flags);

    internal readonly record struct HeadRecord(int Status, int First, int Count, bool EndStream);
}
