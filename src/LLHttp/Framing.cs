namespace LLHttp;

/// <summary>How the request body is framed. The client writes Content-Length / Transfer-Encoding itself.</summary>
public enum RequestBodyFraming : byte
{
    None,
    ContentLength,
    Chunked,
}

/// <summary>How the response body is delimited, decided by RFC 9112 §6.3.</summary>
public enum ResponseBodyFraming : byte
{
    /// <summary>HEAD request, 1xx, 204 or 304: no body whatever the headers say.</summary>
    None,
    ContentLength,
    Chunked,
    /// <summary>No framing header: the body ends when the peer closes. The connection is not reusable.</summary>
    CloseDelimited,
}
