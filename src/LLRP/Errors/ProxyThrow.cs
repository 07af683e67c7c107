using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;

namespace LLRP.Errors;

/// <summary>Throw sites out of line, so the paths that validate stay small.</summary>
internal static class ProxyThrow
{
    [DoesNotReturn, StackTraceHidden, MethodImpl(MethodImplOptions.NoInlining)]
    public static void Throw(ProxyError error, string message) => throw new ProxyException(error, message);

    [DoesNotReturn, StackTraceHidden, MethodImpl(MethodImplOptions.NoInlining)]
    public static void Throw(ProxyError error, string message, Exception innerException) =>
        throw new ProxyException(error, message, innerException);

    [DoesNotReturn, StackTraceHidden, MethodImpl(MethodImplOptions.NoInlining)]
    public static void BadRequest(string message) => throw new ProxyException(ProxyError.BadRequest, message);

    /// <summary>A write to the client found its output completed: the client is gone.</summary>
    [DoesNotReturn, StackTraceHidden, MethodImpl(MethodImplOptions.NoInlining)]
    public static void ClientGone() => throw new ProxyException(ProxyError.ClientGone, "The client closed the connection.");
}
