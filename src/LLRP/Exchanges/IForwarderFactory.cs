using LLRP.Balancing;

namespace LLRP.Exchanges;

/// <summary>Creates the variant's forwarder for each inbound connection and owns whatever the connections share.</summary>
internal interface IForwarderFactory : IDisposable
{
    /// <summary>One line for the start-up banner: the variant and how its clients are shared.</summary>
    string Description { get; }

    /// <summary>The forwarder of a new inbound connection, sending where <paramref name="choice"/> says.</summary>
    IForwarder Create(DownstreamChoice choice, int connectionIndex);
}
