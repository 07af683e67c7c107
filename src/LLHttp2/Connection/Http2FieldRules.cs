namespace LLHttp2.Connection;

/// <summary>
/// The RFC 9113 §8.2 field rules requests and responses share, for the field checkers of both sides: syntax (§8.2.1),
/// connection-specific fields (§8.2.2) and content-length (§8.1.1). Each check returns the rule broken as a literal
/// (nothing is allocated), null when the field passes.
/// </summary>
internal static class Http2FieldRules
{
    /// <summary>§8.2.1: a name, no CR, LF or NUL in the name or value.</summary>
    public static string? CheckSyntax(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        if (name.IsEmpty)
        {
            return "Empty field name (RFC 9113 §8.2.1)";
        }

        if (name.IndexOfAny((byte)'\r', (byte)'\n', (byte)0) >= 0 || value.IndexOfAny((byte)'\r', (byte)'\n', (byte)0) >= 0)
        {
            return "CR, LF or NUL in a field (RFC 9113 §8.2.1)";
        }

        return null;
    }

    /// <summary>
    /// A regular field (not a pseudo-header): no uppercase (§8.2.1), none of the connection-specific fields (§8.2.2),
    /// content-length digits and, repeated, equal (RFC 9110 §8.6); <paramref name="contentLength"/> is -1 until one
    /// is seen. TE, allowed in a request as "trailers", is the request checker's.
    /// </summary>
    public static string? CheckRegular(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, ref long contentLength)
    {
        if (name.IndexOfAnyInRange((byte)'A', (byte)'Z') >= 0)
        {
            return "Uppercase field name (RFC 9113 §8.2.1)";
        }

        switch (name.Length)
        {
            case 7 when name.SequenceEqual("upgrade"u8):
            case 10 when name.SequenceEqual("connection"u8) || name.SequenceEqual("keep-alive"u8):
            case 16 when name.SequenceEqual("proxy-connection"u8):
            case 17 when name.SequenceEqual("transfer-encoding"u8):
                return "Connection-specific field (RFC 9113 §8.2.2)";
            case 14 when name.SequenceEqual("content-length"u8):
                return CheckContentLength(value, ref contentLength);
            default:
                return null;
        }
    }

    private static string? CheckContentLength(ReadOnlySpan<byte> value, ref long contentLength)
    {
        // Digits only (RFC 9110 §8.6); at most 18 of them, so the value fits a long without overflow checks.
        if (value.IsEmpty || value.Length > 18 || value.IndexOfAnyExceptInRange((byte)'0', (byte)'9') >= 0)
        {
            return "Invalid content-length (RFC 9110 §8.6)";
        }

        long length = 0;
        foreach (byte b in value)
        {
            length = (length * 10) + (b - '0');
        }

        if (contentLength >= 0 && contentLength != length)
        {
            return "Conflicting content-length fields (RFC 9110 §8.6)";
        }

        contentLength = length;
        return null;
    }
}
