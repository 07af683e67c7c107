namespace LLRP.Connections;

/// <summary>Creates the variant's forwarder for each inbound connection and owns whatever the connections share.</summary>
internal interface IForwarderFactory : IDisposable
{
    /// <summary>One line for the start-up banner: the variant and how its clients are shared.</summary>
    string Description { get; }

    IForwarder Create(Uri downstream, int connectionIndex);
}
