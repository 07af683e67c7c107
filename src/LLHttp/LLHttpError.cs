namespace LLHttp;

/// <summary>Why an exchange failed. A proxy maps these to its own status codes (see README).</summary>
public enum LLHttpError : byte
{
    /// <summary>The TCP connect failed (refused, unreachable). A proxy answers 502.</summary>
    ConnectFailed,
    /// <summary><see cref="LLHttpOptions.ConnectTimeout"/> elapsed. A proxy answers 502 (or 504).</summary>
    ConnectTimeout,
    /// <summary><see cref="LLHttpOptions.ResponseHeadTimeout"/> elapsed before a complete response head. A proxy answers 504.</summary>
    ResponseHeadTimeout,
    /// <summary><see cref="LLHttpOptions.BodyIdleTimeout"/> elapsed while sending the request or reading the response body.</summary>
    BodyIdleTimeout,
    /// <summary>The peer closed the connection before sending any byte of a response.</summary>
    ConnectionClosedBeforeResponse,
    /// <summary>The peer closed the connection in the middle of a response head.</summary>
    ResponseHeadIncomplete,
    /// <summary>The peer closed the connection before the end of a Content-Length or chunked body. A proxy must abort its client.</summary>
    ResponseBodyTruncated,
    /// <summary>The status line is not <c>HTTP/1.x SP 3DIGIT [SP reason] CRLF</c>.</summary>
    MalformedStatusLine,
    /// <summary>A header line is malformed: no colon, whitespace before the colon, obs-fold, NUL, bare CR or bare LF.</summary>
    MalformedHeader,
    /// <summary>The response head exceeds <see cref="LLHttpOptions.MaxResponseHeadersLength"/>.</summary>
    ResponseHeadTooLarge,
    /// <summary>The response head has more than <see cref="LLHttpOptions.MaxResponseHeaderCount"/> fields.</summary>
    TooManyHeaders,
    /// <summary>Content-Length is not a non-negative decimal integer, overflows, or disagrees with another Content-Length.</summary>
    InvalidContentLength,
    /// <summary>Transfer-Encoding does not end in a single <c>chunked</c>, or arrives in an HTTP/1.0 response.</summary>
    InvalidTransferEncoding,
    /// <summary>The chunked body is malformed (size, extension, CRLF or trailer).</summary>
    InvalidChunkedEncoding,
    /// <summary>A 101 (Switching Protocols) response: upgrades are not supported.</summary>
    UnsupportedUpgrade,
    /// <summary>More interim (1xx) responses than <see cref="LLHttpOptions.MaxInformationalResponses"/>.</summary>
    TooManyInformationalResponses,
    /// <summary>The caller wrote more or fewer request body bytes than the Content-Length it declared.</summary>
    RequestBodyLengthMismatch,
    /// <summary>The request head exceeds <see cref="LLHttpOptions.MaxRequestHeadLength"/>.</summary>
    RequestHeadTooLarge,
    /// <summary>A socket send failed.</summary>
    SendFailed,
    /// <summary>A socket receive failed.</summary>
    ReceiveFailed,
    /// <summary>The connection was aborted by an earlier error or cancellation and cannot be used.</summary>
    ConnectionAborted,
    /// <summary>The TLS handshake failed: the certificate was not trusted, expired or for another name, or no protocol
    /// or cipher suite was shared. Nothing of the request was sent. A proxy answers 502.</summary>
    TlsHandshakeFailed,
    /// <summary>HTTP/2: the server did not process the request (RST_STREAM REFUSED_STREAM, or the stream was above the
    /// last-stream-id of its GOAWAY, RFC 9113 §8.7): it may be retried on another connection, whatever its method.</summary>
    StreamRefused,
    /// <summary>HTTP/2: the server reset the stream with a code other than REFUSED_STREAM, or this client reset it after a
    /// malformed response. A proxy answers 502 (or aborts its client once the head was relayed).</summary>
    StreamReset,
    /// <summary>HTTP/2: the connection failed with a protocol error (ours or the server's GOAWAY with an error code), or
    /// closed under its streams. Every stream on it fails with this.</summary>
    Http2ConnectionError,
    /// <summary>HTTP/2: the server did not acknowledge our SETTINGS within <see cref="LLHttpOptions.Http2SettingsAckTimeout"/>.</summary>
    Http2SettingsTimeout,
    /// <summary>HTTP/2: the server did not answer a PING within <see cref="LLHttpOptions.Http2PingTimeout"/>; the connection failed.</summary>
    Http2PingTimeout,
}
