namespace LLRP.Forwarding;

/// <summary>
/// A forwarding variant (design.md step 6): sends the connection's current request downstream and relays the
/// response through <see cref="ProxyConnection.Response"/>. Parsing, validation, body de-framing, header policy
/// and client framing are the shared request side's; a variant only moves bytes between them and its client.
/// One instance per inbound connection.
/// </summary>
internal interface IForwarder : IDisposable
{
    /// <summary>
    /// Completes when the response was written to the client (not necessarily flushed). Failures are
    /// <see cref="DownstreamException"/> (the proxy answers 502/504 or aborts the client),
    /// <see cref="Http1.RequestBodyException"/> (the client's body was bad) or cancellation.
    /// </summary>
    ValueTask ForwardAsync(ProxyConnection connection);
}

internal enum DownstreamError : byte
{
    /// <summary>Could not connect, or the connection failed before a response: 502.</summary>
    Unavailable,
    /// <summary>The downstream answered something that is not valid HTTP/1.1: 502.</summary>
    InvalidResponse,
    /// <summary>No response head within downstreamResponseTimeout: 504.</summary>
    Timeout,
    /// <summary>The downstream closed or failed in the middle of the body: the client connection is aborted.</summary>
    BodyCutShort,
}

internal sealed class DownstreamException(DownstreamError error, string message, Exception? inner = null) : Exception(message, inner)
{
    public DownstreamError Error { get; } = error;

    public int StatusCode => Error == DownstreamError.Timeout ? 504 : 502;
}
