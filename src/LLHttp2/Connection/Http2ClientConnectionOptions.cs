namespace LLHttp2.Connection;

/// <summary>
/// The settings a <see cref="Http2ClientConnection"/> advertises and the limits it holds a downstream server to: the
/// same flood limits as the server side's (<see cref="Http2ConnectionOptions"/>, each a named default with its
/// source), since a hostile downstream can send what a hostile client can, and the client's own.
/// </summary>
public sealed class Http2ClientConnectionOptions : Http2ConnectionOptions
{
    /// <summary>
    /// The encoder's dynamic table whatever SETTINGS_HEADER_TABLE_SIZE the server allows:
    /// <see cref="Hpack.HpackEncoder.DefaultMaxHeaderTableSize"/> (4 KiB, nghttp2's deflater cap), so a server's 2^32-1
    /// does not make one connection hold more.
    /// </summary>
    public int MaxEncoderTableSize { get; init; } = Hpack.HpackEncoder.DefaultMaxHeaderTableSize;
}
