namespace LLRP.Runner;

/// <summary>What the proxies' listeners speak (--protocols, benchmarks.yml's protocols) and LLRP's front end
/// (--front-end, benchmarks.yml's frontEnd), and how each kind of proxy is told.
///
/// Protocols: http1, h2 or http1,h2, the values LLRP's --protocols takes. On https ALPN chooses among them; on http h2
/// alone is prior-knowledge h2c and http1,h2 is refused (a cleartext listener cannot offer a choice). Empty: nothing is
/// passed (HTTP/1.1), except under the h2load load, which needs h2: http1,h2 on https, h2 on http. The proxy speaks
/// HTTP/1.1 to the origin in every case.</summary>
internal static class Protocols
{
    /// <summary>The protocols the run's proxies get (empty: pass nothing); a UsageException when the combination
    /// cannot work.</summary>
    public static string Resolve(string load, string scheme, string given)
    {
        var p = given switch
        {
            "" or "http1" or "h2" or "http1,h2" => given,
            "h2,http1" => "http1,h2",
            _ => throw new UsageException($"--protocols must be http1, h2 or http1,h2, not '{given}'"),
        };
        if (p.Length == 0 && load == "h2load")
        {
            p = scheme == "https" ? "http1,h2" : "h2";
        }
        if (scheme == "http" && p == "http1,h2")
        {
            throw new UsageException("--protocols http1,h2 needs --server-scheme https (ALPN chooses); on http choose http1 or h2 (prior-knowledge h2c)");
        }
        if (load == "h2load" && p == "http1")
        {
            throw new UsageException("--load h2load speaks HTTP/2: --protocols http1 leaves the proxy nothing it can answer");
        }
        if (load != "h2load" && scheme == "http" && p == "h2")
        {
            throw new UsageException($"--protocols h2 on http is prior-knowledge h2c only, and --load {load} speaks HTTP/1.1: use --load h2load");
        }
        return p;
    }

    /// <summary>Kestrel's EndpointDefaults:Protocols for full YARP and HttpClientProxy.</summary>
    public static string Kestrel(string protocols) => protocols switch
    {
        "http1" => "Http1",
        "h2" => "Http2",
        _ => "Http1AndHttp2",
    };

    /// <summary>How one proxy is told: variables for the peers' jobs (nginx, HAProxy, Caddy, h2o), arguments for a .NET
    /// proxy. <paramref name="kind"/>: a peer's name or dotnet; <paramref name="app"/>: llrp, yarp, httpclientproxy or null.</summary>
    public static (string[] Env, string[] Args) ProxyArgs(string kind, string? app, string protocols, string frontEnd, string frontEndOption)
    {
        List<string> env = [], args = [];
        if (protocols.Length > 0)
        {
            if (Peers.Is(kind))
            {
                env.Add($"PROTOCOLS={protocols}");
            }
            else if (kind == "dotnet")
            {
                args.AddRange(app == "llrp" ? ["--protocols", protocols] : [$"--Kestrel:EndpointDefaults:Protocols={Kestrel(protocols)}"]);
            }
        }
        if (frontEnd.Length > 0 && app == "llrp")
        {
            args.AddRange([frontEndOption, frontEnd]);
        }
        return ([.. env], [.. args]);
    }

    /// <summary>curl's options for the first request to a proxy that speaks these protocols (h2c needs prior knowledge;
    /// on https curl offers h2 in ALPN and takes it when the proxy does).</summary>
    public static string[] Curl(string protocols, string scheme) => (protocols, scheme) switch
    {
        ("h2", "http") => ["--http2-prior-knowledge"],
        ("h2" or "http1,h2", "https") => ["--http2"],
        _ => [],
    };

    /// <summary>LLRP's option that selects its front end (the Kestrel HTTP/1.1 front end: --front-end kestrel, scenario
    /// llrp-kestrel-h1): one name, here, so that a rename of LLRP's option (src/LLRP/CommandLine.cs) is one edit.</summary>
    public const string FrontEndOption = "--frontEnd";
}
