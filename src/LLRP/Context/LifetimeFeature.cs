using LLRP.Connections;
using Microsoft.AspNetCore.Http.Features;

namespace LLRP.Context;

/// <summary>
/// The request's lifetime: <see cref="RequestAborted"/> is the connection's forwarding token (client gone or
/// downstreamResponseTimeout). <see cref="Abort"/> only records the wish (ProxyConnection does not expose its
/// transport): the response then refuses further writes and completion, so the connection finds the response
/// unfinished when the variant returns and aborts the client connection (or answers 502 if nothing was sent).
/// </summary>
internal sealed class LifetimeFeature : IHttpRequestLifetimeFeature
{
    private CancellationToken? _override;
    private ProxyConnection _connection = null!;

    public CancellationToken RequestAborted
    {
        get => _override ?? _connection.Aborted;
        set => _override = value;
    }

    public bool IsAborted { get; private set; }

    public void Start(ProxyConnection connection)
    {
        _connection = connection;
        _override = null;
        IsAborted = false;
    }

    public void Abort() => IsAborted = true;
}
