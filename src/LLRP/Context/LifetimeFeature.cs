using LLRP.Exchanges;
using Microsoft.AspNetCore.Http.Features;

namespace LLRP.Context;

/// <summary>
/// The request's lifetime: <see cref="RequestAborted"/> is the exchange's abort token (client gone or
/// downstreamResponseTimeout). <see cref="Abort"/> only records the wish (an exchange does not expose the connection's
/// transport): the response then refuses further writes and completion, so the connection finds the response
/// unfinished when the variant returns and aborts the client connection (or answers 502 if nothing was sent).
/// </summary>
internal sealed class LifetimeFeature : IHttpRequestLifetimeFeature
{
    private CancellationToken? _override;
    private Exchange _exchange = null!;

    public CancellationToken RequestAborted
    {
        get => _override ?? _exchange.Aborted;
        set => _override = value;
    }

    public bool IsAborted { get; private set; }

    public void Start(Exchange exchange)
    {
        _exchange = exchange;
        _override = null;
        IsAborted = false;
    }

    public void Abort() => IsAborted = true;
}
