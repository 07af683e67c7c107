namespace LLRP.Errors;

/// <summary>
/// Why an exchange ended before a complete response. Every failure of the proxy is one of these; what the client
/// sees for each is decided in one place, <see cref="ProxyErrors.StatusCode"/>.
/// </summary>
internal enum ProxyError : byte
{
    /// <summary>The request head or body breaks HTTP/1.1 syntax or the proxy's policy (RFC 9110 §15.5.1): 400.</summary>
    BadRequest,
    /// <summary>CONNECT: the proxy provides no tunnels (RFC 9110 §9.3.6): 405.</summary>
    MethodNotAllowed,
    /// <summary>The client started a request head or body and stopped sending it in time (RFC 9110 §15.5.9): 408.</summary>
    RequestTimeout,
    /// <summary>The body is larger than maxRequestBodySize (RFC 9110 §15.5.14): 413.</summary>
    ContentTooLarge,
    /// <summary>The request line is longer than maxRequestLineSize (RFC 9110 §15.5.15): 414.</summary>
    UriTooLong,
    /// <summary>An Expect other than 100-continue (RFC 9110 §10.1.1): 417.</summary>
    ExpectationFailed,
    /// <summary>Too many or too large header fields (RFC 6585 §5): 431.</summary>
    HeaderFieldsTooLarge,
    /// <summary>A transfer coding or request form the proxy (or the variant's client) cannot forward (RFC 9110 §15.6.2): 501.</summary>
    NotImplemented,
    /// <summary>An HTTP version other than 1.0 and 1.1 (RFC 9110 §15.6.6): 505.</summary>
    VersionNotSupported,
    /// <summary>No connection to the downstream, or it failed before a response (RFC 9110 §15.6.3): 502.</summary>
    DownstreamUnavailable,
    /// <summary>The downstream answered something that is not valid HTTP (1.1 or 2) or cannot be framed safely: 502.</summary>
    DownstreamInvalidResponse,
    /// <summary>The downstream made no progress within downstreamResponseTimeout (RFC 9110 §15.6.5): 504.</summary>
    DownstreamTimeout,
    /// <summary>The downstream failed in the middle of the response: 502 if nothing was sent yet, else the client connection is aborted.</summary>
    DownstreamBodyCutShort,
    /// <summary>Health has taken every downstream out (loadBalancing, passive and active health): 503 (RFC 9110 §15.6.4).</summary>
    NoDownstreamAvailable,
    /// <summary>The client closed or reset the connection: there is no one to answer.</summary>
    ClientGone,
}
