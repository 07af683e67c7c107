using LLRP.Balancing;
using LLRP.Exchanges;

namespace LLRP.Forwarding;

/// <summary>Picks the variant's factory from --client.</summary>
internal static class ForwarderFactory
{
    public static IForwarderFactory Create(ProxyOptions options, DownstreamSet downstreams) => options.Client switch
    {
        ClientKind.LLHttp => new LLHttpForwarderFactory(options, downstreams),
        ClientKind.Yarp => new YarpForwarderFactory(options),
        _ => new HttpClientForwarderFactory(options),
    };
}
