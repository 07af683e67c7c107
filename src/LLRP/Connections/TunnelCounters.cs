using System.Globalization;

namespace LLRP.Connections;

/// <summary>How a tunnel ended: the first of these that happened decides it.</summary>
internal enum TunnelEnd : byte
{
    /// <summary>The client closed its side first (its end of stream).</summary>
    ClientClosed,
    /// <summary>The downstream closed its side first.</summary>
    DownstreamClosed,
    /// <summary>Nothing went either way for tunnelIdleTimeout.</summary>
    IdleTimeout,
    /// <summary>The proxy began stopping.</summary>
    Stopped,
    /// <summary>A reset, or a failed read or write, on either side.</summary>
    Error,
}

/// <summary>The tunnels the proxy opened (after a 101), the bytes each way and how they ended, for the self-report.</summary>
internal sealed class TunnelCounters
{
    private long _opened;
    private long _toDownstream;
    private long _toClient;
    private readonly long[] _ended = new long[(int)TunnelEnd.Error + 1];

    public void Opened() => Interlocked.Increment(ref _opened);

    public void Ended(TunnelEnd end, long toDownstream, long toClient)
    {
        Interlocked.Add(ref _toDownstream, toDownstream);
        Interlocked.Add(ref _toClient, toClient);
        Interlocked.Increment(ref _ended[(int)end]);
    }

    /// <summary>
    /// A tunnel a variant relayed itself (<see cref="Exchanges.Exchange.SwitchProtocolsInPlace"/>) has ended: counted as the
    /// front ends' own tunnels are, opened and ended at once. The first end decides, as in <see cref="Tunnel"/>: a stop
    /// or the idle deadline (the exchange expired), the client gone, a failure the variant reported, else whichever
    /// side's end of stream came first.
    /// </summary>
    public TunnelEnd Relayed(Exchanges.RelayedTunnel relayed, Errors.ProxyError? abortReason, bool stopping)
    {
        var end = abortReason switch
        {
            Errors.ProxyError.ClientGone => TunnelEnd.ClientClosed,
            not null => stopping ? TunnelEnd.Stopped : TunnelEnd.IdleTimeout,
            null when relayed.Failed => TunnelEnd.Error,
            null => relayed.ClientEnded ? TunnelEnd.ClientClosed : TunnelEnd.DownstreamClosed,
        };
        Opened();
        Ended(end, relayed.ToDownstream, relayed.ToClient);
        return end;
    }

    public long OpenedCount => Interlocked.Read(ref _opened);

    /// <summary>Bytes from clients to downstreams, counted when each tunnel ends.</summary>
    public long BytesToDownstream => Interlocked.Read(ref _toDownstream);

    /// <summary>Bytes from downstreams to clients, counted when each tunnel ends.</summary>
    public long BytesToClient => Interlocked.Read(ref _toClient);

    public long EndedBy(TunnelEnd end) => Interlocked.Read(ref _ended[(int)end]);

    /// <summary>One phrase for the self-report's line.</summary>
    public string Describe() => string.Create(CultureInfo.InvariantCulture,
        $"{OpenedCount} tunnels ({BytesToDownstream} bytes to downstreams, {BytesToClient} to clients; ended: {EndedBy(TunnelEnd.ClientClosed)} by the client, " +
        $"{EndedBy(TunnelEnd.DownstreamClosed)} by the downstream, {EndedBy(TunnelEnd.IdleTimeout)} idle, {EndedBy(TunnelEnd.Stopped)} stopping, {EndedBy(TunnelEnd.Error)} in error)");
}
