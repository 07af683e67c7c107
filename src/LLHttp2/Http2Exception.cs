namespace LLHttp2;

/// <summary>
/// The one exception type of the codec: a protocol error of RFC 9113 §5.4 with its code and whether it ends the
/// connection (GOAWAY) or only one stream (RST_STREAM). Errors are rare, so they are thrown through
/// <see cref="Http2Throw"/>; the success path never allocates.
/// </summary>
public sealed class Http2Exception : Exception
{
    public Http2Exception(Http2ErrorCode code, bool isConnectionError, int streamId, string message)
        : base(message)
    {
        Code = code;
        IsConnectionError = isConnectionError;
        StreamId = streamId;
    }

    /// <summary>The code for the GOAWAY or RST_STREAM frame that answers the error.</summary>
    public Http2ErrorCode Code { get; }

    /// <summary>True for a connection error (RFC 9113 §5.4.1), false for a stream error (§5.4.2).</summary>
    public bool IsConnectionError { get; }

    /// <summary>The stream a stream error ends; for a connection error the stream of the offending frame (0 if none).</summary>
    public int StreamId { get; }
}

/// <summary>Throw helpers, so that the methods that detect an error stay small enough to inline and the throw stays cold.</summary>
public static class Http2Throw
{
    [DoesNotReturn, StackTraceHidden, MethodImpl(MethodImplOptions.NoInlining)]
    public static void ConnectionError(Http2ErrorCode code, string message)
        => throw new Http2Exception(code, isConnectionError: true, streamId: 0, message);

    [DoesNotReturn, StackTraceHidden, MethodImpl(MethodImplOptions.NoInlining)]
    public static void ConnectionError(Http2ErrorCode code, int streamId, string message)
        => throw new Http2Exception(code, isConnectionError: true, streamId, $"{message} (stream {streamId})");

    [DoesNotReturn, StackTraceHidden, MethodImpl(MethodImplOptions.NoInlining)]
    public static void StreamError(Http2ErrorCode code, int streamId, string message)
        => throw new Http2Exception(code, isConnectionError: false, streamId, $"{message} (stream {streamId})");

    /// <summary>RFC 7541 errors: every decoding error leaves the dynamic table out of step with the peer's encoder.</summary>
    [DoesNotReturn, StackTraceHidden, MethodImpl(MethodImplOptions.NoInlining)]
    public static void CompressionError(string message)
        => throw new Http2Exception(Http2ErrorCode.CompressionError, isConnectionError: true, streamId: 0, message);

    [DoesNotReturn, StackTraceHidden, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void Argument(string paramName, string message) => throw new ArgumentException(message, paramName);

    [DoesNotReturn, StackTraceHidden, MethodImpl(MethodImplOptions.NoInlining)]
    internal static void DestinationTooSmall() => throw new ArgumentException("The destination is too small", "destination");
}
