using System.Globalization;
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
    // Each default is its option's (Option in CommandLine.cs, with the reason for it).

    /// <summary>The downstreams, how one is chosen, and health: what the balancer uses.</summary>
    public required BalancingOptions Balancing { get; init; }

    /// <summary>The request side's limits.</summary>
    public RequestLimits Limits { get; init; } = new();

    /// <summary>The --urls value as given, and the addresses it names.</summary>
    public string Urls { get; init; } = Option.Urls.DefaultValue;

    public ListenEndPoint[] ListenEndPoints { get; init; } = CommandLine.ListenEndPoints(Option.Urls.DefaultValue);

    /// <summary>TLS on either side: the listeners' certificate and handshake timeout, and what downstreams are trusted.</summary>
    public TlsOptions Tls { get; init; } = new();

    /// <summary>--protocols; null: each listener's default (<see cref="ProtocolsOf"/>).</summary>
    public ListenProtocols? Protocols { get; init; } = Option.Protocols.DefaultValue;

    public FrontEnd FrontEnd { get; init; } = Option.FrontEnd.DefaultValue;

    public int Http2MaxConcurrentStreams { get; init; } = Option.Http2MaxConcurrentStreams.DefaultValue;

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

    public ClientKind Client { get; init; } = Option.Client.DefaultValue;

    public static string Name(DownstreamProtocol protocol) => protocol switch
    {
        DownstreamProtocol.H2 => "h2",
        DownstreamProtocol.H2c => "h2c",
        _ => "http1",
    };

    public bool ShareClients { get; init; } = Option.ShareClients.DefaultValue;
    public bool ShareClientsRoundRobin { get; init; } = Option.ShareClientsRoundRobin.DefaultValue;
    public int ShareClientsCount { get; init; } = Option.ShareClientsCount.DefaultValue;

    public int MaxResponseHeadersTotalSize { get; init; } = Option.MaxResponseHeadersTotalSize.DefaultValue;

    public TimeSpan RequestHeadersTimeout { get; init; } = Option.RequestHeadersTimeout.DefaultValue;

    public TimeSpan KeepAliveTimeout { get; init; } = Option.KeepAliveTimeout.DefaultValue;

    /// <summary>How long a tunnel after a 101 may carry nothing either way before both connections close.</summary>
    public TimeSpan TunnelIdleTimeout { get; init; } = Option.TunnelIdleTimeout.DefaultValue;

    /// <summary>
    /// A connection the proxy closes with unread input sends its FIN after the last response byte and reads and discards
    /// what the client still sends for at most this long before it closes (ConnectionClose); zero closes at once.
    /// </summary>
    public TimeSpan LingeringTime { get; init; } = Option.LingeringTime.DefaultValue;

    /// <summary>That lingering close ends as soon as the client sends nothing for this long.</summary>
    public TimeSpan LingeringTimeout { get; init; } = Option.LingeringTimeout.DefaultValue;

    /// <summary>That lingering close ends after discarding this many bytes.</summary>
    public long LingeringMaxBytes { get; init; } = Option.LingeringMaxBytes.DefaultValue;

    public TimeSpan DownstreamConnectTimeout { get; init; } = Option.DownstreamConnectTimeout.DefaultValue;

    /// <summary>No response head by then is a 504; no body progress by then aborts the client connection.</summary>
    public TimeSpan DownstreamResponseTimeout { get; init; } = Option.DownstreamResponseTimeout.DefaultValue;

    public TimeSpan DownstreamIdleTimeout { get; init; } = Option.DownstreamIdleTimeout.DefaultValue;

    /// <summary>llhttp: SO_RCVBUF of each downstream connection; 0 leaves the kernel's (LLHttpOptions.ReceiveBufferSize).</summary>
    public int DownstreamReceiveBuffer { get; init; } = Option.DownstreamReceiveBuffer.DefaultValue;

    /// <summary>Without a connection opened, a request or an exchange in flight this long, the proxy trims (IdleTrim).</summary>
    public TimeSpan IdleTrimAfter { get; init; } = Option.IdleTrimAfter.DefaultValue;

    public TimeSpan ShutdownTimeout { get; init; } = Option.ShutdownTimeout.DefaultValue;

    /// <summary>An idle client connection pins no downstream connection past this.</summary>
    public TimeSpan DownstreamShareAfter { get; init; } = Option.DownstreamShareAfter.DefaultValue;

    public bool InlineScheduling { get; init; } = Option.InlineScheduling.DefaultValue;

    /// <summary>
    /// What carries every variant's client connections (Transport/EpollConnection, Kestrel's transport) and llhttp's
    /// downstream connections; the HttpClient-based variants' downstream connections stay on the runtime's engine.
    /// </summary>
    public LLHttpSocketEngine SocketEngine { get; init; } = Option.SocketEngine.DefaultValue;

    public int EngineThreads { get; init; } = Option.EngineThreads.DefaultValue;

    /// <summary>--socketEngine's default here: epoll where LLHttp's engine runs (Linux x86-64), runtime elsewhere.</summary>
    public static LLHttpSocketEngine DefaultSocketEngine => Option.SocketEngine.DefaultValue;

    public TimeSpan StatsInterval { get; init; } = Option.StatsInterval.DefaultValue;

    /// <summary>Zero: from the first request on (Diagnostics/SelfReport.cs).</summary>
    public TimeSpan StatsWindow { get; init; } = Option.StatsWindow.DefaultValue;

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
