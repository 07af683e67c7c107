using System.Globalization;

namespace HttpClientProxy;

/// <summary>The proxy's options, read once from IConfiguration (command line, environment, appsettings.json).</summary>
public sealed class ForwarderOptions
{
    /// <summary>"http://host:port" or "https://host:port" of each downstream, without a trailing slash; requests rotate over them.</summary>
    public required string[] Downstreams { get; init; }

    // Matches YARP's ActivityTimeout (100 s, itself HttpClient.Timeout's default) and LLRP's option of the same name:
    // no response head by then is a 504; no body progress by then aborts the client connection.
    public TimeSpan DownstreamResponseTimeout { get; init; } = TimeSpan.FromSeconds(100);

    public static ForwarderOptions From(IConfiguration config)
    {
        var downstream = config["downstream"];
        if (string.IsNullOrWhiteSpace(downstream))
        {
            throw new OptionsException("--downstream is required: one or more http://IP:PORT or https://IP:PORT separated by ';'.");
        }

        var prefixes = new List<string>();
        foreach (var part in downstream.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (!Uri.TryCreate(part, UriKind.Absolute, out var uri) || (uri.Scheme != Uri.UriSchemeHttp && uri.Scheme != Uri.UriSchemeHttps)
                || uri.AbsolutePath != "/" || !string.IsNullOrEmpty(uri.Query) || !string.IsNullOrEmpty(uri.UserInfo))
            {
                throw new OptionsException($"--downstream '{part}' is not an http://IP:PORT or https://IP:PORT address (paths and queries are not supported).");
            }
            // https: HttpClient's own TLS, checked against the runtime's root store (on Linux, SSL_CERT_FILE and SSL_CERT_DIR name where it is read from).
            prefixes.Add($"{uri.Scheme}://{uri.Authority}");
        }
        if (prefixes.Count == 0)
        {
            throw new OptionsException("--downstream names no address.");
        }

        var timeout = TimeSpan.FromSeconds(100);
        if (config["downstreamResponseTimeout"] is { Length: > 0 } value)
        {
            if (!double.TryParse(value, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var seconds) || seconds <= 0 || seconds > 86_400)
            {
                throw new OptionsException($"--downstreamResponseTimeout '{value}' is not a number of seconds above 0 and at most 86400.");
            }
            timeout = TimeSpan.FromSeconds(seconds);
        }

        return new ForwarderOptions { Downstreams = [.. prefixes], DownstreamResponseTimeout = timeout };
    }
}

/// <summary>A bad option: the message names it and what it accepts.</summary>
public sealed class OptionsException(string message) : Exception(message);
