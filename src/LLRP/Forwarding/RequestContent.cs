using System.Net;

namespace LLRP.Forwarding;

/// <summary>
/// The client's de-framed request body as HttpClient content: HttpClient frames it again, with Content-Length when
/// the length is known and chunked otherwise. Subclasses say where the bytes come from. Over HTTP/2
/// (<paramref name="flushEachWrite"/>) every piece is flushed as it is written: SocketsHttpHandler's HTTP/2 request
/// stream holds small writes in its connection's buffer until a flush, and a streamed request (a gRPC client stream)
/// must reach the downstream message by message, not when the buffer fills or the body ends.
/// </summary>
internal abstract class RequestContent(long? length, bool flushEachWrite) : HttpContent
{
    /// <summary>Every piece is flushed as it is written (an HTTP/2 downstream).</summary>
    protected bool FlushEachWrite => flushEachWrite;

    /// <summary>Writes one piece of the body to HttpClient's request stream.</summary>
    protected async ValueTask WritePieceAsync(Stream stream, ReadOnlyMemory<byte> piece, CancellationToken cancellationToken)
    {
        await stream.WriteAsync(piece, cancellationToken);
        if (flushEachWrite)
        {
            await stream.FlushAsync(cancellationToken);
        }
    }

    protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context) =>
        SerializeToStreamAsync(stream, context, CancellationToken.None);

    protected abstract override Task SerializeToStreamAsync(Stream stream, TransportContext? context, CancellationToken cancellationToken);

    protected override bool TryComputeLength(out long computed)
    {
        computed = length ?? 0;
        return length.HasValue;
    }
}
