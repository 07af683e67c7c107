using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;

namespace LLRP.Connections;

/// <summary>How a front end ends a client connection it closes itself.</summary>
internal enum ConnectionEnding : byte
{
    /// <summary>A graceful close: the response (if any) is complete; over TLS a close_notify goes before the FIN.</summary>
    Close,

    /// <summary>
    /// Nothing more may reach the client: a response cut short must look incomplete (RFC 9112 §6.3), so no close_notify
    /// that would make it look whole. The connection was aborted already.
    /// </summary>
    Abort,
}

/// <summary>
/// The end of every client connection the proxy closes itself, whichever front end served it (the raw handler, or
/// Kestrel's HTTP/1.1 and HTTP/2 after their last response or GOAWAY): the one place that decides what goes on the
/// wire between the last response byte and the close.
/// </summary>
internal static class ConnectionClose
{
    /// <summary>
    /// Ends <paramref name="context"/> as <paramref name="ending"/> says, before Kestrel disposes its transport. Over
    /// TLS a graceful close sends close_notify (RFC 8446 §6.1: each party MUST send it before closing its write side,
    /// unless it sent an error alert; without it a client such as OpenSSL reports "unexpected eof", and cannot tell the
    /// close from a truncation). Kestrel's TLS middleware disposes its SslStream after the connection's handler
    /// returns without sending one, so the handler's end sends it: the alert is written through the transport while
    /// its output is still open, and so reaches the wire before the FIN that Kestrel's disposal of the transport sends.
    /// Completes synchronously on a cleartext connection.
    /// </summary>
    public static ValueTask EndAsync(ConnectionContext context, ConnectionEnding ending)
    {
        if (ending == ConnectionEnding.Abort || context.Features.Get<ISslStreamFeature>() is not { } tls)
        {
            return ValueTask.CompletedTask;
        }
        return SendCloseNotifyAsync(tls);
    }

    private static async ValueTask SendCloseNotifyAsync(ISslStreamFeature tls)
    {
        try
        {
            await tls.SslStream.ShutdownAsync();
        }
        catch (Exception e) when (e is IOException or ObjectDisposedException or InvalidOperationException or NotSupportedException
            or OperationCanceledException or ConnectionAbortedException or ConnectionResetException)
        {
            // The client went away or the connection was aborted meanwhile: there is no one to tell.
        }
    }
}
