namespace LLRP.Jobs;

/// <summary>crank/caddy-job.sh, Debian's Caddy as the proxy (its Caddyfile's "{$VAR}"s and snippets from the job's
/// environment): <see cref="Help"/> says how it runs and what it takes.</summary>
internal static class CaddyJob
{
    public const string Name = "caddy-job";

    public const string Help = """
        usage: crank/caddy-job.sh   (crank's Caddy jobs in benchmarks.yml; settings from the environment)
        Runs Debian's Caddy as the proxy (port 8080 by default): checks crank/caddy/Caddyfile ("caddy validate"), runs
        "caddy run" (foreground, one process) as a child announced with "##ChildProcessId:<pid>" on stderr (a crank agent
        then tracks Caddy itself), and prints "caddy-job: ready on ADDRESS:PORT" once the port accepts connections
        (crank's readyStateText: "caddy-job: ready"). Caddy exits on SIGTERM/SIGINT; the job passes them on and exits with
        Caddy's status. Caddy's config and data folders (XDG_CONFIG_HOME, XDG_DATA_HOME: its autosaved config, its
        certificate storage) are a temp folder of the run's, removed when Caddy exits.

        Environment (all optional; set but empty is an error, so that a forgotten benchmarks.yml variable
        is never replaced by a default):
          LISTEN_ADDRESS (127.0.0.1; 0.0.0.0 = every interface)  LISTEN_PORT (8080)
          DOWNSTREAM_ADDRESS (127.0.0.1)  DOWNSTREAM_PORT (8081)
          DOWNSTREAMS    several replicas instead, "ADDRESS:PORT ADDRESS:PORT ...": the upstreams of reverse_proxy,
                         balanced round-robin (as nginx and HAProxy)
          CADDY_THREADS  GOMAXPROCS, the Go threads running Caddy's code at once (default 1: benchmarks.yml's "threads",
                         as nginx's workers and HAProxy's nbthread)
          CADDY (/usr/bin/caddy)  READY_TIMEOUT (30 s)
          TLS_CERT, TLS_KEY  listen with TLS (benchmarks.yml's serverScheme=https): this PEM certificate and key
                         (crank/tls-cert.sh), TLS 1.2 and 1.3 (Caddy's default)
          DOWNSTREAM_TLS_CA  connect to the upstream over TLS (downstreamScheme=https), verifying its certificate against
                         this PEM file for the name "localhost", SNI "localhost"
          PROTOCOLS      what the listener speaks (benchmarks.yml's protocols): http1 (default; empty is the default too),
                         h2 or http1,h2. With TLS_CERT, the ALPN list: http/1.1, or h2 and http/1.1 for both h2 and
                         http1,h2 (Caddy cannot offer h2 without HTTP/1.1, as nginx); without, h2 is h2c (prior
                         knowledge, and HTTP/1.1 on the same port) and http1,h2 is refused (ALPN needs TLS). The upstream
                         stays HTTP/1.1
        Exit status: Caddy's; 2 for a bad setting (one line on stderr), caddy validate's when it refuses the configuration.

        """;

    public const string DefaultCaddy = "/usr/bin/caddy";

    /// <summary>The job's settings, read and checked from the environment before anything is written.</summary>
    internal sealed record Settings(
        string Caddy, string ListenAddress, string ListenPort, string DownstreamAddress, string DownstreamPort,
        string Threads, string? DownstreamsText, IReadOnlyList<string>? Replicas, string Protocols, string CaddyProtocols,
        (string Cert, string Key)? Tls, string? DownstreamCa, int ReadyTimeout)
    {
        /// <summary>reverse_proxy's upstreams: the replicas, or the one downstream.</summary>
        public string Upstreams => Replicas is { } r ? string.Join(' ', r) : $"{DownstreamAddress}:{DownstreamPort}";
    }

    public static int Run(string[] args)
    {
        if (ServerJob.Help(args, Help))
        {
            return 0;
        }
        var s = Read(ServerEnv.Current);
        var caddyfile = Path.Combine(Tools.CrankDir, "caddy", "Caddyfile");
        // Caddy writes its autosaved config and its certificate storage under XDG_CONFIG_HOME and XDG_DATA_HOME (HOME
        // otherwise): a temp folder of the run's own, removed once Caddy has exited.
        var home = Directory.CreateTempSubdirectory("caddy-job.").FullName;
        try
        {
            var caddy = new ServerTool(s.Caddy, ServerEnvironment(s, home));
            string[] config = ["--config", caddyfile, "--adapter", "caddyfile"];
            caddy.Check(["validate", .. config]);
            Console.Out.WriteLine(InfoLine(s, caddy.Output("version").Split('\n')[0]));
            return caddy.Serve(Name, ["run", .. config], s.ListenAddress, s.ListenPort, s.ReadyTimeout);
        }
        finally
        {
            Directory.Delete(home, recursive: true);
        }
    }

    /// <summary>The settings from <paramref name="env"/>, checked in HaproxyJob's order (the first problem is the one
    /// reported).</summary>
    public static Settings Read(ServerEnv env)
    {
        var listenAddress = env.UnsetOr("LISTEN_ADDRESS", ServerJob.DefaultListenAddress);
        var listenPort = env.UnsetOr("LISTEN_PORT", ServerJob.DefaultListenPort);
        var downstreamAddress = env.UnsetOr("DOWNSTREAM_ADDRESS", ServerJob.DefaultDownstreamAddress);
        var downstreamPort = env.UnsetOr("DOWNSTREAM_PORT", ServerJob.DefaultDownstreamPort);
        var threads = env.EmptyOr("CADDY_THREADS", "1");
        var tls = ServerJob.Tls(env);
        var protocols = ServerJob.Protocols(env);
        // Caddy's "protocols" server option. HTTP/2 needs HTTP/1.1 enabled too (Caddy refuses h2 or h2c alone), so with
        // TLS h2 offers both in ALPN, as nginx does; on cleartext h2 is h2c, which Caddy takes with prior knowledge.
        var caddyProtocols = protocols switch
        {
            "http1" => "h1",
            _ when tls is not null => "h1 h2",
            "h2" => "h1 h2c",
            _ => throw JobFailure.BadUsage(ServerJob.CleartextHttp1H2),
        };
        var downstreamCa = ServerJob.DownstreamCa(env);
        var caddy = Tools.Find("CADDY", "caddy", "caddy", DefaultCaddy, env.Get);
        ServerJob.RequireListenAddress(listenAddress);
        ServerJob.RequireAddresses(listenAddress, downstreamAddress);
        foreach (var (name, value) in new[] { ("LISTEN_PORT", listenPort), ("DOWNSTREAM_PORT", downstreamPort), ("CADDY_THREADS", threads) })
        {
            if (!ServerJob.IsDigits(value))
            {
                throw JobFailure.BadUsage($"{name}='{value}' is not a whole number");
            }
        }
        if (threads.All(c => c == '0'))
        {
            // GOMAXPROCS=0 would leave Go's default, every CPU, while the setting reads as a count.
            throw JobFailure.BadUsage($"CADDY_THREADS='{threads}' is not a whole number >= 1");
        }
        return new Settings(caddy, listenAddress, listenPort, downstreamAddress, downstreamPort, threads,
            env.NonEmpty("DOWNSTREAMS"), ServerJob.Replicas(env), protocols, caddyProtocols, tls, downstreamCa,
            ServerJob.ReadyTimeout(env));
    }

    /// <summary>The environment Caddy gets on top of the job's: the variables the Caddyfile substitutes, GOMAXPROCS, and
    /// the folders of <paramref name="home"/>. Every variable the Caddyfile reads is set (empty when unused), so that a
    /// stray one in the caller's environment cannot reach it.</summary>
    public static Dictionary<string, string?> ServerEnvironment(Settings s, string home) => new()
    {
        ["LISTEN_ADDRESS"] = s.ListenAddress,
        ["LISTEN_PORT"] = s.ListenPort,
        ["CADDY_UPSTREAMS"] = s.Upstreams,
        ["CADDY_PROTOCOLS"] = s.CaddyProtocols,
        ["CADDY_TLS"] = s.Tls is null ? "off" : "on",
        ["TLS_CERT"] = s.Tls?.Cert ?? "",
        ["TLS_KEY"] = s.Tls?.Key ?? "",
        ["CADDY_UPSTREAM_TLS"] = s.DownstreamCa is null ? "off" : "on",
        ["DOWNSTREAM_TLS_CA"] = s.DownstreamCa ?? "",
        ["GOMAXPROCS"] = s.Threads,
        ["XDG_CONFIG_HOME"] = Path.Combine(home, "config"),
        ["XDG_DATA_HOME"] = Path.Combine(home, "data"),
    };

    /// <summary>The line the job prints before it starts Caddy (the runner keeps it in the application log).</summary>
    public static string InfoLine(Settings s, string version) =>
        $"{Name}: Caddy {version}, GOMAXPROCS {s.Threads}, listening on {s.ListenAddress}:{s.ListenPort} "
        + $"({(s.Tls is null ? "http" : "https")}, {s.Protocols}: protocols {s.CaddyProtocols}), "
        + $"upstream {s.DownstreamsText ?? $"{s.DownstreamAddress}:{s.DownstreamPort}"}{(s.DownstreamCa is null ? "" : " (TLS)")}";
}
