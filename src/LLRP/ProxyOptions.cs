using System.Globalization;
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
    public required Uri[] Downstreams { get; init; }

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

    // Off by default; crank jobs set 1 so the agent collects the proxy's own numbers while the load runs.
    public TimeSpan StatsInterval { get; init; } = TimeSpan.Zero;

    public static ProxyOptions From(IConfiguration config)
    {
        var downstream = config["downstream"];
        if (string.IsNullOrWhiteSpace(downstream))
        {
            throw new OptionsException("--downstream is required: one or more http://IP:PORT separated by ';'.");
        }

        var uris = new List<Uri>();
        foreach (var part in downstream.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (!Uri.TryCreate(part, UriKind.Absolute, out var uri) || uri.Scheme != Uri.UriSchemeHttp || uri.AbsolutePath != "/" || !string.IsNullOrEmpty(uri.Query))
            {
                throw new OptionsException($"--downstream '{part}' is not an http://HOST:PORT address (https, paths and queries are not supported).");
            }
            uris.Add(uri);
        }
        if (uris.Count == 0)
        {
            throw new OptionsException("--downstream names no address.");
        }

        return new ProxyOptions
        {
            Downstreams = [.. uris],
            Client = ParseClient(config["client"]),
            ShareClients = Bool(config, "shareClients", false),
            ShareClientsRoundRobin = Bool(config, "shareClients.roundRobin", false),
            ShareClientsCount = Int(config, "shareClients.count", Environment.ProcessorCount, 1, 4096),
            MaxRequestLineSize = Int(config, "maxRequestLineSize", 8 * 1024, 64, 1024 * 1024),
            MaxRequestHeadersTotalSize = Int(config, "maxRequestHeadersTotalSize", 32 * 1024, 256, 512 * 1024),
            MaxRequestHeaderCount = Int(config, "maxRequestHeaderCount", 100, 1, 10_000),
            MaxRequestBodySize = Long(config, "maxRequestBodySize", 30_000_000, 0, long.MaxValue),
            MaxResponseHeadersTotalSize = Int(config, "maxResponseHeadersTotalSize", 64 * 1024, 256, 1024 * 1024),
            RequestHeadersTimeout = Seconds(config, "requestHeadersTimeout", 30),
            KeepAliveTimeout = Seconds(config, "keepAliveTimeout", 130),
            DownstreamConnectTimeout = Seconds(config, "downstreamConnectTimeout", 15),
            DownstreamResponseTimeout = Seconds(config, "downstreamResponseTimeout", 100),
            DownstreamIdleTimeout = Seconds(config, "downstreamIdleTimeout", 60),
            StatsInterval = string.IsNullOrWhiteSpace(config["statsInterval"]) || config["statsInterval"] == "0"
                ? TimeSpan.Zero
                : Seconds(config, "statsInterval", 0),
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
            $"downstreamResponseTimeout={DownstreamResponseTimeout.TotalSeconds}s downstreamIdleTimeout={DownstreamIdleTimeout.TotalSeconds}s statsInterval={StatsInterval.TotalSeconds}s");

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

    private static TimeSpan Seconds(IConfiguration config, string key, double fallback)
    {
        var value = config[key];
        if (string.IsNullOrWhiteSpace(value))
        {
            return TimeSpan.FromSeconds(fallback);
        }
        if (!double.TryParse(value, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var seconds) || seconds <= 0 || seconds > 86_400)
        {
            throw new OptionsException($"--{key} '{value}' is not a number of seconds above 0 and at most 86400.");
        }
        return TimeSpan.FromSeconds(seconds);
    }
}

/// <summary>A bad option: the message names it and what it accepts.</summary>
public sealed class OptionsException(string message) : Exception(message);
