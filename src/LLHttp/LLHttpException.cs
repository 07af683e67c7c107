namespace LLHttp;

/// <summary>
/// The one exception type of the client. Errors are rare, so they are thrown; the success path never allocates.
/// Any <see cref="LLHttpException"/> aborts the connection it came from.
/// </summary>
public sealed class LLHttpException : IOException
{
    public LLHttpException(LLHttpError error, string message, Exception? innerException = null)
        : base(message, innerException)
    {
        Error = error;
    }

    public LLHttpError Error { get; }

    /// <summary>True for the three timeout kinds.</summary>
    public bool IsTimeout => Error is LLHttpError.ConnectTimeout or LLHttpError.ResponseHeadTimeout or LLHttpError.BodyIdleTimeout;

    /// <summary>
    /// The server never processed the request (<see cref="LLHttpError.StreamRefused"/>): it may be sent again on another
    /// connection, whatever its method (RFC 9113 §8.7), provided the caller still holds its body.
    /// </summary>
    public bool IsRetryable => Error is LLHttpError.StreamRefused;
}

internal static class ThrowHelper
{
    // Enough to see what went wrong without logging a whole hostile header block.
    private const int MaxDetailLength = 64;

    [DoesNotReturn, StackTraceHidden, MethodImpl(MethodImplOptions.NoInlining)]
    public static void Throw(LLHttpError error, string message)
        => throw new LLHttpException(error, message);

    [DoesNotReturn, StackTraceHidden, MethodImpl(MethodImplOptions.NoInlining)]
    public static void Throw(LLHttpError error, string message, ReadOnlySpan<byte> offending)
        => throw new LLHttpException(error, $"{message}: '{Escape(offending)}'");

    [DoesNotReturn, StackTraceHidden, MethodImpl(MethodImplOptions.NoInlining)]
    public static void ThrowInvalidOperation(string message) => throw new InvalidOperationException(message);

    [DoesNotReturn, StackTraceHidden, MethodImpl(MethodImplOptions.NoInlining)]
    public static void ThrowArgument(string paramName, string message) => throw new ArgumentException(message, paramName);

    public static string Escape(ReadOnlySpan<byte> bytes)
    {
        var sb = new System.Text.StringBuilder();
        foreach (byte b in bytes[..Math.Min(bytes.Length, MaxDetailLength)])
        {
            if (b is >= 0x20 and < 0x7F and not (byte)'\\')
            {
                sb.Append((char)b);
            }
            else
            {
                sb.Append($"\\x{b:X2}");
            }
        }

        if (bytes.Length > MaxDetailLength)
        {
            sb.Append("...");
        }

        return sb.ToString();
    }
}
