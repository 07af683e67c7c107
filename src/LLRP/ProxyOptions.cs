using System.Globalization;
using System.Net;
using LLHttp.Sockets;

namespace LLRP;

/// <summary>Which forwarding layer sends requests downstream: the one layer the variants differ in (docs/architecture.md).</summary>
public enum ClientKind
{
    LLHttp,
    HttpClient,
    HttpClientWithContext,
    Yarp,
}

/// <summary>
/// Every option of the proxy, filled once at start-up by <see cref="CommandLine.Read"/> from IConfiguration (command
/// line, environment, appsettings.json). The options of one concern are a record of their own (<see cref="Limits"/>,
/// <see cref="Balancing"/>), and a component takes only the record it uses.
/// </summary>
public sealed class ProxyOptions
{
    // The port run-local.sh and crank/smoke.sh expect; loopback only, so a bare start exposes nothing.
    public const string DefaultUrls = "http://127.0.0.1:8080";

    /// <summary>The downstreams, how one is chosen, and health: what the balancer uses.</summary>
    public required BalancingOptions Balancing { get; init; }

    /// <summary>The request side's limits.</summary>
    public RequestLimits Limits { get; init; } = new();

    /// <summary>The --urls value as given, and the addresses it names.</summary>
    public string Urls { get; init; } = DefaultUrls;

    public ListenEndPoint[] ListenEndPoints { get; init; } = [new(new IPEndPoint(IPAddress.Loopback, 8080), Tls: false)];

    /// <summary>TLS on either side: the listeners' certificate and handshake timeout, and what downstreams are trusted.</summary>
    public TlsOptions Tls { get; init; } = new();

    // Not given: each listener's default (ProtocolsOf).
    public ListenProtocols? Protocols { get; init; }

    // The raw handler by default: it is what LLRP measures; kestrel adds Kestrel's HTTP/1.1 layer for the layer table.
    public FrontEnd FrontEnd { get; init; } = FrontEnd.Raw;

    // Kestrel's Http2Limits.MaxStreamsPerConnection default (100), which is also the least RFC 9113 §6.5.2 recommends a
    // server allow; nginx's http2_max_concurrent_streams is 128.
    public int Http2MaxConcurrentStreams { get; init; } = 100;

    /// <summary>
    /// What <paramref name="endPoint"/> speaks: --protocols, or by default HTTP/1.1 and HTTP/2 on https:// (ALPN chooses,
    /// as browsers and h2load expect) and HTTP/1.1 on http:// (h2c is only ever asked for explicitly).
    /// </summary>
    public ListenProtocols ProtocolsOf(ListenEndPoint endPoint) =>
        Protocols ?? (endPoint.Tls ? ListenProtocols.Http1AndHttp2 : ListenProtocols.Http1);

    public static string Name(ListenProtocols? protocols) => protocols switch
    {
        null => "default",
        ListenProtocols.Http1 => "http1",
        ListenProtocols.Http2 => "h2",
        _ => "http1,h2",
    };

    public ClientKind Client { get; init; } = ClientKind.LLHttp;

    public static string Name(DownstreamProtocol protocol) => protocol switch
    {
        DownstreamProtocol.H2 => "h2",
        DownstreamProtocol.H2c => "h2c",
        _ => "http1",
    };

    // "shareClients*" keep the original LLRP's names so crank's --application.environmentVariables works.
    public bool ShareClients { get; init; }
    public bool ShareClientsRoundRobin { get; init; }
    public int ShareClientsCount { get; init; } = Environment.ProcessorCount;

    // Matches SocketsHttpHandler's MaxResponseHeadersLength (64 KiB); a larger downstream head is a 502.
    public int MaxResponseHeadersTotalSize { get; init; } = 64 * 1024;

    // Matches Kestrel's RequestHeadersTimeout (30 s): slowloris defence, answered with 408 and close.
    public TimeSpan RequestHeadersTimeout { get; init; } = TimeSpan.FromSeconds(30);

    // Matches Kestrel's KeepAliveTimeout (130 s): idle client connections between requests are closed.
    public TimeSpan KeepAliveTimeout { get; init; } = TimeSpan.FromSeconds(130);

    // How long a tunnel after a 101 (a WebSocket, RFC 9110 §7.8) may carry nothing either way before both connections
    // close: 60 s, nginx's proxy_read_timeout default, which is what bounds an idle upgraded connection there.
    public TimeSpan TunnelIdleTimeout { get; init; } = TimeSpan.FromSeconds(60);

    // nginx's lingering_time (30 s): a connection the proxy closes with unread input (an error answer before the request
    // ended, a body it did not read) sends its FIN after the last response byte and reads and discards what the client
    // still sends for at most this long before it closes (ConnectionClose), so that the close finds no unread input and
    // the kernel's reset does not destroy the response before the client reads it. 0 closes at once.
    public TimeSpan LingeringTime { get; init; } = TimeSpan.FromSeconds(30);

    // nginx's lingering_timeout (5 s): that lingering close ends as soon as the client sends nothing for this long (a
    // client that read the response and is done sends its FIN much sooner).
    public TimeSpan LingeringTimeout { get; init; } = TimeSpan.FromSeconds(5);

    // maxRequestBodySize's default (30,000,000, Kestrel's MaxRequestBodySize): that lingering close ends after discarding
    // this many bytes, about what the proxy would have read had it accepted the request. nginx bounds it by time only.
    public long LingeringMaxBytes { get; init; } = 30_000_000;

    // Matches YARP's ForwarderHttpClientFactory ConnectTimeout (15 s); failing to connect is a 502.
    public TimeSpan DownstreamConnectTimeout { get; init; } = TimeSpan.FromSeconds(15);

    // Matches YARP's ActivityTimeout (100 s, itself HttpClient.Timeout's default): no response head by then is a 504,
    // no body progress by then aborts the client connection.
    public TimeSpan DownstreamResponseTimeout { get; init; } = TimeSpan.FromSeconds(100);

    // Matches SocketsHttpHandler's PooledConnectionIdleTimeout (1 min), which YARP keeps: a downstream connection idle
    // this long is closed, so an idle client connection does not pin one (with its socket) for its whole life.
    public TimeSpan DownstreamIdleTimeout { get; init; } = TimeSpan.FromMinutes(1);

    /// <summary>llhttp: SO_RCVBUF of each downstream connection; 0 leaves the kernel's (LLHttpOptions.ReceiveBufferSize).</summary>
    public int DownstreamReceiveBuffer { get; init; }

    // 0.5 s without a connection opened, a request or an exchange in flight: a load that pauses that long has stopped
    // for now (a busy connection's requests are micro- to milliseconds apart), and an idle proxy then gives back what
    // its last burst left (IdleTrim), so that its memory one second after a burst is what its idle connections hold
    // (docs/methodology.md, "Decisions and their evidence"). At most once per 16 MiB allocated, which llhttp, allocating nothing
    // per request, reaches only through thousands of new connections. 0 turns it off.
    public TimeSpan IdleTrimAfter { get; init; } = TimeSpan.FromSeconds(0.5);

    // Matches HostOptions.ShutdownTimeout (30 s), the bound the generic host and Kestrel's own graceful stop use: long
    // enough for a slow download to finish, short enough for a service manager's stop (systemd waits 90 s).
    public TimeSpan ShutdownTimeout { get; init; } = TimeSpan.FromSeconds(30);

    // An idle client connection pins no downstream connection past this: 1 s is far above the gap between requests of
    // a busy keep-alive client (so the affinity holds under load) and short enough that 10,000 idle clients hold at
    // most the shared pool's 1,024 idle downstream connections (nginx's crank config keeps 1,024 idle upstream
    // connections per worker the same way).
    public TimeSpan DownstreamShareAfter { get; init; } = TimeSpan.FromSeconds(1);

    // On by default, unlike Kestrel and the runtime: inline scheduling runs Kestrel's pipe callbacks and every socket
    // completion of the process on the socket engine's epoll threads (one per core), which saves the thread-pool hop
    // of every read: 20-30 % less CPU per request for llhttp in two interleaved A/Bs on the 2-core box (the evidence
    // is listed in docs/methodology.md, "Decisions and their evidence"). Its risk is that one exchange that blocks
    // stalls every connection its thread serves; nothing on LLRP's request path blocks (its I/O is asynchronous and its
    // logging queued). Hosting/InlineSocketCompletions.cs says what it sets and why both halves go together.
    public bool InlineScheduling { get; init; } = true;

    // LLHttp's own epoll engine where it runs (Linux x86-64), the runtime's elsewhere. It carries every variant's client
    // connections (Transport/EpollConnection, Kestrel's transport) and llhttp's downstream connections; the
    // HttpClient-based variants' downstream connections stay on the runtime's engine, a part of what those layers cost.
    // It saves the receive that finds nothing and the poll before reuse; measured against the runtime's engine in an
    // interleaved A/B (docs/methodology.md, "Decisions and their evidence").
    public LLHttpSocketEngine SocketEngine { get; init; } = DefaultSocketEngine;

    // One loop thread per core by default, as the runtime's engine with inline completions. nginx and HAProxy run one
    // worker/thread in the benchmarks (crank/README.md); 1 here gives llhttp the same parallelism, at no CPU saving at
    // 64 connections and 19 % fewer requests at 256 on the 2-core box (docs/methodology.md, "Decisions and their
    // evidence").
    // The runtime's engine has its own variable, DOTNET_SYSTEM_NET_SOCKETS_THREAD_COUNT.
    public int EngineThreads { get; init; } = Environment.ProcessorCount;

    // A computed property, not a static field: Known (above) reads it while the statics are being initialised.
    public static LLHttpSocketEngine DefaultSocketEngine => LLHttpSocketEngine.Epoll.IsSupported() ? LLHttpSocketEngine.Epoll : LLHttpSocketEngine.Runtime;

    // Off by default; crank jobs set 1 so the agent collects the proxy's own numbers while the load runs.
    public TimeSpan StatsInterval { get; init; } = TimeSpan.Zero;

    // 0 = from the first request on; crank jobs pass the load's measured duration so the proxy's figures cover the
    // measured window only (Diagnostics/SelfReport.cs).
    public TimeSpan StatsWindow { get; init; } = TimeSpan.Zero;

    public static string Name(ClientKind kind) => kind switch
    {
        ClientKind.LLHttp => "llhttp",
        ClientKind.HttpClient => "httpclient",
        ClientKind.HttpClientWithContext => "httpclient-httpcontext",
        _ => "yarp",
    };

    public string Describe() =>
        string.Create(CultureInfo.InvariantCulture,
            $"LLRP client={Name(Client)} downstream={string.Join(';', (object[])Balancing.Downstreams)} downstreamProtocol={Name(Balancing.DownstreamProtocol)} shareClients={ShareClients} " +
            $"shareClients.roundRobin={ShareClientsRoundRobin} shareClients.count={ShareClientsCount} " +
            $"maxRequestLineSize={Limits.MaxRequestLineSize} maxRequestHeadersTotalSize={Limits.MaxRequestHeadersTotalSize} " +
            $"maxRequestHeaderCount={Limits.MaxRequestHeaderCount} maxRequestBodySize={Limits.MaxRequestBodySize} " +
            $"maxResponseHeadersTotalSize={MaxResponseHeadersTotalSize} requestHeadersTimeout={RequestHeadersTimeout.TotalSeconds}s " +
            $"keepAliveTimeout={KeepAliveTimeout.TotalSeconds}s tunnelIdleTimeout={TunnelIdleTimeout.TotalSeconds}s lingeringTime={LingeringTime.TotalSeconds}s lingeringTimeout={LingeringTimeout.TotalSeconds}s " +
            $"lingeringMaxBytes={LingeringMaxBytes} downstreamConnectTimeout={DownstreamConnectTimeout.TotalSeconds}s " +
            $"downstreamResponseTimeout={DownstreamResponseTimeout.TotalSeconds}s downstreamIdleTimeout={DownstreamIdleTimeout.TotalSeconds}s downstreamReceiveBuffer={DownstreamReceiveBuffer} downstreamShareAfter={DownstreamShareAfter.TotalSeconds}s idleTrimAfter={IdleTrimAfter.TotalSeconds}s inlineScheduling={InlineScheduling} socketEngine={SocketEngine.ToString().ToLowerInvariant()} engineThreads={EngineThreads} " +
            $"loadBalancing={Balancing.LoadBalancing} passiveHealthReactivationPeriod={Balancing.PassiveHealthReactivationPeriod.TotalSeconds}s " +
            $"{DescribeHealthChecks()} shutdownTimeout={ShutdownTimeout.TotalSeconds}s statsInterval={StatsInterval.TotalSeconds}s statsWindow={StatsWindow.TotalSeconds}s " +
            $"protocols={Name(Protocols)} frontEnd={FrontEnd.ToString().ToLowerInvariant()} http2MaxConcurrentStreams={Http2MaxConcurrentStreams}");

    private string DescribeHealthChecks() => Balancing.HealthCheckPath.Length == 0
        ? "healthCheckPath=(off)"
        : string.Create(CultureInfo.InvariantCulture,
            $"healthCheckPath={Balancing.HealthCheckPath} healthCheckInterval={Balancing.HealthCheckInterval.TotalSeconds}s healthCheckTimeout={Balancing.HealthCheckTimeout.TotalSeconds}s healthCheckFall={Balancing.HealthCheckFall} healthCheckRise={Balancing.HealthCheckRise}");
}
