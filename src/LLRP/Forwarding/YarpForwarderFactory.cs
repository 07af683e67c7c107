using LLRP.Balancing;
using LLRP.Exchanges;
using Microsoft.Extensions.DependencyInjection;
using Yarp.ReverseProxy.Forwarder;

namespace LLRP.Forwarding;

/// <summary>The yarp variant: one HttpForwarder for the process, as YARP shares it, over <see cref="DownstreamClients"/>.</summary>
internal sealed class YarpForwarderFactory : IForwarderFactory
{
    private readonly DownstreamClients _clients;

    /// <summary>
    /// HttpForwarder from YARP's own registration (AddHttpForwarder) with logging that has no provider: nothing is
    /// logged per request, as in every variant.
    /// </summary>
    private readonly IHttpForwarder _forwarder =
        new ServiceCollection().AddLogging().AddHttpForwarder().BuildServiceProvider().GetRequiredService<IHttpForwarder>();

    private readonly ForwarderRequestConfig _config;

    public YarpForwarderFactory(ProxyOptions options)
    {
        _clients = new DownstreamClients(options);
        _config = new ForwarderRequestConfig
        {
            // downstreamResponseTimeout is enforced by the connection's deadline, which cancels HttpContext.RequestAborted:
            // YARP's own activity timer would be a second timer against the same deadline.
            ActivityTimeout = Timeout.InfiniteTimeSpan,
            // The downstream protocol exactly, as the other variants send it (DownstreamClients decides it).
            Version = _clients.Version,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
        };
    }

    public string Description => _clients.Description;

    public IForwarder Create(DownstreamChoice downstream, int connectionIndex)
    {
        var invoker = _clients.ForConnection(connectionIndex, out var owned);
        return new YarpForwarder(_forwarder, _config, _clients, downstream, invoker, owned);
    }

    public void Dispose() => _clients.Dispose();
}
