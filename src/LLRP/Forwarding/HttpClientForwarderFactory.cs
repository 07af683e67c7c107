using LLRP.Balancing;
using LLRP.Exchanges;

namespace LLRP.Forwarding;

/// <summary>The httpclient and httpclient-httpcontext variants: one forwarder per connection over <see cref="DownstreamClients"/>.</summary>
internal sealed class HttpClientForwarderFactory(ProxyOptions options) : IForwarderFactory
{
    private readonly DownstreamClients _clients = new(options);

    public string Description => _clients.Description;

    public IForwarder Create(DownstreamChoice downstream, int connectionIndex)
    {
        var invoker = _clients.ForConnection(connectionIndex, out var owned);
        return options.Client == ClientKind.HttpClientWithContext
            ? new HttpContextForwarder(_clients, downstream, invoker, owned)
            : new HttpClientForwarder(_clients, downstream, invoker, owned);
    }

    public void Dispose() => _clients.Dispose();
}
