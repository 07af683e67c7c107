using System.Globalization;
using System.Net;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using LLHttp;
using LLRP.Balancing;
using LLRP.Tls;
using Microsoft.Extensions.Configuration;

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
/// Every option of the proxy, read once at start-up from IConfiguration (command line, environment,
/// appsettings.json). Names are case-insensitive; durations are in seconds.
/// </summary>
public sealed class ProxyOptions
{
    // The port run-local.sh and crank/smoke.sh expect; loopback only, so a bare start exposes nothing.
    public const string DefaultUrls = "http://127.0.0.1:8080";

    /// <summary>
    /// Every option with its default as shown and its meaning in one line: what --help prints and what the command
    /// line is checked against. An option read in <see cref="From"/> must be listed here (a test holds both together).
    /// </summary>
    public static IReadOnlyList<OptionInfo> Known { get; } =
    [
        new("urls", DefaultUrls, "listen addresses, ';'-separated http://IP:PORT or https://IP:PORT (localhost, * and + accepted)"),
        new("certificate", "", "https listeners: the server certificate, a PEM file (key in --certificateKey, or in the same file) or a PKCS#12 file"),
        new("certificateKey", "", "https listeners: the PEM private key of --certificate"),
        new("tlsHandshakeTimeout", "10", "seconds a client may take to complete its TLS handshake; then the connection closes (Kestrel's default)"),
        new("downstream", "(required)", "one or more http://HOST:PORT or https://HOST:PORT, ';'-separated; loadBalancing chooses among them"),
        new("downstreamTrust", "", "https downstreams: a PEM bundle of CA certificates trusted besides the system store"),
        new("client", "llhttp", "forwarding variant: llhttp, httpclient, httpclient-httpcontext or yarp"),
        new("shareClients", "false", "share clients across inbound connections (llhttp: one LIFO connection pool per downstream)"),
        new("shareClients.roundRobin", "false", "HttpClient-based variants with shareClients: rotate clients per request, not per connection"),
        new("shareClients.count", "processor count", "HttpClient-based variants with shareClients: how many clients"),
        new("maxRequestLineSize", "8192", "longest request line in bytes; longer: 414 (Kestrel's default)"),
        new("maxRequestHeadersTotalSize", "32768", "largest request header section in bytes; larger: 431 (Kestrel's default)"),
        new("maxRequestHeaderCount", "100", "most request header fields; more: 431 (Kestrel's default)"),
        new("maxRequestBodySize", "30000000", "largest request body in bytes; larger: 413 (Kestrel's default)"),
        new("maxResponseHeadersTotalSize", "65536", "largest downstream response head in bytes; larger: 502 (SocketsHttpHandler's default)"),
        new("requestHeadersTimeout", "30", "seconds for a started request head to complete; then 408 and close (Kestrel's default)"),
        new("keepAliveTimeout", "130", "seconds an idle client connection is kept (Kestrel's default)"),
        new("downstreamConnectTimeout", "15", "seconds to connect downstream; then 502 (YARP's default)"),
        new("downstreamResponseTimeout", "100", "seconds without a response head (504) or body progress (abort) (YARP's default)"),
        new("downstreamIdleTimeout", "60", "llhttp: seconds an idle downstream connection is kept (SocketsHttpHandler's PooledConnectionIdleTimeout)"),
        new("loadBalancing", "ConnectionRoundRobin", "ConnectionRoundRobin (per inbound connection), or per request: PowerOfTwoChoices, FirstAlphabetical, Random, RoundRobin, LeastRequests"),
        new("passiveHealthReactivationPeriod", "60", "seconds a downstream stays out after a transport failure (not with one downstream); 0 is off (YARP's default)"),
        new("healthCheckPath", "", "active health: GET this path on every downstream (2xx is healthy); empty is off"),
        new("healthCheckInterval", "15", "active health: seconds between checks (YARP's default)"),
        new("healthCheckTimeout", "10", "active health: seconds a check may take; longer is a failure (YARP's default)"),
        new("healthCheckFall", "2", "active health: failed checks in a row that take a downstream out (YARP's ConsecutiveFailures default)"),
        new("healthCheckRise", "1", "active health: passed checks in a row that bring it back (YARP: the first)"),
        new("shutdownTimeout", "30", "seconds a stop (SIGTERM, Ctrl+C) waits for exchanges in flight before aborting them (HostOptions.ShutdownTimeout's default)"),
        new("downstreamReceiveBuffer", "0", "llhttp: SO_RCVBUF in bytes for downstream connections; 0 keeps the kernel's autotuned buffer (as SocketsHttpHandler, nginx and HAProxy do); a set size fixes the receive window (docs/tcp-receive-window.md)"),
        new("downstreamShareAfter", "1", "llhttp without shareClients: seconds a client connection stays idle before its downstream connection goes to the shared idle pool (at most 1,024 per downstream)"),
        new("idleTrimAfter", "5", "seconds without connections, requests or exchanges in flight after which the proxy gives back the buffers and heap a burst left (at most once per 16 MiB allocated); 0 is off"),
        new("inlineScheduling", "true", "run each exchange on the socket engine's epoll thread (Kestrel UnsafePreferInlineScheduling + inline socket completions); unsafe with blocking code"),
        new("socketEngine", DefaultSocketEngine.ToString().ToLowerInvariant(), "client connections (Kestrel's transport) and llhttp's downstream connections: epoll (LLHttp's own engine; the default on Linux x86-64) or runtime (System.Net.Sockets; the default elsewhere)"),
        new("engineThreads", "processor count", "socketEngine=epoll: its loop threads, which run every exchange (as nginx's worker_processes or HAProxy's nbthread)"),
        new("statsInterval", "0", "print crank statistics every N seconds; 0 is off"),
        new("statsWindow", "0", "statistics cover the last N seconds that ended with requests served; 0: since the first request"),
    ];

    public required Uri[] Downstreams { get; init; }

    /// <summary>The --urls value as given, and the addresses it names.</summary>
    public string Urls { get; init; } = DefaultUrls;

    public ListenEndPoint[] ListenEndPoints { get; init; } = [new(new IPEndPoint(IPAddress.Loopback, 8080), Tls: false)];

    /// <summary>The certificate https listeners present; null when every listener is cleartext.</summary>
    public X509Certificate2? ServerCertificate { get; init; }

    // Matches Kestrel's HttpsConnectionAdapterOptions.HandshakeTimeout (10 s): a client that opens a TLS connection and
    // stalls its handshake (slowloris during TLS) holds a connection this long at most.
    public TimeSpan TlsHandshakeTimeout { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>What https downstreams are checked against: the system store, plus --downstreamTrust.</summary>
    public DownstreamTrust DownstreamTrust { get; init; } = DownstreamTrust.System;

    public ClientKind Client { get; init; } = ClientKind.LLHttp;

    // "shareClients*" keep the original LLRP's names so crank's --application.environmentVariables works.
    public bool ShareClients { get; init; }
    public bool ShareClientsRoundRobin { get; init; }
    public int ShareClientsCount { get; init; } = Environment.ProcessorCount;

    // Matches Kestrel's MaxRequestLineSize (8 KB); RFC 9112 §3 recommends supporting at least 8000 octets.
    public int MaxRequestLineSize { get; init; } = 8 * 1024;

    // Matches Kestrel's MaxRequestHeadersTotalSize, which matches nginx's large_client_header_buffers (32 KB).
    public int MaxRequestHeadersTotalSize { get; init; } = 32 * 1024;

    // Matches Kestrel's MaxRequestHeaderCount, which matches Apache httpd's LimitRequestFields (100).
    public int MaxRequestHeaderCount { get; init; } = 100;

    /// <summary>The largest maxRequestHeaderCount accepted: 100 times the default, far past any real client.</summary>
    internal const int MaxHeaderCountLimit = 10_000;

    // Matches Kestrel's MaxRequestBodySize (30,000,000 B), which matches IIS's maxAllowedContentLength.
    public long MaxRequestBodySize { get; init; } = 30_000_000;

    // Matches SocketsHttpHandler's MaxResponseHeadersLength (64 KiB); a larger downstream head is a 502.
    public int MaxResponseHeadersTotalSize { get; init; } = 64 * 1024;

    // Matches Kestrel's RequestHeadersTimeout (30 s): slowloris defence, answered with 408 and close.
    public TimeSpan RequestHeadersTimeout { get; init; } = TimeSpan.FromSeconds(30);

    // Matches Kestrel's KeepAliveTimeout (130 s): idle client connections between requests are closed.
    public TimeSpan KeepAliveTimeout { get; init; } = TimeSpan.FromSeconds(130);

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

    // 5 s without a connection opened, a request or an exchange in flight: a load that pauses that long has stopped (a
    // busy connection's requests are micro- to milliseconds apart), and an idle proxy then gives back what its last
    // burst left (IdleTrim). 0 turns it off.
    public TimeSpan IdleTrimAfter { get; init; } = TimeSpan.FromSeconds(5);

    // ConnectionRoundRobin is the original LLRP's assignment: the default, so benchmarks stay comparable with earlier sittings.
    public LoadBalancing LoadBalancing { get; init; } = LoadBalancing.ConnectionRoundRobin;

    // Matches YARP's TransportFailureRateHealthPolicy reactivation period (60 s). YARP takes a destination out when
    // failures exceed a rate; LLRP on the first transport failure, as nginx's max_fails=1 default does.
    public TimeSpan PassiveHealthReactivationPeriod { get; init; } = TimeSpan.FromSeconds(60);

    // Empty: no active health checks (as in YARP, where they are off until configured).
    public string HealthCheckPath { get; init; } = "";

    // Match YARP's ActiveHealthCheckOptions defaults: a probe every 15 s, each allowed 10 s.
    public TimeSpan HealthCheckInterval { get; init; } = TimeSpan.FromSeconds(15);
    public TimeSpan HealthCheckTimeout { get; init; } = TimeSpan.FromSeconds(10);

    // YARP's ConsecutiveFailuresHealthPolicy: 2 failed probes in a row take a destination out, 1 passed brings it back.
    // The names are HAProxy's (fall/rise; its defaults are 3 and 2).
    public int HealthCheckFall { get; init; } = 2;
    public int HealthCheckRise { get; init; } = 1;

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
    // of every read: 20-30 % less CPU per request for llhttp in two interleaved A/Bs on the 2-core box
    // (analysis/results/20261123-inline-ab, 20261123-1143-inline-settle). Its risk is that one exchange that blocks
    // stalls every connection its thread serves; nothing on LLRP's request path blocks (its I/O is asynchronous and its
    // logging queued). Hosting/InlineSocketCompletions.cs says what it sets and why both halves go together.
    public bool InlineScheduling { get; init; } = true;

    // LLHttp's own epoll engine where it runs (Linux x86-64), the runtime's elsewhere. It carries every variant's client
    // connections (Transport/EpollConnection, Kestrel's transport) and llhttp's downstream connections; the
    // HttpClient-based variants' downstream connections stay on the runtime's engine, a part of what those layers cost.
    // Measured against the runtime's engine in analysis/results/20261126-socket-engine-ab.
    public LLHttpSocketEngine SocketEngine { get; init; } = DefaultSocketEngine;

    // One loop thread per core by default, as the runtime's engine with inline completions. nginx and HAProxy run one
    // worker/thread in the benchmarks (crank/README.md); 1 here gives llhttp the same parallelism, at no CPU saving at
    // 64 connections and 19 % fewer requests at 256 on the 2-core box (analysis/results/20261126-engine-threads-ab).
    // The runtime's engine has its own variable, DOTNET_SYSTEM_NET_SOCKETS_THREAD_COUNT.
    public int EngineThreads { get; init; } = Environment.ProcessorCount;

    // A computed property, not a static field: Known (above) reads it while the statics are being initialised.
    public static LLHttpSocketEngine DefaultSocketEngine => LLHttpSocketEngine.Epoll.IsSupported() ? LLHttpSocketEngine.Epoll : LLHttpSocketEngine.Runtime;

    // Off by default; crank jobs set 1 so the agent collects the proxy's own numbers while the load runs.
    public TimeSpan StatsInterval { get; init; } = TimeSpan.Zero;

    // 0 = from the first request on; crank jobs pass the load's measured duration so the proxy's figures cover the
    // measured window only (Diagnostics/SelfReport.cs).
    public TimeSpan StatsWindow { get; init; } = TimeSpan.Zero;

    public static ProxyOptions From(IConfiguration config)
    {
        var downstream = config["downstream"];
        if (string.IsNullOrWhiteSpace(downstream))
        {
            throw new OptionsException("--downstream is required: one or more http://HOST:PORT or https://HOST:PORT separated by ';'.");
        }

        var uris = new List<Uri>();
        foreach (var part in downstream.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (!Uri.TryCreate(part, UriKind.Absolute, out var uri) || (uri.Scheme != Uri.UriSchemeHttp && uri.Scheme != Uri.UriSchemeHttps)
                || uri.AbsolutePath != "/" || !string.IsNullOrEmpty(uri.Query))
            {
                throw new OptionsException($"--downstream '{part}' is not an http://HOST:PORT or https://HOST:PORT address (paths and queries are not supported).");
            }
            uris.Add(uri);
        }
        if (uris.Count == 0)
        {
            throw new OptionsException("--downstream names no address.");
        }

        var urls = config["urls"] ?? DefaultUrls;
        var listen = ParseUrls(urls);
        return new ProxyOptions
        {
            Downstreams = [.. uris],
            Urls = urls,
            ListenEndPoints = listen,
            ServerCertificate = LoadServerCertificate(config, listen),
            TlsHandshakeTimeout = Seconds(config, "tlsHandshakeTimeout", 10),
            DownstreamTrust = LoadDownstreamTrust(config, uris),
            Client = ParseClient(config["client"]),
            ShareClients = Bool(config, "shareClients", false),
            ShareClientsRoundRobin = Bool(config, "shareClients.roundRobin", false),
            ShareClientsCount = Int(config, "shareClients.count", Environment.ProcessorCount, 1, 4096),
            MaxRequestLineSize = Int(config, "maxRequestLineSize", 8 * 1024, 64, 1024 * 1024),
            MaxRequestHeadersTotalSize = Int(config, "maxRequestHeadersTotalSize", 32 * 1024, 256, 512 * 1024),
            MaxRequestHeaderCount = Int(config, "maxRequestHeaderCount", 100, 1, MaxHeaderCountLimit),
            MaxRequestBodySize = Long(config, "maxRequestBodySize", 30_000_000, 0, long.MaxValue),
            MaxResponseHeadersTotalSize = Int(config, "maxResponseHeadersTotalSize", 64 * 1024, 256, 1024 * 1024),
            RequestHeadersTimeout = Seconds(config, "requestHeadersTimeout", 30),
            KeepAliveTimeout = Seconds(config, "keepAliveTimeout", 130),
            DownstreamConnectTimeout = Seconds(config, "downstreamConnectTimeout", 15),
            DownstreamResponseTimeout = Seconds(config, "downstreamResponseTimeout", 100),
            DownstreamIdleTimeout = Seconds(config, "downstreamIdleTimeout", 60),
            // 64 MiB: twice the largest receive buffer Linux autotunes to by default (net.ipv4.tcp_rmem's 32 MiB); the
            // kernel caps what it grants at twice net.core.rmem_max anyway.
            DownstreamReceiveBuffer = Int(config, "downstreamReceiveBuffer", 0, 0, 64 * 1024 * 1024),
            LoadBalancing = ParseLoadBalancing(config["loadBalancing"]),
            PassiveHealthReactivationPeriod = Seconds(config, "passiveHealthReactivationPeriod", 60, allowZero: true),
            HealthCheckPath = ParseHealthCheckPath(config["healthCheckPath"]),
            HealthCheckInterval = Seconds(config, "healthCheckInterval", 15),
            HealthCheckTimeout = Seconds(config, "healthCheckTimeout", 10),
            HealthCheckFall = Int(config, "healthCheckFall", 2, 1, 1000),
            HealthCheckRise = Int(config, "healthCheckRise", 1, 1, 1000),
            ShutdownTimeout = Seconds(config, "shutdownTimeout", 30),
            DownstreamShareAfter = Seconds(config, "downstreamShareAfter", 1, allowZero: true),
            IdleTrimAfter = Seconds(config, "idleTrimAfter", 5, allowZero: true),
            InlineScheduling = Bool(config, "inlineScheduling", true),
            SocketEngine = ParseSocketEngine(config["socketEngine"]),
            // 1,024: far above any core count this runs on; a typo such as 40000 is refused rather than started.
            EngineThreads = Int(config, "engineThreads", Environment.ProcessorCount, 1, 1024),
            StatsInterval = Seconds(config, "statsInterval", 0, allowZero: true),
            StatsWindow = Seconds(config, "statsWindow", 0, allowZero: true),
        };
    }

    private static X509Certificate2? LoadServerCertificate(IConfiguration config, ListenEndPoint[] listen)
    {
        var certificate = config["certificate"];
        var key = config["certificateKey"];
        var tls = listen.Any(l => l.Tls);
        if (string.IsNullOrWhiteSpace(certificate))
        {
            return tls ? throw new OptionsException("--urls has an https:// address: --certificate is required (and --certificateKey for a PEM key file).")
                : string.IsNullOrWhiteSpace(key) ? null : throw new OptionsException($"--certificateKey '{key}' is given without --certificate.");
        }
        X509Certificate2 loaded;
        try
        {
            loaded = Tls.ServerCertificate.Load(certificate.Trim(), key?.Trim());
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

    private static DownstreamTrust LoadDownstreamTrust(IConfiguration config, List<Uri> downstreams)
    {
        var path = config["downstreamTrust"];
        if (string.IsNullOrWhiteSpace(path))
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

    public static ClientKind ParseClient(string? value) => value?.ToLowerInvariant() switch
    {
        null or "" => ClientKind.LLHttp,
        "llhttp" => ClientKind.LLHttp,
        "httpclient" => ClientKind.HttpClient,
        "httpclient-httpcontext" or "httpclientwithcontext" => ClientKind.HttpClientWithContext,
        "yarp" => ClientKind.Yarp,
        _ => throw new OptionsException($"--client '{value}' is not one of llhttp, httpclient, httpclient-httpcontext, yarp."),
    };

    public static LLHttpSocketEngine ParseSocketEngine(string? value) => value?.Trim().ToLowerInvariant() switch
    {
        null or "" => DefaultSocketEngine,
        "runtime" => LLHttpSocketEngine.Runtime,
        "epoll" when LLHttpSocketEngine.Epoll.IsSupported() => LLHttpSocketEngine.Epoll,
        "epoll" => throw new OptionsException("--socketEngine epoll runs on Linux x86-64 only; use runtime here."),
        _ => throw new OptionsException($"--socketEngine '{value}' is not one of runtime, epoll."),
    };

    public static LoadBalancing ParseLoadBalancing(string? value)
    {
        if (string.IsNullOrWhiteSpace(value))
        {
            return LoadBalancing.ConnectionRoundRobin;
        }
        // Names only, ignoring case: Enum.TryParse would also take numbers ("3") and comma-separated lists.
        foreach (var policy in Enum.GetValues<LoadBalancing>())
        {
            if (policy.ToString().Equals(value.Trim(), StringComparison.OrdinalIgnoreCase))
            {
                return policy;
            }
        }
        throw new OptionsException($"--loadBalancing '{value}' is not one of {string.Join(", ", Enum.GetNames<LoadBalancing>())}.");
    }

    private static string ParseHealthCheckPath(string? value)
    {
        if (string.IsNullOrWhiteSpace(value))
        {
            return "";
        }
        var path = value.Trim();
        // An origin-form path (RFC 9112 §3.2.1) with no characters that would need escaping in a request line.
        if (!path.StartsWith('/') || path.Any(c => c <= ' ' || c >= 0x7f || c == '#'))
        {
            throw new OptionsException($"--healthCheckPath '{value}' is not a path starting with '/' (printable ASCII, no spaces, no '#').");
        }
        return path;
    }

    public static string Name(ClientKind kind) => kind switch
    {
        ClientKind.LLHttp => "llhttp",
        ClientKind.HttpClient => "httpclient",
        ClientKind.HttpClientWithContext => "httpclient-httpcontext",
        _ => "yarp",
    };

    public string Describe() =>
        string.Create(CultureInfo.InvariantCulture,
            $"LLRP client={Name(Client)} downstream={string.Join(';', (object[])Downstreams)} shareClients={ShareClients} " +
            $"shareClients.roundRobin={ShareClientsRoundRobin} shareClients.count={ShareClientsCount} " +
            $"maxRequestLineSize={MaxRequestLineSize} maxRequestHeadersTotalSize={MaxRequestHeadersTotalSize} " +
            $"maxRequestHeaderCount={MaxRequestHeaderCount} maxRequestBodySize={MaxRequestBodySize} " +
            $"maxResponseHeadersTotalSize={MaxResponseHeadersTotalSize} requestHeadersTimeout={RequestHeadersTimeout.TotalSeconds}s " +
            $"keepAliveTimeout={KeepAliveTimeout.TotalSeconds}s downstreamConnectTimeout={DownstreamConnectTimeout.TotalSeconds}s " +
            $"downstreamResponseTimeout={DownstreamResponseTimeout.TotalSeconds}s downstreamIdleTimeout={DownstreamIdleTimeout.TotalSeconds}s downstreamReceiveBuffer={DownstreamReceiveBuffer} downstreamShareAfter={DownstreamShareAfter.TotalSeconds}s idleTrimAfter={IdleTrimAfter.TotalSeconds}s inlineScheduling={InlineScheduling} socketEngine={SocketEngine.ToString().ToLowerInvariant()} engineThreads={EngineThreads} " +
            $"loadBalancing={LoadBalancing} passiveHealthReactivationPeriod={PassiveHealthReactivationPeriod.TotalSeconds}s " +
            $"{DescribeHealthChecks()} shutdownTimeout={ShutdownTimeout.TotalSeconds}s statsInterval={StatsInterval.TotalSeconds}s statsWindow={StatsWindow.TotalSeconds}s");

    private string DescribeHealthChecks() => HealthCheckPath.Length == 0
        ? "healthCheckPath=(off)"
        : string.Create(CultureInfo.InvariantCulture,
            $"healthCheckPath={HealthCheckPath} healthCheckInterval={HealthCheckInterval.TotalSeconds}s healthCheckTimeout={HealthCheckTimeout.TotalSeconds}s healthCheckFall={HealthCheckFall} healthCheckRise={HealthCheckRise}");

    private static bool Bool(IConfiguration config, string key, bool fallback)
    {
        var value = config[key];
        if (string.IsNullOrWhiteSpace(value))
        {
            return fallback;
        }
        return bool.TryParse(value, out var result)
            ? result
            : value.Trim() switch
            {
                "1" => true,
                "0" => false,
                _ => throw new OptionsException($"--{key} '{value}' is not true or false."),
            };
    }

    private static int Int(IConfiguration config, string key, int fallback, int min, int max) =>
        (int)Long(config, key, fallback, min, max);

    private static long Long(IConfiguration config, string key, long fallback, long min, long max)
    {
        var value = config[key];
        if (string.IsNullOrWhiteSpace(value))
        {
            return fallback;
        }
        if (!long.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out var result) || result < min || result > max)
        {
            throw new OptionsException($"--{key} '{value}' is not a whole number from {min} to {max}.");
        }
        return result;
    }

    private static TimeSpan Seconds(IConfiguration config, string key, double fallback, bool allowZero = false)
    {
        var value = config[key];
        if (string.IsNullOrWhiteSpace(value))
        {
            return TimeSpan.FromSeconds(fallback);
        }
        if (!double.TryParse(value, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var seconds)
            || seconds < 0 || (seconds == 0 && !allowZero) || seconds > 86_400)
        {
            throw new OptionsException(allowZero
                ? $"--{key} '{value}' is not a number of seconds from 0 to 86400."
                : $"--{key} '{value}' is not a number of seconds above 0 and at most 86400.");
        }
        return TimeSpan.FromSeconds(seconds);
    }

    private static ListenEndPoint[] ParseUrls(string urls)
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
}

/// <summary>One --urls address: where to listen, and whether clients speak TLS there.</summary>
public sealed record ListenEndPoint(IPEndPoint EndPoint, bool Tls);

/// <summary>An option as --help shows it.</summary>
public sealed record OptionInfo(string Name, string Default, string Meaning);

/// <summary>
/// The command line, read the way .NET's command-line configuration reads it (--name value, --name=value, /name value,
/// name=value) and held to the known options: a misspelt name would otherwise be ignored silently. Environment
/// variables and appsettings.json are not checked: the environment holds much that is not LLRP's.
/// </summary>
public static class CommandLine
{
    public static bool AsksForHelp(IEnumerable<string> args) =>
        args.Any(a => a.ToLowerInvariant() is "--help" or "-h" or "-?" or "/?" or "/help");

    public static string Usage()
    {
        var names = ProxyOptions.Known.Max(o => o.Name.Length);
        var defaults = ProxyOptions.Known.Max(o => o.Default.Length);
        var text = new StringBuilder()
            .AppendLine("Usage: LLRP --downstream http://HOST:PORT[;...] [--option value]...")
            .AppendLine("Options also come from environment variables (name=value) and appsettings.json; names are case-insensitive,")
            .AppendLine("durations are seconds (fractions allowed). A bad or unknown option stops LLRP with one line and exit code 2.")
            .AppendLine()
            .AppendLine(string.Create(CultureInfo.InvariantCulture, $"  {"option".PadRight(names + 2)}  {"default".PadRight(defaults)}  meaning"));
        foreach (var option in ProxyOptions.Known)
        {
            text.AppendLine(string.Create(CultureInfo.InvariantCulture, $"  --{option.Name.PadRight(names)}  {option.Default.PadRight(defaults)}  {option.Meaning}"));
        }
        return text.AppendLine(string.Create(CultureInfo.InvariantCulture, $"  {"--help, -h".PadRight(names + 2)}  {"".PadRight(defaults)}  print this and exit")).ToString();
    }

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
            var option = ProxyOptions.Known.FirstOrDefault(o => o.Name.Equals(name, StringComparison.OrdinalIgnoreCase));
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
        foreach (var option in ProxyOptions.Known)
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
