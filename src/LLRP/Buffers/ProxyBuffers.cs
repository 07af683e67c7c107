namespace LLRP.Buffers;

/// <summary>
/// The pools every exchange rents its buffers from: the client connection's receive and send buffers, the request
/// head's copy (and, through <see cref="Create{T}"/>, its field entries), the request body buffer, and LLHttp's send and receive arrays. A connection holds
/// them only while an exchange runs, so an idle one holds none. The shared ArrayPool keeps a few arrays of each size
/// per core: with tens of exchanges in flight at once most rents missed it and allocated (about 3.2 KB per request at
/// 64 connections on 2 cores), so these pools keep enough arrays of each size for <see cref="MaxExchangesInFlight"/>
/// exchanges. What a burst leaves in them is given back by <see cref="Trim"/> once the proxy is idle
/// (<see cref="IdleTrim"/>).
/// </summary>
internal static class ProxyBuffers
{
    /// <summary>
    /// Exchanges in flight at once that rent without allocating: 1,024 connections is the largest load the project's
    /// benchmarks apply (crank's lab default is 256). Past it rents allocate as the shared pool's do. What the pools
    /// keep is only what such a peak gave back (about 100 MB at the default limits after 1,024 exchanges at once).
    /// </summary>
    public const int MaxExchangesInFlight = 1024;

    /// <summary>
    /// Arrays of one length an exchange holds at once: LLHttp's send and receive arrays and the client connection's send
    /// buffer all start at 4 KiB (the client's receive buffer, also 4 KiB, is given back once the head is parsed). A pool
    /// that kept one array per length and exchange allocated 330-440 B per request at 1,024 connections (2,048 arrays
    /// of 4 KiB in flight, 1,024 kept). A fourth of one length (grown arrays beside the request body's buffer) is rare
    /// enough to allocate.
    /// </summary>
    public const int ArraysPerExchange = 3;

    // The largest array rented: the request head's copy (maxRequestLineSize + maxRequestHeadersTotalSize may be set up
    // to ~1.5 MB, maxRequestLineSize and maxRequestHeadersTotalSize); larger requests are refused before they get that far.
    private const int MaxArrayLength = 2 * 1024 * 1024;

    public static TrimmableArrayPool<byte> Bytes { get; } = new(MaxArrayLength, ArraysPerExchange * MaxExchangesInFlight);

    // Every pool made by Create, so that Trim reaches the pools of element types this namespace does not know.
    private static readonly List<Action> s_trims = [];

    /// <summary>
    /// A pool of another element type (the request head's field entries) that <see cref="Trim"/> also empties; its
    /// owner keeps it, sized for <see cref="MaxExchangesInFlight"/> exchanges like <see cref="Bytes"/>.
    /// </summary>
    public static TrimmableArrayPool<T> Create<T>(int maxArrayLength)
    {
        var pool = new TrimmableArrayPool<T>(maxArrayLength, MaxExchangesInFlight);
        lock (s_trims)
        {
            s_trims.Add(pool.Trim);
        }
        return pool;
    }

    /// <summary>Drops every array the pools keep: the next exchanges allocate theirs again.</summary>
    public static void Trim()
    {
        Bytes.Trim();
        lock (s_trims)
        {
            foreach (var trim in s_trims)
            {
                trim();
            }
        }
    }
}
