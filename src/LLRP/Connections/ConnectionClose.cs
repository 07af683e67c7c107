using System.IO.Pipelines;
using LLRP.Transport;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;

namespace LLRP.Connections;

/// <summary>How a front end ends a client connection it closes itself.</summary>
internal enum ConnectionEnding : byte
{
    /// <summary>A graceful close: the response (if any) is complete; over TLS a close_notify goes before the FIN.</summary>
    Close,

    /// <summary>
    /// A graceful close of a connection whose client may still be sending (an error answer before the request ended, a
    /// body the proxy did not read): after the close_notify, a lingering close (<see cref="ConnectionClose"/>).
    /// </summary>
    Linger,

    /// <summary>
    /// Nothing more may reach the client: a response cut short must look incomplete (RFC 9112 §6.3), so no close_notify
    /// that would make it look whole. The connection was aborted already, or its client is gone.
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
    /// Ends <paramref name="context"/> as <paramref name="ending"/> says, before Kestrel disposes its transport (which
    /// closes the socket).
    /// <para>
    /// Over TLS a graceful close sends close_notify (RFC 8446 §6.1: each party MUST send it before closing its write
    /// side, unless it sent an error alert; without it a client such as OpenSSL reports "unexpected eof", and cannot
    /// tell the close from a truncation). Kestrel's TLS middleware disposes its SslStream after the connection's handler
    /// returns without sending one, so the handler's end sends it: the alert is written through the transport while its
    /// output is still open, and so reaches the wire before the FIN.
    /// </para>
    /// <para>
    /// <see cref="ConnectionEnding.Linger"/> then closes lingeringly, as nginx's lingering_close and HAProxy do: the
    /// socket's sending side is shut down (the FIN right after the last response byte, or the close_notify), and what the
    /// client still sends is read and discarded until it closes its side, sends nothing for lingeringTimeout, or
    /// lingeringTime or lingeringMaxBytes run out; then Kestrel closes the socket. Closing at once with unread input
    /// would make the kernel answer with a reset, which can destroy the response in the client's receive buffer before
    /// the client reads it. Only where the transport can shut its sending side down alone (<see cref="IHalfCloseFeature"/>,
    /// the epoll transport); on Kestrel's socket transport the connection closes at once, as before.
    /// </para>
    /// Completes synchronously on a cleartext connection that does not linger.
    /// </summary>
    public static ValueTask EndAsync(ConnectionContext context, ConnectionEnding ending, ProxyServer server)
    {
        if (ending == ConnectionEnding.Abort)
        {
            return ValueTask.CompletedTask;
        }
        var tls = context.Features.Get<ISslStreamFeature>();
        return tls is null && ending == ConnectionEnding.Close ? ValueTask.CompletedTask : EndGracefullyAsync(context, ending, tls, server);
    }

    private static async ValueTask EndGracefullyAsync(ConnectionContext context, ConnectionEnding ending, ISslStreamFeature? tls, ProxyServer server)
    {
        try
        {
            if (tls is not null)
            {
                await tls.SslStream.ShutdownAsync();
            }
            if (ending == ConnectionEnding.Linger && server.Options.LingeringTime > TimeSpan.Zero && !server.Stopping
                && context.Features.Get<IHalfCloseFeature>() is { } halfClose && halfClose.CloseOutput())
            {
                await DiscardAsync(context.Transport.Input, server);
            }
        }
        catch (Exception e) when (e is IOException or ObjectDisposedException or InvalidOperationException or NotSupportedException
            or OperationCanceledException or ConnectionAbortedException or ConnectionResetException)
        {
            // The client went away, or the connection was aborted or the linger ended meanwhile: nothing left to do.
        }
    }

    // Reads and throws away what the client sends, within the lingering bounds; a stop ends it at once.
    private static async ValueTask DiscardAsync(PipeReader input, ProxyServer server)
    {
        var options = server.Options;
        var end = Environment.TickCount64 + (long)options.LingeringTime.TotalMilliseconds;
        var quiet = (long)options.LingeringTimeout.TotalMilliseconds;
        long discarded = 0;
        using var wait = CancellationTokenSource.CreateLinkedTokenSource(server.StoppingToken);
        while (true)
        {
            var left = end - Environment.TickCount64;
            if (left <= 0)
            {
                return;
            }
            // Restarts the timer: each read may wait lingeringTimeout, all of them together lingeringTime.
            wait.CancelAfter(TimeSpan.FromMilliseconds(Math.Min(left, quiet)));
            var result = await input.ReadAsync(wait.Token);
            discarded += result.Buffer.Length;
            input.AdvanceTo(result.Buffer.End);
            // A canceled result is not the linger's (its own end is the token's): the request loop's timeout may have
            // cancelled a read that was not pending then (CancelPendingRead cancels the next one), as a 408 does.
            if (result.IsCompleted || discarded >= options.LingeringMaxBytes)
            {
                return;
            }
        }
    }
}
