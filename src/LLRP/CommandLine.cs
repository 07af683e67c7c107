using System.Globalization;
using System.Net;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using LLHttp.Sockets;
using LLRP.Tls;
using Microsoft.Extensions.Configuration;

namespace LLRP;

/// <summary>
/// An option as --help and docs/options.md show it: its name, its default as shown, its meaning in one line, and where
/// the default comes from. <see cref="Option{T}"/> adds the typed default and how a value is read and checked.
/// </summary>
public abstract class OptionInfo(string name, string shownDefault, string meaning, string reason)
{
    public string Name { get; } = name;

    /// <summary>The default as shown: empty for none, words where it depends on the machine or the listener.</summary>
    public string Default { get; } = shownDefault;

    public string Meaning { get; } = meaning;

    /// <summary>Why the default is what it is.</summary>
    public string Reason { get; } = reason;
}

/// <summary>
/// One option, the one place each of its facts is written: the option records' initialisers take
/// <see cref="DefaultValue"/>, <see cref="CommandLine.Read"/> takes <see cref="Read"/> (the command line, the
/// environment and appsettings.json alike), --help and docs/options.md take the rest.
/// </summary>
public sealed class Option<T> : OptionInfo
{
    private readonly Func<string, string, T> _parse;
    private readonly string? _required;
    private readonly bool _blankIsGiven;

    /// <param name="shown">The default as shown, where the kind's own rendering of it is not what a user reads.</param>
    /// <param name="required">Not null: the option has no default, and this is the refusal when it is not given.</param>
    /// <param name="blankIsGiven">A blank value is parsed (and refused) rather than taken for the default.</param>
    public Option(string name, T defaultValue, OptionKind<T> kind, string meaning, string reason,
        string? shown = null, string? required = null, bool blankIsGiven = false)
        : base(name, shown ?? kind.Show(defaultValue), meaning, reason)
    {
        DefaultValue = defaultValue;
        _parse = kind.Parse;
        _required = required;
        _blankIsGiven = blankIsGiven;
    }

    public T DefaultValue { get; }

    /// <summary>The configuration's value of this option, checked; the default when it is not given.</summary>
    public T Read(IConfiguration config) => Parse(config[Name]);

    /// <summary>A value as given (null: not given), checked: a bad one throws <see cref="OptionsException"/>.</summary>
    public T Parse(string? value) =>
        value is null || (!_blankIsGiven && string.IsNullOrWhiteSpace(value))
            ? _required is null ? DefaultValue : throw new OptionsException(_required)
            : _parse(Name, value);
}

/// <summary>
/// How values of one kind are read from text and shown. <see cref="Parse"/> takes the option's name (for the refusal)
/// and the value as given, and throws <see cref="OptionsException"/> naming both and the form it expects.
/// </summary>
public sealed record OptionKind<T>(Func<string, string, T> Parse, Func<T, string> Show);

/// <summary>
/// Every option of the proxy, each with its default, its check, its help line and the reason for its default: the
/// command line, --help, the configuration (environment, appsettings.json) and docs/options.md all come from these.
/// <see cref="All"/> is --help's order; <see cref="CommandLine.Read"/> has its own (the first bad value read is the one
/// reported).
/// </summary>
public static class Option
{
    public static readonly Option<string> Urls = new("urls", "http://127.0.0.1:8080", Text,
        "listen addresses, ';'-separated http://IP:PORT or https://IP:PORT (localhost, * and + accepted)",
        "The port run-local.sh and crank/smoke.sh expect; loopback only, so a bare start exposes nothing.",
        // An empty --urls is refused (it names no address) rather than taken for the default.
        blankIsGiven: true);

    public static readonly Option<string?> Certificate = new("certificate", null, FilePath,
        "https listeners: the server certificate, a PEM file (key in --certificateKey, or in the same file) or a PKCS#12 file",
        "None: only https listeners need one, and it is the deployment's own.");

    public static readonly Option<string?> CertificateKey = new("certificateKey", null, FilePath,
        "https listeners: the PEM private key of --certificate",
        "None: a PEM --certificate file may hold its key, and a PKCS#12 one always does.");

    public static readonly Option<ListenProtocols?> Protocols = new("protocols", null, new(ParseProtocols, ProxyOptions.Name),
        "what the listeners speak: http1, h2 or http1,h2; on https ALPN chooses, on http h2 alone is prior-knowledge h2c and http1,h2 is told apart by the HTTP/2 preface",
        "Each listener's own (ProxyOptions.ProtocolsOf): both on https://, where ALPN chooses, as browsers and h2load expect; HTTP/1.1 alone on http://, since nothing negotiates h2c and it is only ever asked for on purpose.",
        shown: "http1 (https: both)");

    public static readonly Option<FrontEnd> FrontEnd = new("frontEnd", LLRP.FrontEnd.Raw, new(ParseFrontEnd, f => f.ToString().ToLowerInvariant()),
        "HTTP/1.1 from clients: raw (LLRP's connection handler) or kestrel (Kestrel's own HTTP/1.1 and the HTTP/2 streams' application)",
        "The raw handler is what LLRP measures; kestrel adds Kestrel's HTTP/1.1 layer, for the layer table.");

    // 1,000,000: far above what a client may usefully multiplex; 0 would refuse every stream.
    public static readonly Option<int> Http2MaxConcurrentStreams = new("http2MaxConcurrentStreams", 100, Int(1, 1_000_000),
        "HTTP/2: streams a client connection may have open at once; more are refused (Kestrel's default)",
        "Kestrel's Http2Limits.MaxStreamsPerConnection default, which is also the least RFC 9113 §6.5.2 recommends a server allow; nginx's http2_max_concurrent_streams is 128.");

    public static readonly Option<TimeSpan> TlsHandshakeTimeout = new("tlsHandshakeTimeout", TimeSpan.FromSeconds(10), Seconds(),
        "seconds a client may take to complete its TLS handshake; then the connection closes (Kestrel's default)",
        "Kestrel's HttpsConnectionAdapterOptions.HandshakeTimeout: a client that opens a TLS connection and stalls its handshake (slowloris during TLS) holds a connection this long at most.");

    public static readonly Option<Uri[]> Downstream = new("downstream", [], new(ParseDownstreams, d => string.Join(';', d.AsEnumerable())),
        "one or more http://HOST:PORT or https://HOST:PORT, ';'-separated; loadBalancing chooses among them",
        "None: where to forward is the deployment's own.",
        shown: "(required)", required: "--downstream is required: one or more http://HOST:PORT or https://HOST:PORT separated by ';'.");

    public static readonly Option<string?> DownstreamTrust = new("downstreamTrust", null, FilePath,
        "https downstreams: a PEM bundle of CA certificates trusted besides the system store",
        "None: the system store alone, what every HTTP client trusts by default.");

    public static readonly Option<DownstreamProtocol> DownstreamProtocol = new("downstreamProtocol", LLRP.DownstreamProtocol.Http1, new(ParseDownstreamProtocol, ProxyOptions.Name),
        "what requests speak downstream: http1, h2 (TLS with ALPN h2, https:// downstreams) or h2c (prior-knowledge cleartext, http:// downstreams); h2 and h2c need an HttpClient-based --client",
        "HTTP/1.1: what every variant speaks and what the benchmarks' origins are measured with.");

    public static readonly Option<ClientKind> Client = new("client", ClientKind.LLHttp, new(ParseClient, ProxyOptions.Name),
        "forwarding variant: llhttp, httpclient, httpclient-httpcontext or yarp",
        "llhttp, LLRP's own client; the others are the layers it is compared with.");

    // "shareClients*" keep the original LLRP's names so crank's --application.environmentVariables works.
    public static readonly Option<bool> ShareClients = new("shareClients", false, Bool,
        "share clients across inbound connections (llhttp: one LIFO connection pool per downstream)",
        "The original LLRP's switch and default: a client (llhttp: a downstream connection) of its own per inbound connection.");

    public static readonly Option<bool> ShareClientsRoundRobin = new("shareClients.roundRobin", false, Bool,
        "HttpClient-based variants with shareClients: rotate clients per request, not per connection",
        "The original LLRP's default: a connection keeps the shared client it was assigned.");

    public static readonly Option<int> ShareClientsCount = new("shareClients.count", Environment.ProcessorCount, Int(1, 4096),
        "HttpClient-based variants with shareClients: how many clients",
        "One per core (the original LLRP shared one), so that the shared clients grow with the cores that use them.",
        shown: "processor count");

    public static readonly Option<int> MaxRequestLineSize = new("maxRequestLineSize", 8 * 1024, Int(64, 1024 * 1024),
        "longest request line in bytes; longer: 414 (Kestrel's default)",
        "Kestrel's MaxRequestLineSize; RFC 9112 §3 recommends supporting at least 8000 octets.");

    public static readonly Option<int> MaxRequestHeadersTotalSize = new("maxRequestHeadersTotalSize", 32 * 1024, Int(256, 512 * 1024),
        "largest request header section in bytes; larger: 431 (Kestrel's default)",
        "Kestrel's MaxRequestHeadersTotalSize, which matches nginx's large_client_header_buffers.");

    public static readonly Option<int> MaxRequestHeaderCount = new("maxRequestHeaderCount", 100, Int(1, RequestLimits.MaxHeaderCountLimit),
        "most request header fields; more: 431 (Kestrel's default)",
        "Kestrel's MaxRequestHeaderCount, which matches Apache httpd's LimitRequestFields.");

    public static readonly Option<long> MaxRequestBodySize = new("maxRequestBodySize", 30_000_000, Long(0, long.MaxValue),
        "largest request body in bytes; larger: 413 (Kestrel's default)",
        "Kestrel's MaxRequestBodySize, which matches IIS's maxAllowedContentLength.");

    public static readonly Option<int> MaxResponseHeadersTotalSize = new("maxResponseHeadersTotalSize", 64 * 1024, Int(256, 1024 * 1024),
        "largest downstream response head in bytes; larger: 502 (SocketsHttpHandler's default)",
        "SocketsHttpHandler's MaxResponseHeadersLength, what the HttpClient-based variants and YARP allow.");

    public static readonly Option<TimeSpan> RequestHeadersTimeout = new("requestHeadersTimeout", TimeSpan.FromSeconds(30), Seconds(),
        "seconds for a started request head to complete; then 408 and close (Kestrel's default)",
        "Kestrel's RequestHeadersTimeout: the slowloris defence, answered with 408 and close.");

    public static readonly Option<TimeSpan> KeepAliveTimeout = new("keepAliveTimeout", TimeSpan.FromSeconds(130), Seconds(),
        "seconds an idle client connection is kept (Kestrel's default)",
        "Kestrel's KeepAliveTimeout: idle client connections between requests are closed.");

    public static readonly Option<TimeSpan> TunnelIdleTimeout = new("tunnelIdleTimeout", TimeSpan.FromSeconds(60), Seconds(),
        "seconds a tunnel after 101 Switching Protocols (WebSocket) may carry nothing either way before both sides close (nginx's proxy_read_timeout default)",
        "nginx's proxy_read_timeout default, which is what bounds an idle upgraded connection (a WebSocket, RFC 9110 §7.8) there.");

    public static readonly Option<TimeSpan> LingeringTime = new("lingeringTime", TimeSpan.FromSeconds(30), Seconds(allowZero: true),
        "a connection closed with unread input (an error answer, a body not read): at most this many seconds of reading and discarding after its FIN; 0 closes at once (nginx's lingering_time)",
        "nginx's lingering_time. A connection closed with unread input sends its FIN after the last response byte and reads and discards what the client still sends, so that the close finds no unread input and the kernel's reset does not destroy the response before the client reads it.");

    public static readonly Option<TimeSpan> LingeringTimeout = new("lingeringTimeout", TimeSpan.FromSeconds(5), Seconds(),
        "that lingering close ends once the client sends nothing for this many seconds (nginx's lingering_timeout)",
        "nginx's lingering_timeout: a client that read the response and is done sends its FIN much sooner.");

    public static readonly Option<long> LingeringMaxBytes = new("lingeringMaxBytes", MaxRequestBodySize.DefaultValue, Long(0, long.MaxValue),
        "that lingering close ends after discarding this many bytes (maxRequestBodySize's default)",
        "maxRequestBodySize's default: about what the proxy would have read had it accepted the request. nginx bounds the linger by time only.");

    public static readonly Option<TimeSpan> DownstreamConnectTimeout = new("downstreamConnectTimeout", TimeSpan.FromSeconds(15), Seconds(),
        "seconds to connect downstream; then 502 (YARP's default)",
        "YARP's ForwarderHttpClientFactory ConnectTimeout.");

    public static readonly Option<TimeSpan> DownstreamResponseTimeout = new("downstreamResponseTimeout", TimeSpan.FromSeconds(100), Seconds(),
        "seconds without a response head (504) or body progress (abort) (YARP's default)",
        "YARP's ActivityTimeout, itself HttpClient.Timeout's default.");

    public static readonly Option<TimeSpan> DownstreamIdleTimeout = new("downstreamIdleTimeout", TimeSpan.FromSeconds(60), Seconds(),
        "llhttp: seconds an idle downstream connection is kept (SocketsHttpHandler's PooledConnectionIdleTimeout)",
        "SocketsHttpHandler's PooledConnectionIdleTimeout, which YARP keeps: an idle client connection does not pin a downstream connection (with its socket) for its whole life.");

    public static readonly Option<LoadBalancing> LoadBalancing = new("loadBalancing", LLRP.LoadBalancing.ConnectionRoundRobin, new(ParseLoadBalancing, p => p.ToString()),
        "ConnectionRoundRobin (per inbound connection), or per request: PowerOfTwoChoices, FirstAlphabetical, Random, RoundRobin, LeastRequests",
        "The original LLRP's assignment, so that benchmarks stay comparable with earlier runs.");

    public static readonly Option<TimeSpan> PassiveHealthReactivationPeriod = new("passiveHealthReactivationPeriod", TimeSpan.FromSeconds(60), Seconds(allowZero: true),
        "seconds a downstream stays out after a transport failure (not with one downstream); 0 is off (YARP's default)",
        "YARP's TransportFailureRateHealthPolicy reactivation period. YARP takes a destination out when failures exceed a rate; LLRP on the first transport failure, as nginx's max_fails=1 default does.");

    public static readonly Option<string> HealthCheckPath = new("healthCheckPath", "", new(ParseHealthCheckPath, p => p),
        "active health: GET this path on every downstream (2xx is healthy); empty is off",
        "Empty, no active health checks: as in YARP, where they are off until configured.");

    public static readonly Option<TimeSpan> HealthCheckInterval = new("healthCheckInterval", TimeSpan.FromSeconds(15), Seconds(),
        "active health: seconds between checks (YARP's default)",
        "YARP's ActiveHealthCheckOptions default.");

    public static readonly Option<TimeSpan> HealthCheckTimeout = new("healthCheckTimeout", TimeSpan.FromSeconds(10), Seconds(),
        "active health: seconds a check may take; longer is a failure (YARP's default)",
        "YARP's ActiveHealthCheckOptions default.");

    public static readonly Option<int> HealthCheckFall = new("healthCheckFall", 2, Int(1, 1000),
        "active health: failed checks in a row that take a downstream out (YARP's ConsecutiveFailures default)",
        "YARP's ConsecutiveFailuresHealthPolicy threshold. The name is HAProxy's fall (whose default is 3).");

    public static readonly Option<int> HealthCheckRise = new("healthCheckRise", 1, Int(1, 1000),
        "active health: passed checks in a row that bring it back (YARP: the first)",
        "YARP brings a destination back on its first passed check. The name is HAProxy's rise (whose default is 2).");

    public static readonly Option<TimeSpan> ShutdownTimeout = new("shutdownTimeout", TimeSpan.FromSeconds(30), Seconds(),
        "seconds a stop (SIGTERM, Ctrl+C) waits for exchanges in flight before aborting them (HostOptions.ShutdownTimeout's default)",
        "HostOptions.ShutdownTimeout's default, the bound the generic host and Kestrel's own graceful stop use: long enough for a slow download to finish, short enough for a service manager's stop (systemd waits 90 s).");

    // 64 MiB: twice the largest receive buffer Linux autotunes to by default (net.ipv4.tcp_rmem's 32 MiB); the kernel
    // caps what it grants at twice net.core.rmem_max anyway.
    public static readonly Option<int> DownstreamReceiveBuffer = new("downstreamReceiveBuffer", 0, Int(0, 64 * 1024 * 1024),
        "llhttp: SO_RCVBUF in bytes for downstream connections; 0 keeps the kernel's autotuned buffer (as SocketsHttpHandler, nginx and HAProxy do); a set size fixes the receive window (docs/tcp-receive-window.md)",
        "0, the kernel's buffer and its autotuning, as SocketsHttpHandler, nginx and HAProxy leave it (LLHttpOptions.ReceiveBufferSize).");

    public static readonly Option<TimeSpan> DownstreamShareAfter = new("downstreamShareAfter", TimeSpan.FromSeconds(1), Seconds(allowZero: true),
        "llhttp without shareClients: seconds a client connection stays idle before its downstream connection goes to the shared idle pool (at most 1,024 per downstream)",
        "Far above the gap between requests of a busy keep-alive client, so the affinity holds under load, and short enough that idle clients, however many, hold at most the shared pool's 1,024 idle downstream connections (nginx's crank config keeps 1,024 idle upstream connections per worker the same way).");

    public static readonly Option<TimeSpan> IdleTrimAfter = new("idleTrimAfter", TimeSpan.FromSeconds(0.5), Seconds(allowZero: true),
        "seconds without connections, requests or exchanges in flight after which the proxy gives back the buffers and heap a burst left (at most once per 16 MiB allocated); 0 is off",
        "A load that pauses this long has stopped for now (a busy connection's requests are micro- to milliseconds apart), and an idle proxy then gives back what its last burst left (IdleTrim), so that its memory a second after a burst is what its idle connections hold (docs/methodology.md, \"Decisions and their evidence\"). The once per 16 MiB: llhttp, allocating nothing per request, reaches it only through thousands of new connections.");

    public static readonly Option<bool> InlineScheduling = new("inlineScheduling", true, Bool,
        "run each exchange on the socket engine's epoll thread (Kestrel UnsafePreferInlineScheduling + inline socket completions); unsafe with blocking code",
        "On, unlike Kestrel and the runtime: it saves the thread-pool hop of every read (docs/methodology.md, \"Decisions and their evidence\"). Its risk is that one exchange that blocks stalls every connection its thread serves; nothing on LLRP's request path blocks (its I/O is asynchronous and its logging queued). Hosting/InlineSocketCompletions.cs says what it sets and why both halves go together.");

    public static readonly Option<LLHttpSocketEngine> SocketEngine = new("socketEngine",
        LLHttpSocketEngine.Epoll.IsSupported() ? LLHttpSocketEngine.Epoll : LLHttpSocketEngine.Runtime, new(ParseSocketEngine, e => e.ToString().ToLowerInvariant()),
        "client connections (Kestrel's transport) and llhttp's downstream connections: epoll (LLHttp's own engine; the default on Linux x86-64) or runtime (System.Net.Sockets; the default elsewhere)",
        "LLHttp's own engine where it runs: it saves the receive that finds nothing and the poll before reuse (docs/methodology.md, \"Decisions and their evidence\"). The HttpClient-based variants' downstream connections stay on the runtime's engine, a part of what those layers cost.");

    // 1,024: far above any core count this runs on; a typo such as 40000 is refused rather than started.
    public static readonly Option<int> EngineThreads = new("engineThreads", Environment.ProcessorCount, Int(1, 1024),
        "socketEngine=epoll: its loop threads, which run every exchange (as nginx's worker_processes or HAProxy's nbthread)",
        "One loop thread per core, as the runtime's engine has with inline completions. nginx and HAProxy run one worker or thread in the benchmarks (crank/README.md); 1 here gives llhttp the same parallelism, but neither choice won clearly, so the default stays one per core (docs/methodology.md, \"Decisions and their evidence\"). The runtime's engine has its own variable, DOTNET_SYSTEM_NET_SOCKETS_THREAD_COUNT.",
        shown: "processor count");

    public static readonly Option<TimeSpan> StatsInterval = new("statsInterval", TimeSpan.Zero, Seconds(allowZero: true),
        "print crank statistics every N seconds; 0 is off",
        "Off; crank jobs set 1 so that the agent collects the proxy's own numbers while the load runs.");

    public static readonly Option<TimeSpan> StatsWindow = new("statsWindow", TimeSpan.Zero, Seconds(allowZero: true),
        "statistics cover the last N seconds that ended with requests served; 0: since the first request",
        "From the first request on; crank jobs pass the load's measured duration, so that the proxy's figures cover the measured window only (Diagnostics/SelfReport.cs).");

    /// <summary>Every option, in --help's order. After the options: a static field's initialiser runs in text order.</summary>
    public static IReadOnlyList<OptionInfo> All { get; } =
    [
        Urls, Certificate, CertificateKey, Protocols, FrontEnd, Http2MaxConcurrentStreams, TlsHandshakeTimeout,
        Downstream, DownstreamTrust, DownstreamProtocol, Client, ShareClients, ShareClientsRoundRobin, ShareClientsCount,
        MaxRequestLineSize, MaxRequestHeadersTotalSize, MaxRequestHeaderCount, MaxRequestBodySize, MaxResponseHeadersTotalSize,
        RequestHeadersTimeout, KeepAliveTimeout, TunnelIdleTimeout, LingeringTime, LingeringTimeout, LingeringMaxBytes,
        DownstreamConnectTimeout, DownstreamResponseTimeout, DownstreamIdleTimeout, LoadBalancing, PassiveHealthReactivationPeriod,
        HealthCheckPath, HealthCheckInterval, HealthCheckTimeout, HealthCheckFall, HealthCheckRise, ShutdownTimeout,
        DownstreamReceiveBuffer, DownstreamShareAfter, IdleTrimAfter, InlineScheduling, SocketEngine, EngineThreads,
        StatsInterval, StatsWindow,
    ];

    // The kinds of value, each with its refusal. Properties, not fields: the options above are initialised first.
    private static OptionKind<string> Text => new((_, value) => value, value => value);

    // Kept as given: the files are opened, and their refusals written, where the options they need are known too.
    private static OptionKind<string?> FilePath => new((_, value) => value, value => value ?? "");

    private static OptionKind<bool> Bool => new((name, value) => bool.TryParse(value, out var result)
        ? result
        : value.Trim() switch
        {
            "1" => true,
            "0" => false,
            _ => throw new OptionsException($"--{name} '{value}' is not true or false."),
        }, value => value ? "true" : "false");

    private static OptionKind<long> Long(long min, long max) => new((name, value) =>
        long.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out var result) && result >= min && result <= max
            ? result
            : throw new OptionsException($"--{name} '{value}' is not a whole number from {min} to {max}."),
        value => value.ToString(CultureInfo.InvariantCulture));

    private static OptionKind<int> Int(int min, int max)
    {
        var whole = Long(min, max);
        return new((name, value) => (int)whole.Parse(name, value), value => value.ToString(CultureInfo.InvariantCulture));
    }

    private static OptionKind<TimeSpan> Seconds(bool allowZero = false) => new((name, value) =>
        !double.TryParse(value, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var seconds)
            || seconds < 0 || (seconds == 0 && !allowZero) || seconds > 86_400
            ? throw new OptionsException(allowZero
                ? $"--{name} '{value}' is not a number of seconds from 0 to 86400."
                : $"--{name} '{value}' is not a number of seconds above 0 and at most 86400.")
            : TimeSpan.FromSeconds(seconds),
        value => value.TotalSeconds.ToString(CultureInfo.InvariantCulture));

    private static Uri[] ParseDownstreams(string name, string value)
    {
        var uris = new List<Uri>();
        foreach (var part in value.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (!Uri.TryCreate(part, UriKind.Absolute, out var uri) || (uri.Scheme != Uri.UriSchemeHttp && uri.Scheme != Uri.UriSchemeHttps)
                || uri.AbsolutePath != "/" || !string.IsNullOrEmpty(uri.Query))
            {
                throw new OptionsException($"--downstream '{part}' is not an http://HOST:PORT or https://HOST:PORT address (paths and queries are not supported).");
            }
            uris.Add(uri);
        }
        return uris.Count > 0 ? [.. uris] : throw new OptionsException("--downstream names no address.");
    }

    private static ClientKind ParseClient(string name, string value) => value.ToLowerInvariant() switch
    {
        "llhttp" => ClientKind.LLHttp,
        "httpclient" => ClientKind.HttpClient,
        "httpclient-httpcontext" or "httpclientwithcontext" => ClientKind.HttpClientWithContext,
        "yarp" => ClientKind.Yarp,
        _ => throw new OptionsException($"--client '{value}' is not one of llhttp, httpclient, httpclient-httpcontext, yarp."),
    };

    // LLRP.DownstreamProtocol, LLRP.FrontEnd, LLRP.LoadBalancing: here the plain names are the options above.
    private static LLRP.DownstreamProtocol ParseDownstreamProtocol(string name, string value) => value.Trim().ToLowerInvariant() switch
    {
        "http1" => LLRP.DownstreamProtocol.Http1,
        "h2" => LLRP.DownstreamProtocol.H2,
        "h2c" => LLRP.DownstreamProtocol.H2c,
        _ => throw new OptionsException($"--downstreamProtocol '{value}' is not one of http1, h2, h2c."),
    };

    /// <summary>http1, h2 or http1,h2 (either order, case-insensitive).</summary>
    private static ListenProtocols? ParseProtocols(string name, string value)
    {
        ListenProtocols protocols = 0;
        foreach (var part in value.Split(',', StringSplitOptions.TrimEntries))
        {
            var one = part.ToLowerInvariant() switch
            {
                "http1" => ListenProtocols.Http1,
                "h2" => ListenProtocols.Http2,
                _ => (ListenProtocols)0,
            };
            if (one == 0 || (protocols & one) != 0)
            {
                throw new OptionsException($"--protocols '{value}' is not one of http1, h2, http1,h2.");
            }
            protocols |= one;
        }
        return protocols;
    }

    private static LLRP.FrontEnd ParseFrontEnd(string name, string value) => value.Trim().ToLowerInvariant() switch
    {
        "raw" => LLRP.FrontEnd.Raw,
        "kestrel" => LLRP.FrontEnd.Kestrel,
        _ => throw new OptionsException($"--frontEnd '{value}' is not one of raw, kestrel."),
    };

    private static LLHttpSocketEngine ParseSocketEngine(string name, string value) => value.Trim().ToLowerInvariant() switch
    {
        "runtime" => LLHttpSocketEngine.Runtime,
        "epoll" when LLHttpSocketEngine.Epoll.IsSupported() => LLHttpSocketEngine.Epoll,
        "epoll" => throw new OptionsException("--socketEngine epoll runs on Linux x86-64 only; use runtime here."),
        _ => throw new OptionsException($"--socketEngine '{value}' is not one of runtime, epoll."),
    };

    private static LLRP.LoadBalancing ParseLoadBalancing(string name, string value)
    {
        // Names only, ignoring case: Enum.TryParse would also take numbers ("3") and comma-separated lists.
        foreach (var policy in Enum.GetValues<LLRP.LoadBalancing>())
        {
            if (policy.ToString().Equals(value.Trim(), StringComparison.OrdinalIgnoreCase))
            {
                return policy;
            }
        }
        throw new OptionsException($"--loadBalancing '{value}' is not one of {string.Join(", ", Enum.GetNames<LLRP.LoadBalancing>())}.");
    }

    private static string ParseHealthCheckPath(string name, string value)
    {
        var path = value.Trim();
        // An origin-form path (RFC 9112 §3.2.1) with no characters that would need escaping in a request line.
        if (!path.StartsWith('/') || path.Any(c => c <= ' ' || c >= 0x7f || c == '#'))
        {
            throw new OptionsException($"--healthCheckPath '{value}' is not a path starting with '/' (printable ASCII, no spaces, no '#').");
        }
        return path;
    }
}

/// <summary>
/// The command-line layer: <see cref="Read"/> fills <see cref="ProxyOptions"/> and its records from the options
/// (<see cref="Option"/>), with the checks that take two options together; --help and docs/options.md's table; and the
/// command line itself, read the way .NET's command-line configuration reads it (--name value, --name=value, /name
/// value, name=value) and held to the known options: a misspelt name would otherwise be ignored silently. Environment
/// variables and appsettings.json are not checked: the environment holds much that is not LLRP's.
/// </summary>
public static class CommandLine
{
    /// <summary>Every option, in --help's order: what the command line is checked against.</summary>
    public static IReadOnlyList<OptionInfo> Known => Option.All;

    /// <summary>The options the configuration names, each checked; a bad one throws <see cref="OptionsException"/>.</summary>
    public static ProxyOptions Read(IConfiguration config)
    {
        // One value after another in a fixed order: of two bad values, the first read is the one reported.
        var downstreams = Option.Downstream.Read(config);
        var urls = Option.Urls.Read(config);
        var listenEndPoints = ListenEndPoints(urls);
        var protocols = Option.Protocols.Read(config);
        var frontEnd = Option.FrontEnd.Read(config);
        if (frontEnd == FrontEnd.Kestrel && protocols == ListenProtocols.Http1AndHttp2 && listenEndPoints.Any(l => !l.Tls))
        {
            // Kestrel serves one protocol on a cleartext listener (no ALPN); the raw front end tells them apart itself.
            throw new OptionsException("--protocols http1,h2 on an http:// listener needs --frontEnd raw (Kestrel cannot serve both without TLS).");
        }
        var http2MaxConcurrentStreams = Option.Http2MaxConcurrentStreams.Read(config);
        var tls = new TlsOptions
        {
            ServerCertificate = LoadServerCertificate(Option.Certificate.Read(config), Option.CertificateKey.Read(config), listenEndPoints),
            HandshakeTimeout = Option.TlsHandshakeTimeout.Read(config),
        };
        var downstreamTrust = LoadDownstreamTrust(Option.DownstreamTrust.Read(config), downstreams);
        var client = Option.Client.Read(config);
        var downstreamProtocol = Option.DownstreamProtocol.Read(config);
        CheckDownstreamProtocol(downstreamProtocol, client, downstreams);
        var shareClients = Option.ShareClients.Read(config);
        var shareClientsRoundRobin = Option.ShareClientsRoundRobin.Read(config);
        var shareClientsCount = Option.ShareClientsCount.Read(config);
        var limits = new RequestLimits
        {
            MaxRequestLineSize = Option.MaxRequestLineSize.Read(config),
            MaxRequestHeadersTotalSize = Option.MaxRequestHeadersTotalSize.Read(config),
            MaxRequestHeaderCount = Option.MaxRequestHeaderCount.Read(config),
            MaxRequestBodySize = Option.MaxRequestBodySize.Read(config),
        };
        var maxResponseHeadersTotalSize = Option.MaxResponseHeadersTotalSize.Read(config);
        var requestHeadersTimeout = Option.RequestHeadersTimeout.Read(config);
        var keepAliveTimeout = Option.KeepAliveTimeout.Read(config);
        var tunnelIdleTimeout = Option.TunnelIdleTimeout.Read(config);
        var lingeringTime = Option.LingeringTime.Read(config);
        var lingeringTimeout = Option.LingeringTimeout.Read(config);
        var lingeringMaxBytes = Option.LingeringMaxBytes.Read(config);
        var downstreamConnectTimeout = Option.DownstreamConnectTimeout.Read(config);
        var downstreamResponseTimeout = Option.DownstreamResponseTimeout.Read(config);
        var downstreamIdleTimeout = Option.DownstreamIdleTimeout.Read(config);
        var downstreamReceiveBuffer = Option.DownstreamReceiveBuffer.Read(config);
        var balancing = new BalancingOptions
        {
            Downstreams = downstreams,
            DownstreamTrust = downstreamTrust,
            DownstreamProtocol = downstreamProtocol,
            LoadBalancing = Option.LoadBalancing.Read(config),
            PassiveHealthReactivationPeriod = Option.PassiveHealthReactivationPeriod.Read(config),
            HealthCheckPath = Option.HealthCheckPath.Read(config),
            HealthCheckInterval = Option.HealthCheckInterval.Read(config),
            HealthCheckTimeout = Option.HealthCheckTimeout.Read(config),
            HealthCheckFall = Option.HealthCheckFall.Read(config),
            HealthCheckRise = Option.HealthCheckRise.Read(config),
        };
        return new ProxyOptions
        {
            Balancing = balancing,
            Limits = limits,
            Urls = urls,
            ListenEndPoints = listenEndPoints,
            Protocols = protocols,
            FrontEnd = frontEnd,
            Http2MaxConcurrentStreams = http2MaxConcurrentStreams,
            Tls = tls,
            Client = client,
            ShareClients = shareClients,
            ShareClientsRoundRobin = shareClientsRoundRobin,
            ShareClientsCount = shareClientsCount,
            MaxResponseHeadersTotalSize = maxResponseHeadersTotalSize,
            RequestHeadersTimeout = requestHeadersTimeout,
            KeepAliveTimeout = keepAliveTimeout,
            TunnelIdleTimeout = tunnelIdleTimeout,
            LingeringTime = lingeringTime,
            LingeringTimeout = lingeringTimeout,
            LingeringMaxBytes = lingeringMaxBytes,
            DownstreamConnectTimeout = downstreamConnectTimeout,
            DownstreamResponseTimeout = downstreamResponseTimeout,
            DownstreamIdleTimeout = downstreamIdleTimeout,
            DownstreamReceiveBuffer = downstreamReceiveBuffer,
            // The rest are read here, in this order, after everything above.
            ShutdownTimeout = Option.ShutdownTimeout.Read(config),
            DownstreamShareAfter = Option.DownstreamShareAfter.Read(config),
            IdleTrimAfter = Option.IdleTrimAfter.Read(config),
            InlineScheduling = Option.InlineScheduling.Read(config),
            SocketEngine = Option.SocketEngine.Read(config),
            EngineThreads = Option.EngineThreads.Read(config),
            StatsInterval = Option.StatsInterval.Read(config),
            StatsWindow = Option.StatsWindow.Read(config),
        };
    }

    /// <summary>http1, h2 or http1,h2 (either order, case-insensitive); null when not given (each listener's default).</summary>
    public static ListenProtocols? ParseProtocols(string? value) => Option.Protocols.Parse(value);

    public static DownstreamProtocol ParseDownstreamProtocol(string? value) => Option.DownstreamProtocol.Parse(value);

    /// <summary>
    /// The combinations that can work: h2 is negotiated by ALPN inside TLS (RFC 9113 §3.2), so it needs https://
    /// downstreams; h2c is cleartext with prior knowledge (RFC 9113 §3.3), so it needs http:// ones (h2c over TLS does not
    /// exist); and only the HttpClient-based variants have an HTTP/2 client.
    /// </summary>
    private static void CheckDownstreamProtocol(DownstreamProtocol protocol, ClientKind client, Uri[] downstreams)
    {
        if (protocol == DownstreamProtocol.Http1)
        {
            return;
        }
        var name = ProxyOptions.Name(protocol);
        if (client == ClientKind.LLHttp)
        {
            throw new OptionsException($"--downstreamProtocol {name} needs --client httpclient, httpclient-httpcontext or yarp: llhttp has no HTTP/2 client yet.");
        }
        var scheme = protocol == DownstreamProtocol.H2 ? Uri.UriSchemeHttps : Uri.UriSchemeHttp;
        if (downstreams.FirstOrDefault(d => d.Scheme != scheme) is { } other)
        {
            throw new OptionsException(protocol == DownstreamProtocol.H2
                ? $"--downstreamProtocol h2 needs https:// downstreams (HTTP/2 over TLS with ALPN); {other.GetLeftPart(UriPartial.Authority)} is not (h2c is HTTP/2 in cleartext)."
                : $"--downstreamProtocol h2c needs http:// downstreams (HTTP/2 in cleartext); {other.GetLeftPart(UriPartial.Authority)} is not (h2 is HTTP/2 over TLS).");
        }
    }

    private static X509Certificate2? LoadServerCertificate(string? certificate, string? key, ListenEndPoint[] listen)
    {
        var tls = listen.Any(l => l.Tls);
        if (certificate is null)
        {
            return tls ? throw new OptionsException("--urls has an https:// address: --certificate is required (and --certificateKey for a PEM key file).")
                : key is null ? null : throw new OptionsException($"--certificateKey '{key}' is given without --certificate.");
        }
        X509Certificate2 loaded;
        try
        {
            loaded = ServerCertificate.Load(certificate.Trim(), key?.Trim());
        }
        catch (TlsSetupException e)
        {
            throw new OptionsException(e.Message);
        }
        if (!tls)
        {
            loaded.Dispose();
            throw new OptionsException("--certificate is given but --urls has no https:// address.");
        }
        return loaded;
    }

    private static DownstreamTrust LoadDownstreamTrust(string? path, Uri[] downstreams)
    {
        if (path is null)
        {
            return DownstreamTrust.System;
        }
        DownstreamTrust trust;
        try
        {
            trust = DownstreamTrust.Load(path.Trim());
        }
        catch (TlsSetupException e)
        {
            throw new OptionsException(e.Message);
        }
        return downstreams.Any(d => d.Scheme == Uri.UriSchemeHttps)
            ? trust
            : throw new OptionsException("--downstreamTrust is given but --downstream has no https:// address.");
    }

    /// <summary>The addresses a --urls value names; <see cref="ProxyOptions"/>' default is its default's.</summary>
    internal static ListenEndPoint[] ListenEndPoints(string urls)
    {
        var endPoints = new List<ListenEndPoint>();
        foreach (var url in urls.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (!Uri.TryCreate(url.Replace("*", "0.0.0.0", StringComparison.Ordinal).Replace("+", "0.0.0.0", StringComparison.Ordinal), UriKind.Absolute, out var uri)
                || (uri.Scheme != Uri.UriSchemeHttp && uri.Scheme != Uri.UriSchemeHttps) || uri.AbsolutePath != "/" || !string.IsNullOrEmpty(uri.Query))
            {
                throw new OptionsException($"--urls '{url}' is not an http://IP:PORT or https://IP:PORT address.");
            }
            var host = uri.Host.Trim('[', ']');
            IPAddress address;
            if (host == "localhost")
            {
                address = IPAddress.Loopback;
            }
            else if (!IPAddress.TryParse(host, out address!))
            {
                throw new OptionsException($"--urls '{url}': '{uri.Host}' is not an IP address or localhost.");
            }
            endPoints.Add(new ListenEndPoint(new IPEndPoint(address, uri.Port), uri.Scheme == Uri.UriSchemeHttps));
        }
        // Kestrel given no address would fall back to its own default (localhost:5000), which nobody asked for.
        return endPoints.Count > 0 ? [.. endPoints] : throw new OptionsException("--urls names no address: one or more http://IP:PORT separated by ';'.");
    }

    public static bool AsksForHelp(IEnumerable<string> args) =>
        args.Any(a => a.ToLowerInvariant() is "--help" or "-h" or "-?" or "/?" or "/help");

    /// <summary>--help-markdown: docs/options.md's table (docs/options.sh writes it there), not an option of the proxy.</summary>
    public static bool AsksForMarkdown(IEnumerable<string> args) =>
        args.Any(a => a.Equals("--help-markdown", StringComparison.OrdinalIgnoreCase));

    public static string Usage()
    {
        var names = Known.Max(o => o.Name.Length);
        var defaults = Known.Max(o => o.Default.Length);
        var text = new StringBuilder()
            .AppendLine("Usage: LLRP --downstream http://HOST:PORT[;...] [--option value]...")
            .AppendLine("Options also come from environment variables (name=value) and appsettings.json; names are case-insensitive,")
            .AppendLine("durations are seconds (fractions allowed). A bad or unknown option stops LLRP with one line and exit code 2.")
            .AppendLine()
            .AppendLine(string.Create(CultureInfo.InvariantCulture, $"  {"option".PadRight(names + 2)}  {"default".PadRight(defaults)}  meaning"));
        foreach (var option in Known)
        {
            text.AppendLine(string.Create(CultureInfo.InvariantCulture, $"  --{option.Name.PadRight(names)}  {option.Default.PadRight(defaults)}  {option.Meaning}"));
        }
        return text.AppendLine(string.Create(CultureInfo.InvariantCulture, $"  {HelpNames.PadRight(names + 2)}  {"".PadRight(defaults)}  {HelpMeaning}")).ToString();
    }

    /// <summary>docs/options.md's table: every option as --help shows it, with where its default comes from.</summary>
    public static string Markdown()
    {
        static string Cell(string text) => text.Replace("|", "\\|", StringComparison.Ordinal);
        static string Code(string text) => text.Length == 0 ? "" : $"`{text}`";
        var table = new StringBuilder()
            .Append("| option | default | meaning | where the default comes from |\n")
            .Append("|---|---|---|---|\n");
        foreach (var option in Known)
        {
            table.Append(CultureInfo.InvariantCulture, $"| `--{option.Name}` | {Code(Cell(option.Default))} | {Cell(option.Meaning)} | {Cell(option.Reason)} |\n");
        }
        return table.Append(CultureInfo.InvariantCulture, $"| `{HelpNames}` |  | {HelpMeaning} |  |\n").ToString();
    }

    private const string HelpNames = "--help, -h";
    private const string HelpMeaning = "print this and exit";

    /// <summary>Throws <see cref="OptionsException"/> for an unknown name, a name given twice, a missing value or a stray word.</summary>
    public static void Check(IReadOnlyList<string> args)
    {
        var seen = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        for (var i = 0; i < args.Count; i++)
        {
            var arg = args[i];
            var separator = arg.IndexOf('=', StringComparison.Ordinal);
            var prefix = arg.StartsWith("--", StringComparison.Ordinal) ? 2 : arg.StartsWith('/') || arg.StartsWith('-') ? 1 : 0;
            if (prefix == 0 && separator < 0)
            {
                throw new OptionsException($"unexpected argument '{arg}': options are written --name value (--help lists them).");
            }
            var name = separator < 0 ? arg[prefix..] : arg[prefix..separator];
            var option = Known.FirstOrDefault(o => o.Name.Equals(name, StringComparison.OrdinalIgnoreCase));
            // .NET's command-line configuration ignores a single-dash name it has no mapping for: refuse it instead.
            if (option is null || (prefix == 1 && arg[0] == '-'))
            {
                var shown = separator < 0 ? arg : arg[..separator];
                var closest = Closest(name);
                throw new OptionsException(closest is null
                    ? $"unknown option {shown} (--help lists every option)."
                    : $"unknown option {shown}; did you mean --{closest.Name}?");
            }
            if (!seen.Add(option.Name))
            {
                throw new OptionsException($"--{option.Name} is given twice.");
            }
            if (separator < 0 && ++i == args.Count)
            {
                throw new OptionsException($"--{option.Name} needs a value.");
            }
        }
    }

    /// <summary>The known option nearest to a misspelt name (edit distance, case-insensitive), if any is near.</summary>
    public static OptionInfo? Closest(string name)
    {
        var wanted = name.ToLowerInvariant();
        // A third of the name (at least 2) in edits: catches typos and a dropped word, not unrelated names.
        var best = Math.Max(2, wanted.Length / 3) + 1;
        OptionInfo? closest = null;
        foreach (var option in Known)
        {
            var distance = EditDistance(wanted, option.Name.ToLowerInvariant());
            if (distance < best)
            {
                best = distance;
                closest = option;
            }
        }
        return closest;
    }

    private static int EditDistance(string a, string b)
    {
        var previous = new int[b.Length + 1];
        var current = new int[b.Length + 1];
        for (var j = 0; j <= b.Length; j++)
        {
            previous[j] = j;
        }
        for (var i = 1; i <= a.Length; i++)
        {
            current[0] = i;
            for (var j = 1; j <= b.Length; j++)
            {
                var substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
                current[j] = Math.Min(substitution, Math.Min(previous[j], current[j - 1]) + 1);
            }
            (previous, current) = (current, previous);
        }
        return previous[b.Length];
    }
}

/// <summary>A bad option: the message names it and what it accepts.</summary>
public sealed class OptionsException(string message) : Exception(message);
