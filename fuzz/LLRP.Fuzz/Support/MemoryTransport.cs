namespace LLRP.Fuzz.Support;

/// <summary>LLHttp's byte pipe over memory: receives hand out the scripted pieces, then end of stream; sends are recorded.</summary>
internal sealed class MemoryTransport(IEnumerable<byte[]> reads) : LLHttp.Transports.Transport
{
    private readonly Queue<byte[]> _reads = new(reads);
    private readonly MemoryStream _sent = new();
    private byte[]? _current;
    private int _offset;

    public byte[] Sent => _sent.ToArray();

    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        while (_current is null || _offset == _current.Length)
        {
            if (!_reads.TryDequeue(out _current))
            {
                _current = null;
                return new ValueTask<int>(0);
            }
            _offset = 0;
        }
        var n = Math.Min(buffer.Length, _current.Length - _offset);
        _current.AsSpan(_offset, n).CopyTo(buffer.Span);
        _offset += n;
        return new ValueTask<int>(n);
    }

    public override ValueTask SendAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken)
    {
        _sent.Write(buffer.Span);
        return default;
    }

    public override bool IsReadableWhileIdle() => false;

    public override int ReceiveBufferSize => 0;

    public override void Dispose()
    {
    }
}
