using System.Buffers;
using System.IO.Pipelines;

namespace LLRP.Exchanges;

/// <summary>
/// The client connection after a 101 that the variant relays itself rather than handing the downstream over
/// (<see cref="Exchange.SwitchProtocolsInPlace"/>): YARP's forwarder upgrades through IHttpUpgradeFeature and copies
/// between the stream it gets and the downstream's. Reads take the client's bytes from the connection's input pipe
/// (the first ones may have come right after the upgrade request), writes go through its output pipe and are flushed
/// at once; for an HTTP/2 stream (RFC 8441) the pipes are the stream's request and response bodies, DATA both ways. Each transfer restarts the exchange's deadline, which is tunnelIdleTimeout from the switch on, so the
/// proxy's one deadline sweep keeps the tunnel's idle time as it does for the tunnels the front end runs.
/// </summary>
internal sealed class RelayedTunnel(IDuplexPipe client, Exchange exchange) : Stream
{
    private long _toDownstream;
    private long _toClient;

    /// <summary>Bytes the client sent through the tunnel.</summary>
    public long ToDownstream => Volatile.Read(ref _toDownstream);

    /// <summary>Bytes the downstream sent through the tunnel.</summary>
    public long ToClient => Volatile.Read(ref _toClient);

    /// <summary>The client's end of stream was read: the client closed its side first unless something else ended the tunnel.</summary>
    public bool ClientEnded { get; private set; }

    /// <summary>The variant reported the relay as failed (a reset or a failed read or write on either side).</summary>
    public bool Failed { get; set; }

    public override bool CanRead => true;
    public override bool CanWrite => true;
    public override bool CanSeek => false;

    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        while (true)
        {
            var result = await client.Input.ReadAsync(cancellationToken);
            var data = result.Buffer;
            if (!data.IsEmpty)
            {
                var count = (int)Math.Min(data.Length, buffer.Length);
                data.Slice(0, count).CopyTo(buffer.Span);
                client.Input.AdvanceTo(data.GetPosition(count));
                Interlocked.Add(ref _toDownstream, count);
                exchange.RestartDeadline();
                return count;
            }
            client.Input.AdvanceTo(data.End);
            if (result.IsCompleted)
            {
                ClientEnded = true;
                return 0;
            }
            // A canceled result is a stale CancelPendingRead of the request loop's: read on.
        }
    }

    public override async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if ((await client.Output.WriteAsync(buffer, cancellationToken)).IsCompleted)
        {
            throw new IOException("The client connection is gone.");
        }
        Interlocked.Add(ref _toClient, buffer.Length);
        exchange.RestartDeadline();
    }

    // Every write is flushed already.
    public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public override void Flush()
    {
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    // The relay is asynchronous only.
    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    public override long Length => throw new NotSupportedException();
    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }
    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
    public override void SetLength(long value) => throw new NotSupportedException();
}
