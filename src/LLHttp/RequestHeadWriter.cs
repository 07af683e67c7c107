namespace LLHttp;

/// <summary>
/// Serializes an HTTP/1.1 request head. Every input is validated, so a caller cannot inject CR/LF (request splitting),
/// except through <see cref="WriteValidatedHeader"/>, whose caller has already checked the field with the same rules.
/// </summary>
internal static class RequestHeadWriter
{
    // "Content-Length: " + 19 digits + CRLF.
    private const int MaxContentLengthFieldLength = 16 + 19 + 2;

    public static void WriteRequestLine(SendBuffer buffer, ReadOnlySpan<byte> method, ReadOnlySpan<byte> requestTarget, ReadOnlySpan<byte> authority)
    {
        // RFC 9112 §3: method = token; request-target and Host never contain SP or controls.
        if (!HttpChars.IsToken(method))
        {
            ThrowHelper.ThrowArgument(nameof(method), "The method is not an RFC 9110 token.");
        }

        if (!HttpChars.IsWithoutWhitespaceOrControl(requestTarget))
        {
            ThrowHelper.ThrowArgument(nameof(requestTarget), "The request target is empty or contains whitespace or a control byte.");
        }

        if (!HttpChars.IsWithoutWhitespaceOrControl(authority))
        {
            ThrowHelper.ThrowArgument(nameof(authority), "The authority is empty or contains whitespace or a control byte.");
        }

        // One bounds check and one growth for the whole line: method SP target " HTTP/1.1\r\nHost: " authority CRLF.
        ReadOnlySpan<byte> versionAndHost = " HTTP/1.1\r\nHost: "u8;
        int length = method.Length + 1 + requestTarget.Length + versionAndHost.Length + authority.Length + 2;
        Span<byte> span = buffer.GetSpan(length);
        method.CopyTo(span);
        int pos = method.Length;
        span[pos++] = HttpChars.SP;
        requestTarget.CopyTo(span[pos..]);
        pos += requestTarget.Length;
        versionAndHost.CopyTo(span[pos..]);
        pos += versionAndHost.Length;
        authority.CopyTo(span[pos..]);
        pos += authority.Length;
        WriteCrlf(span[pos..]);
        buffer.Advance(length);
    }

    public static void WriteHeader(SendBuffer buffer, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        if (!HttpChars.IsToken(name))
        {
            ThrowHelper.ThrowArgument(nameof(name), "The header name is not an RFC 9110 token.");
        }

        if (IsWrittenByClient(name))
        {
            ThrowHelper.ThrowArgument(nameof(name), "Host, Content-Length and Transfer-Encoding are written by the client.");
        }

        if (!HttpChars.IsFieldValue(value))
        {
            ThrowHelper.ThrowArgument(nameof(value), "The header value contains a control byte.");
        }

        WriteValidatedHeader(buffer, name, value);
    }

    /// <summary>
    /// Writes a field the caller has already validated with <see cref="HttpChars"/>: a token name that is not Host,
    /// Content-Length or Transfer-Encoding, and a value without controls (RFC 9110 §5.1, §5.5). A proxy that parsed the
    /// field strictly on receipt forwards it through here, so it is not checked twice; Debug builds still check.
    /// </summary>
    public static void WriteValidatedHeader(SendBuffer buffer, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        Debug.Assert(HttpChars.IsToken(name) && !IsWrittenByClient(name) && HttpChars.IsFieldValue(value));
        int length = name.Length + 2 + value.Length + 2;
        Span<byte> span = buffer.GetSpan(length);
        name.CopyTo(span);
        int pos = name.Length;
        Unsafe.WriteUnaligned(ref span[pos], BitConverter.IsLittleEndian ? (ushort)0x203A : (ushort)0x3A20); // ": "
        pos += 2;
        value.CopyTo(span[pos..]);
        pos += value.Length;
        WriteCrlf(span[pos..]);
        buffer.Advance(length);
    }

    // The client owns framing and Host: a caller-supplied copy would contradict what the client writes (desync).
    private static bool IsWrittenByClient(ReadOnlySpan<byte> name) =>
        (name.Length == 4 && Ascii.EqualsIgnoreCase(name, "Host"u8))
        || (name.Length == 14 && Ascii.EqualsIgnoreCase(name, "Content-Length"u8))
        || (name.Length == 17 && Ascii.EqualsIgnoreCase(name, "Transfer-Encoding"u8));

    public static void WriteContentLength(SendBuffer buffer, long contentLength)
    {
        Span<byte> span = buffer.GetSpan(MaxContentLengthFieldLength);
        "Content-Length: "u8.CopyTo(span);
        contentLength.TryFormat(span[16..], out int digits, default, CultureInfo.InvariantCulture);
        WriteCrlf(span[(16 + digits)..]);
        buffer.Advance(16 + digits + 2);
    }

    public static void WriteChunkedEncoding(SendBuffer buffer) => buffer.Write("Transfer-Encoding: chunked\r\n"u8);

    public static void WriteEndOfHead(SendBuffer buffer) => WriteCrlf(buffer);

    /// <summary>Chunk header: hex size CRLF (RFC 9112 §7.1).</summary>
    public static void WriteChunkHeader(SendBuffer buffer, int size)
    {
        Span<byte> span = buffer.GetSpan(8 + 2);
        ((uint)size).TryFormat(span, out int digits, "X", CultureInfo.InvariantCulture);
        WriteCrlf(span[digits..]);
        buffer.Advance(digits + 2);
    }

    /// <summary>Last chunk and the empty trailer section.</summary>
    public static void WriteLastChunk(SendBuffer buffer) => buffer.Write("0\r\n\r\n"u8);

    public static void WriteCrlf(SendBuffer buffer)
    {
        WriteCrlf(buffer.GetSpan(2));
        buffer.Advance(2);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void WriteCrlf(Span<byte> span)
    {
        _ = span[1];
        Unsafe.WriteUnaligned(ref span[0], BitConverter.IsLittleEndian ? (ushort)0x0A0D : (ushort)0x0D0A);
    }
}
