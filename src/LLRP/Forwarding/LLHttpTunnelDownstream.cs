using LLHttp;
using LLRP.Exchanges;

namespace LLRP.Forwarding;

/// <summary>
/// An LLHttp connection the downstream switched protocols on (101), as a tunnel's downstream end: bytes go straight
/// between the tunnel's buffers and the socket (LLHttp's upgraded reads and writes), and the connection, out of every
/// pool since the switch, is closed when the tunnel ends.
/// </summary>
internal sealed class LLHttpTunnelDownstream(LLHttpConnection connection) : ITunnelDownstream
{
    public ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken) => connection.ReadUpgradedAsync(buffer, cancellationToken);

    public ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken) => connection.WriteUpgradedAsync(buffer, cancellationToken);

    public ValueTask<bool> CloseOutputAsync() => connection.CloseUpgradedOutputAsync();

    public void Abort() => connection.Abort();

    public void Dispose() => connection.CloseUpgraded();
}
