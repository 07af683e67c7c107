using System.Net;
using System.Text;

namespace LLRP.Balancing;

/// <summary>
/// One downstream as the balancer sees it: its address in the forms the variants need, the requests in flight on it
/// (LeastRequests, PowerOfTwoChoices) and whether health has taken it out. Counters are updated with interlocked
/// operations only, so choosing and counting allocate nothing and take no lock.
/// </summary>
public sealed class Destination
{
    private int _concurrentRequests;
    // Environment.TickCount64 until which passive health keeps it out; 0: never taken out.
    private long _passiveOutUntil;
    // Set by active health checks; volatile so a pick sees a state change at once.
    private volatile bool _activeOut;

    public Destination(Uri address)
    {
        Address = address;
        Id = address.GetLeftPart(UriPartial.Authority);
        InvokerPrefix = $"http://{address.Authority}";
        if (address.Scheme == Uri.UriSchemeHttps && address.IsDefaultPort)
        {
            InvokerPrefix += ":443";
        }
        Authority = Encoding.ASCII.GetBytes(address.Authority);
        EndPoint = IPAddress.TryParse(address.Host.Trim('[', ']'), out var ip)
            ? new IPEndPoint(ip, address.Port)
            : new DnsEndPoint(address.Host, address.Port);
    }

    public Uri Address { get; }

    /// <summary>"http://host:port": what FirstAlphabetical orders by (YARP orders by destination id) and the prefix of forwarded URIs.</summary>
    public string Id { get; }

    /// <summary>host:port as ASCII: the Host of a request whose client sent none (an HTTP/1.0 client).</summary>
    public byte[] Authority { get; }

    /// <summary>
    /// "http://host:port" whatever the scheme: the prefix of the URIs the HttpClient-based variants send, whose
    /// connections to an https downstream run TLS in DownstreamClients' connect callback (which says why).
    /// </summary>
    public string InvokerPrefix { get; }

    public EndPoint EndPoint { get; }

    public int ConcurrentRequests => Volatile.Read(ref _concurrentRequests);

    internal void RequestStarted() => Interlocked.Increment(ref _concurrentRequests);

    internal void RequestEnded() => Interlocked.Decrement(ref _concurrentRequests);

    /// <summary>Whether a request may be sent now: neither passive nor active health has taken it out.</summary>
    public bool IsAvailable(long now) => !_activeOut && now >= Volatile.Read(ref _passiveOutUntil);

    public bool IsActiveOut => _activeOut;

    /// <summary>Takes it out until <paramref name="until"/>; returns whether it was available before (for logging a change once).</summary>
    internal bool TakeOutUntil(long until, long now) => Interlocked.Exchange(ref _passiveOutUntil, until) <= now;

    internal void SetActiveOut(bool value) => _activeOut = value;

    public override string ToString() => Id;
}
