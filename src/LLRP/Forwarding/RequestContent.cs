using System.Net;

namespace LLRP.Forwarding;

/// <summary>
/// The client's de-framed request body as HttpClient content: HttpClient frames it again, with Content-Length when
/// the length is known and chunked otherwise. Subclasses say where the bytes come from.
/// </summary>
internal abstract class RequestContent(long? length) : HttpContent
{
    protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context) =>
        SerializeToStreamAsync(stream, context, CancellationToken.None);

    protected abstract override Task SerializeToStreamAsync(Stream stream, TransportContext? context, CancellationToken cancellationToken);

    protected override bool TryComputeLength(out long computed)
    {
        computed = length ?? 0;
        return length.HasValue;
    }
}
