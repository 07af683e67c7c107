using System.IO.Pipelines;
using LLRP.Transport;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;

namespace LLRP.Connections;

/// <summary>A client connection that became a tunnel after a 101 (RFC 9110 §7.8): its transport's pipes, its TLS or TCP half-close.</summary>
internal sealed class ConnectionTunnelClient(ConnectionContext context) : ITunnelClient
{
    public PipeReader Input => context.Transport.Input;

    public PipeWriter Output => context.Transport.Output;

    /// <summary>
    /// TLS close_notify (RFC 8446 §6.1 lets each side close its writing side alone), and where the transport can shut
    /// its sending side down alone (the epoll transport's <see cref="IHalfCloseFeature"/>), a FIN. False where neither
    /// applies (Kestrel's socket transport, cleartext).
    /// </summary>
    public async ValueTask<bool> CloseOutputAsync()
    {
        var closed = false;
        if (context.Features.Get<ISslStreamFeature>() is { } tls)
        {
            await tls.SslStream.ShutdownAsync();
            closed = true;
        }
        if (context.Features.Get<IHalfCloseFeature>() is { } halfClose)
        {
            closed |= halfClose.CloseOutput();
        }
        return closed;
    }

    public void Abort() => context.Abort(new ConnectionAbortedException("The tunnel failed on its other side."));
}
