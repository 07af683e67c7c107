using System.Buffers;
using System.Net.WebSockets;
using Microsoft.Extensions.Primitives;

namespace Downstream;

/// <summary>
/// "/ws": a WebSocket echo (RFC 6455), the origin of the WebSocket benchmark (crank/Jobs/WebSocketJob.cs). Every
/// message comes back as it came: its type, its bytes and where it ends; a close is answered with the same code and
/// reason (1000 for a close without a code). It sits on a branch of its own with ASP.NET Core's WebSockets middleware, so that every other path keeps the
/// one terminal handler and pays for no middleware but the branch's path test.
/// </summary>
internal static class WebSocketEcho
{
    public const string Path = "/ws";

    // One receive's most: a larger message comes back in pieces of this size, each sent with the end-of-message flag
    // of the piece it echoes, so any size passes without buffering a whole message. 16 KiB is Kestrel's and the
    // proxies' usual read size.
    private const int PieceSize = 16 * 1024;

    /// <summary>Puts the echo on <see cref="Path"/>, before the terminal handler.</summary>
    public static void Map(WebApplication app, StringValues name) =>
        app.Map(Path, branch =>
        {
            // No pings from the origin (the default sends one every 2 minutes): the benchmark counts echoes, and a
            // proxy's tunnel should carry only the client's messages.
            branch.UseWebSockets(new WebSocketOptions { KeepAliveInterval = TimeSpan.Zero });
            branch.Run(context => HandleAsync(context, name));
        });

    private static async Task HandleAsync(HttpContext context, StringValues name)
    {
        // Set before the handshake: the 101 carries it like every other answer of Downstream.
        context.Response.Headers[DownstreamHandler.ReplicaHeader] = name;
        if (!context.WebSockets.IsWebSocketRequest)
        {
            context.Response.StatusCode = StatusCodes.Status400BadRequest;
            context.Response.ContentType = "text/plain";
            await context.Response.WriteAsync("/ws: a WebSocket echo; send a WebSocket handshake (GET with Upgrade: websocket).\n");
            return;
        }

        using var socket = await context.WebSockets.AcceptWebSocketAsync();
        var buffer = ArrayPool<byte>.Shared.Rent(PieceSize);
        try
        {
            // No cancellation token: a registration per call would cost more than the echo, and a client that goes
            // away fails the pending receive anyway.
            while (true)
            {
                var received = await socket.ReceiveAsync(buffer.AsMemory(), CancellationToken.None);
                if (received.MessageType == WebSocketMessageType.Close)
                {
                    // A close without a code reads as NormalClosure here (the WebSocket API has no "none" once
                    // received), so it is answered with 1000.
                    await socket.CloseOutputAsync(socket.CloseStatus ?? WebSocketCloseStatus.Empty, socket.CloseStatusDescription, CancellationToken.None);
                    return;
                }
                await socket.SendAsync(buffer.AsMemory(0, received.Count), received.MessageType, received.EndOfMessage, CancellationToken.None);
            }
        }
        catch (WebSocketException)
        {
            // The client (or the proxy before it) went away without a close: there is no one left to answer.
        }
        catch (IOException)
        {
            // The same, seen by the transport before the WebSocket layer.
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }
}
