using LLRP.Connections;

namespace LLRP.Forwarding;

/// <summary>Picks the variant's factory from --client.</summary>
internal static class ForwarderFactory
{
    public static IForwarderFactory Create(ProxyOptions options) => options.Client switch
    {
        ClientKind.LLHttp => new LLHttpForwarderFactory(options),
        ClientKind.Yarp => new YarpForwarderFactory(options),
        _ => new HttpClientForwarderFactory(options),
    };
}
