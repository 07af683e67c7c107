namespace LLRP.Http1;

/// <summary>How the client framed its request body (RFC 9112 §6.3); the variant re-frames it the same way.</summary>
internal enum BodyFraming : byte
{
    None,
    ContentLength,
    Chunked,
}
