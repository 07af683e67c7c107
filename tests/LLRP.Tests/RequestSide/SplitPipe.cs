using System.Buffers;
using System.IO.Pipelines;

namespace LLRP.Tests.RequestSide;

/// <summary>
/// A <see cref="Pipe"/> whose reader receives the input one piece at a time, each piece in its own buffer segment: the
/// next piece is written only when the consumer has examined everything it was given, as a socket would deliver it.
/// So a split point is both a read boundary (incremental parsing) and a segment boundary (multi-segment sequences).
/// </summary>
internal sealed class SplitPipe : PipeReader
{
    private readonly Pipe _pipe = new(new PipeOptions(pool: new ExactSizePool(), minimumSegmentSize: 1,
        pauseWriterThreshold: 0, useSynchronizationContext: false));
    private readonly Queue<byte[]> _pieces;
    private ReadOnlySequence<byte> _lastBuffer;
    private bool _needMore = true;

    public SplitPipe(IEnumerable<byte[]> pieces) => _pieces = new Queue<byte[]>(pieces.Where(p => p.Length > 0));

    /// <summary>Every piece was handed to the reader.</summary>
    public bool AllFed => _pieces.Count == 0;

    public override async ValueTask<ReadResult> ReadAsync(CancellationToken cancellationToken = default)
    {
        if (_needMore)
        {
            Feed();
        }
        var result = await _pipe.Reader.ReadAsync(cancellationToken);
        _lastBuffer = result.Buffer;
        return result;
    }

    public override bool TryRead(out ReadResult result)
    {
        if (_needMore)
        {
            Feed();
        }
        if (!_pipe.Reader.TryRead(out result))
        {
            return false;
        }
        _lastBuffer = result.Buffer;
        return true;
    }

    public override void AdvanceTo(SequencePosition consumed) => AdvanceTo(consumed, consumed);

    public override void AdvanceTo(SequencePosition consumed, SequencePosition examined)
    {
        _needMore = _lastBuffer.Slice(examined).IsEmpty;
        _pipe.Reader.AdvanceTo(consumed, examined);
    }

    public override void CancelPendingRead() => _pipe.Reader.CancelPendingRead();

    public override void Complete(Exception? exception = null) => _pipe.Reader.Complete(exception);

    private void Feed()
    {
        _needMore = false;
        if (_pieces.TryDequeue(out var piece))
        {
            // The pool hands out exactly the size asked for, so the previous segment is full and this piece gets its own.
            var memory = _pipe.Writer.GetMemory(piece.Length);
            piece.CopyTo(memory);
            _pipe.Writer.Advance(piece.Length);
            _ = _pipe.Writer.FlushAsync();
        }
        else
        {
            _pipe.Writer.Complete();
        }
    }

    private sealed class ExactSizePool : MemoryPool<byte>
    {
        public override int MaxBufferSize => int.MaxValue;

        public override IMemoryOwner<byte> Rent(int minBufferSize = -1) => new Owner(new byte[Math.Max(1, minBufferSize)]);

        protected override void Dispose(bool disposing)
        {
        }

        private sealed class Owner(byte[] array) : IMemoryOwner<byte>
        {
            public Memory<byte> Memory => array;

            public void Dispose()
            {
            }
        }
    }
}
