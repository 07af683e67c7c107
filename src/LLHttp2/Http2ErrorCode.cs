namespace LLHttp2;

/// <summary>The error codes of RFC 9113 §7, as RST_STREAM and GOAWAY carry them (32 bits on the wire).</summary>
public enum Http2ErrorCode : uint
{
    /// <summary>Not an error; a graceful GOAWAY.</summary>
    NoError = 0x0,
    /// <summary>An unspecific protocol error.</summary>
    ProtocolError = 0x1,
    /// <summary>An unexpected internal error.</summary>
    InternalError = 0x2,
    /// <summary>The peer violated the flow-control protocol (RFC 9113 §6.9).</summary>
    FlowControlError = 0x3,
    /// <summary>A SETTINGS frame was not acknowledged in time.</summary>
    SettingsTimeout = 0x4,
    /// <summary>A frame arrived after the stream was half-closed.</summary>
    StreamClosed = 0x5,
    /// <summary>A frame had an invalid size (RFC 9113 §4.2).</summary>
    FrameSizeError = 0x6,
    /// <summary>The stream was refused before any application processing.</summary>
    RefusedStream = 0x7,
    /// <summary>The stream is no longer needed.</summary>
    Cancel = 0x8,
    /// <summary>The field section compression context cannot be maintained (RFC 7541).</summary>
    CompressionError = 0x9,
    /// <summary>The connection of a CONNECT request was reset or closed abnormally.</summary>
    ConnectError = 0xa,
    /// <summary>The peer behaves in a way that may generate excessive load.</summary>
    EnhanceYourCalm = 0xb,
    /// <summary>The transport does not meet the minimum security requirements (RFC 9113 §9.2).</summary>
    InadequateSecurity = 0xc,
    /// <summary>HTTP/1.1 is required instead of HTTP/2.</summary>
    Http11Required = 0xd,
}
