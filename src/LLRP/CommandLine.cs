using System.Globalization;
using System.Net;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using LLHttp.Sockets;
using LLRP.Tls;
using Microsoft.Extensions.Configuration;

namespace LLRP;

/// <summary>An option as --help shows it.</summary>
public sealed record OptionInfo(string Name, string Default, string Meaning);

/// <summary>
/// The command-line layer: every option with its default and meaning (<see cref="Known"/>, what --help prints), the
/// checks of each value, and <see cref="Read"/>, which fills <see cref="ProxyOptions"/> and its records. The command line, read the way .NET's command-line configuration reads it (--name value, --name=value, /name value,
/// name=value) and held to the known options: a misspelt name would otherwise be ignored silently. Environment
/// variables and appsettings.json are not checked: the environment holds much that is not LLRP's.
/// </summary>
public static class CommandLine
{
    /// <summary>
    /// Every option with its default as shown and its meaning in one line: what --help prints and what the command
    /// line is checked against. An option read in <see cref="Read"/> must be listed here (a test holds both together).
    /// </summary>
    public static IReadOnlyList<OptionInfo> Known { get; } =
    [
        new("urls", ProxyOptions.DefaultUrls, "listen addresses, ';'-separated http://IP:PORT or https://IP:PORT (localhost, * and + accepted)"),
        new("certificate", "", "https listeners: the server certificate, a PEM file (key in --certificateKey, or in the same file) or a PKCS#12 file"),
        new("certificateKey", "", "https listeners: the PEM private key of --certificate"),
        new("protocols", "http1 (https: both)", "what the listeners speak: http1, h2 or http1,h2; on https ALPN chooses, on http h2 alone is prior-knowledge h2c and http1,h2 is told apart by the HTTP/2 preface"),
        new("frontEnd", "raw", "HTTP/1.1 from clients: raw (LLRP's connection handler) or kestrel (Kestrel's own HTTP/1.1 and the HTTP/2 streams' application)"),
        new("http2MaxConcurrentStreams", "100", "HTTP/2: streams a client connection may have open at once; more are refused (Kestrel's default)"),
        new("tlsHandshakeTimeout", "10", "seconds a client may take to complete its TLS handshake; then the connection closes (Kestrel's default)"),
        new("downstream", "(required)", "one or more http://HOST:PORT or https://HOST:PORT, ';'-separated; loadBalancing chooses among them"),
        new("downstreamTrust", "", "https downstreams: a PEM bundle of CA certificates trusted besides the system store"),
        new("downstreamProtocol", "http1", "what requests speak downstream: http1, h2 (TLS with ALPN h2, https:// downstreams) or h2c (prior-knowledge cleartext, http:// downstreams); h2 and h2c need an HttpClient-based --client"),
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
        new("tunnelIdleTimeout", "60", "seconds a tunnel after 101 Switching Protocols (WebSocket) may carry nothing either way before both sides close (nginx's proxy_read_timeout default)"),
        new("lingeringTime", "30", "a connection closed with unread input (an error answer, a body not read): at most this many seconds of reading and discarding after its FIN; 0 closes at once (nginx's lingering_time)"),
        new("lingeringTimeout", "5", "that lingering close ends once the client sends nothing for this many seconds (nginx's lingering_timeout)"),
        new("lingeringMaxBytes", "30000000", "that lingering close ends after discarding this many bytes (maxRequestBodySize's default)"),
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
        new("idleTrimAfter", "0.5", "seconds without connections, requests or exchanges in flight after which the proxy gives back the buffers and heap a burst left (at most once per 16 MiB allocated); 0 is off"),
        new("inlineScheduling", "true", "run each exchange on the socket engine's epoll thread (Kestrel UnsafePreferInlineScheduling + inline socket completions); unsafe with blocking code"),
        new("socketEngine", ProxyOptions.DefaultSocketEngine.ToString().ToLowerInvariant(), "client connections (Kestrel's transport) and llhttp's downstream connections: epoll (LLHttp's own engine; the default on Linux x86-64) or runtime (System.Net.Sockets; the default elsewhere)"),
        new("engineThreads", "processor count", "socketEngine=epoll: its loop threads, which run every exchange (as nginx's worker_processes or HAProxy's nbthread)"),
        new("statsInterval", "0", "print crank statistics every N seconds; 0 is off"),
        new("statsWindow", "0", "statistics cover the last N seconds that ended with requests served; 0: since the first request"),
    ];

    /// <summary>The options the configuration names, each checked; a bad one throws <see cref="OptionsException"/>.</summary>
    public static ProxyOptions Read(IConfiguration config)
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

        var urls = config["urls"] ?? ProxyOptions.DefaultUrls;
        // One value after another in a fixed order: of two bad values, the first read is the one reported.
        var listenEndPoints = ParseUrls(urls);
        var protocols = ParseProtocols(config["protocols"]);
        var frontEnd = ParseFrontEnd(config["frontEnd"]);
        if (frontEnd == FrontEnd.Kestrel && protocols == ListenProtocols.Http1AndHttp2 && listenEndPoints.Any(l => !l.Tls))
        {
            // Kestrel serves one protocol on a cleartext listener (no ALPN); the raw front end tells them apart itself.
            throw new OptionsException("--protocols http1,h2 on an http:// listener needs --frontEnd raw (Kestrel cannot serve both without TLS).");
        }
        // 1,000,000: far above what a client may usefully multiplex; 0 would refuse every stream.
        var http2MaxConcurrentStreams = Int(config, "http2MaxConcurrentStreams", 100, 1, 1_000_000);
        var tls = new TlsOptions
        {
            ServerCertificate = LoadServerCertificate(config, listenEndPoints),
            HandshakeTimeout = Seconds(config, "tlsHandshakeTimeout", 10),
        };
        var downstreamTrust = LoadDownstreamTrust(config, uris);
        var client = ParseClient(config["client"]);
        var downstreamProtocol = ParseDownstreamProtocol(config["downstreamProtocol"]);
        CheckDownstreamProtocol(downstreamProtocol, client, uris);
        var shareClients = Bool(config, "shareClients", false);
        var shareClientsRoundRobin = Bool(config, "shareClients.roundRobin", false);
        var shareClientsCount = Int(config, "shareClients.count", Environment.ProcessorCount, 1, 4096);
        var maxRequestLineSize = Int(config, "maxRequestLineSize", 8 * 1024, 64, 1024 * 1024);
        var maxRequestHeadersTotalSize = Int(config, "maxRequestHeadersTotalSize", 32 * 1024, 256, 512 * 1024);
        var maxRequestHeaderCount = Int(config, "maxRequestHeaderCount", 100, 1, RequestLimits.MaxHeaderCountLimit);
        var maxRequestBodySize = Long(config, "maxRequestBodySize", 30_000_000, 0, long.MaxValue);
        var maxResponseHeadersTotalSize = Int(config, "maxResponseHeadersTotalSize", 64 * 1024, 256, 1024 * 1024);
        var requestHeadersTimeout = Seconds(config, "requestHeadersTimeout", 30);
        var keepAliveTimeout = Seconds(config, "keepAliveTimeout", 130);
        var tunnelIdleTimeout = Seconds(config, "tunnelIdleTimeout", 60);
        var lingeringTime = Seconds(config, "lingeringTime", 30, allowZero: true);
        var lingeringTimeout = Seconds(config, "lingeringTimeout", 5);
        var lingeringMaxBytes = Long(config, "lingeringMaxBytes", 30_000_000, 0, long.MaxValue);
        var downstreamConnectTimeout = Seconds(config, "downstreamConnectTimeout", 15);
        var downstreamResponseTimeout = Seconds(config, "downstreamResponseTimeout", 100);
        var downstreamIdleTimeout = Seconds(config, "downstreamIdleTimeout", 60);
        // 64 MiB: twice the largest receive buffer Linux autotunes to by default (net.ipv4.tcp_rmem's 32 MiB); the
        // kernel caps what it grants at twice net.core.rmem_max anyway.
        var downstreamReceiveBuffer = Int(config, "downstreamReceiveBuffer", 0, 0, 64 * 1024 * 1024);
        var loadBalancing = ParseLoadBalancing(config["loadBalancing"]);
        var passiveHealthReactivationPeriod = Seconds(config, "passiveHealthReactivationPeriod", 60, allowZero: true);
        var healthCheckPath = ParseHealthCheckPath(config["healthCheckPath"]);
        var healthCheckInterval = Seconds(config, "healthCheckInterval", 15);
        var healthCheckTimeout = Seconds(config, "healthCheckTimeout", 10);
        var healthCheckFall = Int(config, "healthCheckFall", 2, 1, 1000);
        var healthCheckRise = Int(config, "healthCheckRise", 1, 1, 1000);
        var shutdownTimeout = Seconds(config, "shutdownTimeout", 30);
        var downstreamShareAfter = Seconds(config, "downstreamShareAfter", 1, allowZero: true);
        var idleTrimAfter = Seconds(config, "idleTrimAfter", 0.5, allowZero: true);
        var inlineScheduling = Bool(config, "inlineScheduling", true);
        var socketEngine = ParseSocketEngine(config["socketEngine"]);
        // 1,024: far above any core count this runs on; a typo such as 40000 is refused rather than started.
        var engineThreads = Int(config, "engineThreads", Environment.ProcessorCount, 1, 1024);
        var statsInterval = Seconds(config, "statsInterval", 0, allowZero: true);
        var statsWindow = Seconds(config, "statsWindow", 0, allowZero: true);
        return new ProxyOptions
        {
            Balancing = new BalancingOptions
            {
                Downstreams = [.. uris],
                DownstreamTrust = downstreamTrust,
                DownstreamProtocol = downstreamProtocol,
                LoadBalancing = loadBalancing,
                PassiveHealthReactivationPeriod = passiveHealthReactivationPeriod,
                HealthCheckPath = healthCheckPath,
                HealthCheckInterval = healthCheckInterval,
                HealthCheckTimeout = healthCheckTimeout,
                HealthCheckFall = healthCheckFall,
                HealthCheckRise = healthCheckRise,
            },
            Limits = new RequestLimits
            {
                MaxRequestLineSize = maxRequestLineSize,
                MaxRequestHeadersTotalSize = maxRequestHeadersTotalSize,
                MaxRequestHeaderCount = maxRequestHeaderCount,
                MaxRequestBodySize = maxRequestBodySize,
            },
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
            ShutdownTimeout = shutdownTimeout,
            DownstreamShareAfter = downstreamShareAfter,
            IdleTrimAfter = idleTrimAfter,
            InlineScheduling = inlineScheduling,
            SocketEngine = socketEngine,
            EngineThreads = engineThreads,
            StatsInterval = statsInterval,
            StatsWindow = statsWindow,
        };
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

    /// <summary>http1, h2 or http1,h2 (either order, case-insensitive); null when not given (each listener's default).</summary>
    public static DownstreamProtocol ParseDownstreamProtocol(string? value) => value?.Trim().ToLowerInvariant() switch
    {
        null or "" or "http1" => DownstreamProtocol.Http1,
        "h2" => DownstreamProtocol.H2,
        "h2c" => DownstreamProtocol.H2c,
        _ => throw new OptionsException($"--downstreamProtocol '{value}' is not one of http1, h2, h2c."),
    };

    /// <summary>
    /// The combinations that can work: h2 is negotiated by ALPN inside TLS (RFC 9113 §3.2), so it needs https://
    /// downstreams; h2c is cleartext with prior knowledge (RFC 9113 §3.3), so it needs http:// ones (h2c over TLS does not
    /// exist); and only the HttpClient-based variants have an HTTP/2 client.
    /// </summary>
    private static void CheckDownstreamProtocol(DownstreamProtocol protocol, ClientKind client, List<Uri> downstreams)
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

    public static ListenProtocols? ParseProtocols(string? value)
    {
        if (string.IsNullOrWhiteSpace(value))
        {
            return null;
        }
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

    public static FrontEnd ParseFrontEnd(string? value) => value?.Trim().ToLowerInvariant() switch
    {
        null or "" or "raw" => FrontEnd.Raw,
        "kestrel" => FrontEnd.Kestrel,
        _ => throw new OptionsException($"--frontEnd '{value}' is not one of raw, kestrel."),
    };

    public static LLHttpSocketEngine ParseSocketEngine(string? value) => value?.Trim().ToLowerInvariant() switch
    {
        null or "" => ProxyOptions.DefaultSocketEngine,
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

    public static bool AsksForHelp(IEnumerable<string> args) =>
        args.Any(a => a.ToLowerInvariant() is "--help" or "-h" or "-?" or "/?" or "/help");

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
