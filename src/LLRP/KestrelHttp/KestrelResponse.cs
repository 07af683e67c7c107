using System.Text;
using LLRP.Http1;
using Microsoft.AspNetCore.Http.Features;

namespace LLRP.KestrelHttp;

/// <summary>
/// A response Kestrel frames (an HTTP/2 stream of its HTTP layer, or its HTTP/1.1 front end): the status and fields go
/// to its response feature, trailers to its trailers feature (HTTP/2 only). Kestrel's fields are strings, so each
/// field costs two; that is the layer's price, and what the proxy's own HTTP/2 front end does not pay.
/// </summary>
internal sealed class KestrelResponse : IFramedResponse
{
    private IHttpResponseFeature _feature = null!;
    private IHttpResponseTrailersFeature? _trailers;

    /// <summary>The next request's features.</summary>
    public void Bind(IHttpResponseFeature feature, IHttpResponseTrailersFeature? trailers)
    {
        _feature = feature;
        _trailers = trailers;
    }

    public void SetStatus(int status) => _feature.StatusCode = status;

    // Kestrel's front end lets no request upgrade (its exchanges have no client connection to tunnel, Exchange.Upgrading).
    public void BeginTunnel() => throw new NotSupportedException("Kestrel's front end does not tunnel.");

    public void AddField(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) =>
        _feature.Headers.Append(Encoding.Latin1.GetString(name), Encoding.Latin1.GetString(value));

    public void AddField(string name, string value) => _feature.Headers.Append(name, value);

    public void SetContentLength(long length) => _feature.Headers.ContentLength = length;

    public bool TakesTrailers => _trailers is not null;

    public void AddTrailer(string name, string value) => _trailers!.Trailers.Append(name, value);
}
