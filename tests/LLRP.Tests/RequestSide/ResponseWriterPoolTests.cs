using System.IO.Pipelines;
using LLRP.Http1;

namespace LLRP.Tests.RequestSide;

/// <summary>
/// What <see cref="ResponseWriter"/> asks the client connection's PipeWriter for. Kestrel's output pipe rents from its
/// block pool only up to the block size (4,096 bytes); a larger size hint makes the Pipe rent from ArrayPool.Shared,
/// whose few arrays per core run out with tens of responses in flight, so those rents allocate under load.
/// </summary>
public sealed class ResponseWriterPoolTests
{
    // Kestrel's PinnedBlockMemoryPool block size: the largest hint its output pipe serves from its own pool.
    private const int KestrelBlockSize = 4096;

    [Theory]
    [InlineData(10)]
    [InlineData(1000)]
    [InlineData(KestrelBlockSize)]
    public async Task A_body_that_fits_a_block_asks_for_no_more_than_a_block(int length)
    {
        var head = await RequestSideDriver.HeadOf("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
        var pipe = new Pipe(new PipeOptions(pauseWriterThreshold: 0, useSynchronizationContext: false));
        var output = new HintRecordingWriter(pipe.Writer);
        var writer = new ResponseWriter(output);
        writer.Start(head);
        writer.BeginHead(200);
        writer.WriteField("Content-Type"u8, "text/plain"u8);
        Assert.True(writer.EndHead(DownstreamBody.ContentLength, length));
        while (writer.ExpectsMoreBody)
        {
            var memory = writer.GetBodyMemory();
            memory.Span.Fill((byte)'x');
            writer.AdvanceBody(memory.Length);
        }
        writer.CompleteBody();
        await writer.FlushAsync();
        Assert.True(output.LargestHint <= KestrelBlockSize,
            $"a {length}-byte body asked the PipeWriter for {output.LargestHint} bytes: past Kestrel's block pool");
    }

    private sealed class HintRecordingWriter(PipeWriter inner) : PipeWriter
    {
        public int LargestHint { get; private set; }

        public override Memory<byte> GetMemory(int sizeHint = 0)
        {
            LargestHint = Math.Max(LargestHint, sizeHint);
            return inner.GetMemory(sizeHint);
        }

        public override Span<byte> GetSpan(int sizeHint = 0)
        {
            LargestHint = Math.Max(LargestHint, sizeHint);
            return inner.GetSpan(sizeHint);
        }

        public override void Advance(int bytes) => inner.Advance(bytes);

        public override void CancelPendingFlush() => inner.CancelPendingFlush();

        public override void Complete(Exception? exception = null) => inner.Complete(exception);

        public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default) => inner.FlushAsync(cancellationToken);
    }
}
