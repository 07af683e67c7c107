namespace LLRP.Http1;

/// <summary>How the downstream framed its response body, as the variant learned it.</summary>
internal enum DownstreamBody : byte
{
    /// <summary>No body by RFC 9112 §6.3 rule 1 (HEAD, 1xx, 204, 304).</summary>
    None,
    ContentLength,
    /// <summary>Chunked or close-delimited: the length is unknown until the end.</summary>
    UntilEnd,
}
