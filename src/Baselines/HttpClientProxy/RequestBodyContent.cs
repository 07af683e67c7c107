using System.IO.Pipelines;
using System.Net;

namespace HttpClientProxy;

/// <summary>
/// Streams the client's request body to the downstream straight from Kestrel's pipe: each received segment is written
/// to HttpClient's stream as is, with no intermediate buffer as StreamContent would use.
/// </summary>
internal sealed class RequestBodyContent(PipeReader body) : HttpContent
{
    private bool _started;

    protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context) =>
        SerializeToStreamAsync(stream, context, CancellationToken.None);

    protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context, CancellationToken cancellationToken)
    {
        // The client's body can be read once: a second send (a retry) would forward a truncated body.
        if (_started)
        {
            throw new InvalidOperationException("The request body was already sent once and cannot be replayed.");
        }
        _started = true;
        return body.CopyToAsync(stream, cancellationToken);
    }

    // Unknown, so HttpClient frames the body with Content-Length when the copied header gives one, chunked otherwise.
    protected override bool TryComputeLength(out long length)
    {
        length = 0;
        return false;
    }
}
