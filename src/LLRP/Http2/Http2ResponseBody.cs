using System.IO.Pipelines;
using LLRP.Buffers;
using LLRP.Http1;

namespace LLRP.Http2;

/// <summary>
/// One stream's response body as <see cref="ResponseWriter"/> writes it: pieces land in one pooled array (the downstream
/// reads straight into it) and a flush hands them to the connection as DATA frames, as far as the flow-control windows
/// allow (RFC 9113 §6.9), waiting for the client's WINDOW_UPDATE or for the connection's output to drain otherwise. The
/// head goes out with the first flush, so a small response is one HEADERS and one DATA frame in one write.
/// </summary>
internal sealed class Http2ResponseBody : PipeWriter
{
    private readonly Http2FrontEndStream _stream;
    private byte[]? _buffer;
    private int _start;
    private int _end;

    public Http2ResponseBody(Http2FrontEndStream stream) => _stream = stream;

    /// <summary>The bytes written and not yet sent as DATA.</summary>
    public ReadOnlySpan<byte> Unsent => _buffer is null ? default : _buffer.AsSpan(_start, _end - _start);

    public int UnsentLength => _end - _start;

    /// <summary>The connection sent <paramref name="count"/> bytes of <see cref="Unsent"/> (copied into its output).</summary>
    public void Sent(int count)
    {
        _start += count;
        if (_start == _end)
        {
            _start = _end = 0;
        }
    }

    public override bool CanGetUnflushedBytes => true;

    public override long UnflushedBytes => _end - _start;

    public override void Advance(int bytes) => _end += bytes;

    public override Memory<byte> GetMemory(int sizeHint = 0) => Reserve(sizeHint).AsMemory(_end);

    public override Span<byte> GetSpan(int sizeHint = 0) => Reserve(sizeHint).AsSpan(_end);

    private byte[] Reserve(int sizeHint)
    {
        var needed = Math.Max(sizeHint, 1);
        if (_buffer is null)
        {
            _buffer = ProxyBuffers.Bytes.Rent(Math.Max(needed, ResponseWriter.BodyBufferSize));
        }
        else if (_buffer.Length - _end < needed)
        {
            // The unsent bytes move to the front, or to a larger array if they and the hint do not fit.
            var unsent = _end - _start;
            var target = unsent + needed <= _buffer.Length ? _buffer : ProxyBuffers.Bytes.Rent(unsent + needed);
            _buffer.AsSpan(_start, unsent).CopyTo(target);
            if (!ReferenceEquals(target, _buffer))
            {
                ProxyBuffers.Bytes.Return(_buffer);
                _buffer = target;
            }
            _start = 0;
            _end = unsent;
        }
        return _buffer;
    }

    // The token matters to a tunnel (its idle timeout or stop ends a send that waits for the client's window).
    public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default) => _stream.SendAsync(complete: false, cancellationToken);

    public override void CancelPendingFlush()
    {
    }

    public override void Complete(Exception? exception = null)
    {
    }

    /// <summary>The exchange ended: the array goes back to the pool.</summary>
    public void Reset()
    {
        if (_buffer is not null)
        {
            ProxyBuffers.Bytes.Return(_buffer);
            _buffer = null;
        }
        _start = _end = 0;
    }
}
