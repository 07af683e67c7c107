namespace LLHttp2.Frames;

/// <summary>RFC 9113 §3.4: the client connection preface, 24 bytes, followed by the client's SETTINGS frame.</summary>
public static class Http2Preface
{
    public const int Length = 24;

    /// <summary>"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".</summary>
    public static ReadOnlySpan<byte> Client => "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"u8;

    /// <summary>
    /// Whether <paramref name="buffer"/> starts with the preface: true (and the buffer sliced past it) when it does,
    /// false when too few bytes arrived yet; anything else is a connection error PROTOCOL_ERROR (RFC 9113 §3.4).
    /// </summary>
    public static bool TryRead(ref ReadOnlySequence<byte> buffer)
    {
        Span<byte> start = stackalloc byte[Length];
        int available = (int)Math.Min(buffer.Length, Length);
        buffer.Slice(0, available).CopyTo(start);
        if (!start[..available].SequenceEqual(Client[..available]))
        {
            Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, "The connection does not start with the HTTP/2 client preface");
        }

        if (available < Length)
        {
            return false;
        }

        buffer = buffer.Slice(Length);
        return true;
    }
}
