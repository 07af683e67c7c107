namespace LLRP.Http1;

/// <summary>How the request body is delimited (RFC 9112 §6.3 for HTTP/1.1); the variant frames it for the downstream from this.</summary>
internal enum BodyFraming : byte
{
    None,
    ContentLength,
    /// <summary>HTTP/1.1 chunked coding on the client's connection, which the body reader decodes (RFC 9112 §7.1).</summary>
    Chunked,
    /// <summary>
    /// No length was declared and another layer has de-framed the body: it ends with its stream (an HTTP/2 stream's DATA
    /// without content-length, RFC 9113 §8.1; the body Kestrel's HTTP/1.1 layer de-chunked). An HTTP/1.1 downstream
    /// gets it chunked, as a <see cref="Chunked"/> one (<see cref="RequestHead.LengthUnknown"/>).
    /// </summary>
    UntilEnd,
}
