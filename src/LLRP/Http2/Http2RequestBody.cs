using System.Buffers;
using System.IO.Pipelines;
using System.Runtime.CompilerServices;
using LLRP.Errors;

namespace LLRP.Http2;

/// <summary>
/// One stream's request body as the exchange reads it (<see cref="Http1.RequestBodyReader.Bind"/>): the DATA frames'
/// bytes, copied in by the connection's read loop, and flow control given back as the variant consumes them, so the
/// client never has more in flight than the stream's window (RFC 9113 §6.9) however slowly the downstream takes it.
/// </summary>
internal sealed class Http2RequestBody : PipeReader
{
    // The window bounds what the pipe holds, so it never pauses the writer (the read loop, which must not wait). The
    // reader resumes on the thread pool: the read loop writes under the connection's lock, where no variant code may run.
    private readonly Pipe _pipe = new(new PipeOptions(pauseWriterThreshold: 0, readerScheduler: PipeScheduler.ThreadPool,
        writerScheduler: PipeScheduler.Inline, useSynchronizationContext: false));
    private readonly Http2FrontEndStream _stream;
    private ReadOnlySequence<byte> _last;
    private bool _writerDone;
    private bool _readerDone;
    // Whether either side touched the pipe: a request ended on its HEADERS (every GET) does not, so its stream pays for
    // no pipe operation (each takes the pipe's lock). Written by both sides, read by Reset after both are done.
    private bool _used;
    // What the read loop appended and the exchange consumed: the difference is given back to the connection's window
    // when the stream ends with its body unread.
    private long _appended;
    private long _consumed;

    public Http2RequestBody(Http2FrontEndStream stream) => _stream = stream;

    /// <summary>DATA bytes from the read loop (under the connection's lock), handed to the reader at once.</summary>
    public void Append(ReadOnlySequence<byte> data)
    {
        if (_writerDone)
        {
            return;
        }
        _used = true;
        foreach (var segment in data)
        {
            _pipe.Writer.Write(segment.Span);
        }
        _appended += data.Length;
        _ = _pipe.Writer.FlushAsync();
    }

    /// <summary>The body ended (END_STREAM), or broke (<paramref name="failure"/>: the stream reset); under the lock.</summary>
    public void End(ProxyException? failure)
    {
        if (_writerDone)
        {
            return;
        }
        _used = true;
        _writerDone = true;
        _pipe.Writer.Complete(failure);
    }

    public override bool TryRead(out ReadResult result)
    {
        _used = true;
        var read = _pipe.Reader.TryRead(out result);
        _last = read ? result.Buffer : default;
        return read;
    }

    public override ValueTask<ReadResult> ReadAsync(CancellationToken cancellationToken = default)
    {
        _used = true;
        var read = _pipe.Reader.ReadAsync(cancellationToken);
        if (read.IsCompletedSuccessfully)
        {
            var result = read.Result;
            _last = result.Buffer;
            return new ValueTask<ReadResult>(result);
        }
        return AwaitReadAsync(read);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<ReadResult> AwaitReadAsync(ValueTask<ReadResult> read)
    {
        var result = await read;
        _last = result.Buffer;
        return result;
    }

    public override void AdvanceTo(SequencePosition consumed) => AdvanceTo(consumed, consumed);

    public override void AdvanceTo(SequencePosition consumed, SequencePosition examined)
    {
        var length = (int)_last.Slice(0, consumed).Length;
        _last = default;
        _pipe.Reader.AdvanceTo(consumed, examined);
        if (length > 0)
        {
            _consumed += length;
            _stream.BodyConsumed(length);
        }
    }

    public override void CancelPendingRead() => _pipe.Reader.CancelPendingRead();

    public override void Complete(Exception? exception = null)
    {
        if (!_readerDone)
        {
            _readerDone = true;
            _pipe.Reader.Complete(exception);
        }
    }

    /// <summary>
    /// Ready for the next stream, under the connection's lock once the stream left it (no DATA reaches it any more) and
    /// its exchange completed the reading side: the writing side completed, then the pipe reset.
    /// Returns the bytes appended that the exchange never consumed.
    /// </summary>
    public int Reset()
    {
        if (!_used)
        {
            return 0;
        }
        _used = false;
        End(null);
        Complete();
        _pipe.Reset();
        _writerDone = _readerDone = false;
        _last = default;
        var unread = (int)(Volatile.Read(ref _appended) - Volatile.Read(ref _consumed));
        _appended = _consumed = 0;
        return unread;
    }
}
