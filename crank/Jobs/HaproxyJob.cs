namespace LLRP.Jobs;

/// <summary>crank/haproxy-job.sh, Debian's HAProxy as the proxy (its config's "${VAR}"s and ".if defined(...)" blocks
/// from the job's environment): <see cref="Help"/> says how it runs and what it takes.</summary>
internal static class HaproxyJob
{
    public const string Name = "haproxy-job";

    public const string Help = """
        usage: crank/haproxy-job.sh   (crank's HAProxy jobs in benchmarks.yml; settings from the environment)
        Runs Debian's HAProxy as the proxy (port 8080 by default): checks crank/haproxy/haproxy.cfg ("haproxy -c"), runs
        "haproxy -db" (foreground, no master process) as a child announced with "##ChildProcessId:<pid>" on stderr (a
        crank agent then tracks HAProxy itself), and prints "haproxy-job: ready on ADDRESS:PORT" once the port accepts
        connections (crank's readyStateText: "haproxy-job: ready"). HAProxy exits on SIGTERM (hard stop) and SIGUSR1 (soft
        stop); the job passes them on and exits with HAProxy's status.

        Environment (all optional; set but empty is an error, so that a forgotten benchmarks.yml variable
        is never replaced by a default):
          LISTEN_ADDRESS (127.0.0.1; 0.0.0.0 = every interface)  LISTEN_PORT (8080)
          DOWNSTREAM_ADDRESS (127.0.0.1)  DOWNSTREAM_PORT (8081)
          DOWNSTREAMS    several replicas instead, "ADDRESS:PORT ADDRESS:PORT ...": one "server" line each (the same
                         maxconn), balanced round-robin (HAProxy's default); the scaling comparison sets it. The config is
                         then rendered into a temp file, removed when HAProxy exits.
          HAPROXY_THREADS (1)  HAPROXY (/usr/sbin/haproxy)  READY_TIMEOUT (30 s)
          TLS_CERT, TLS_KEY  listen with TLS (benchmarks.yml's serverScheme=https): this PEM certificate and key
                         (crank/tls-cert.sh), joined into TLS_CERT.haproxy.pem, the one file HAProxy's "crt" reads
          DOWNSTREAM_TLS_CA  connect to the upstream over TLS (downstreamScheme=https), verifying its certificate against
                         this PEM file for the name "localhost", SNI "localhost"
          PROTOCOLS      what the listener speaks (benchmarks.yml's protocols): http1 (default; empty is the default too),
                         h2 or http1,h2: with TLS_CERT, the ALPN list (http/1.1, h2, h2,http/1.1); without, h2 is
                         prior-knowledge h2c ("proto h2") and http1,h2 is refused (ALPN needs TLS). The upstream stays HTTP/1.1
          HAPROXY_FORWARDFOR  set (to anything): "option forwardfor", X-Forwarded-For to the upstream (haproxy.cfg)
        Exit status: HAProxy's; 2 for a bad setting (one line on stderr), haproxy -c's when it refuses the configuration.

        """;

    public const string DefaultHaproxy = "/usr/sbin/haproxy";

    /// <summary>The job's settings, read and checked from the environment before anything is written.</summary>
    internal sealed record Settings(
        string Haproxy, string ListenAddress, string ListenPort, string DownstreamAddress, string DownstreamPort,
        string Threads, string? DownstreamsText, IReadOnlyList<string>? Replicas, string Protocols, string Alpn,
        (string Cert, string Key)? Tls, string? DownstreamCa, bool ForwardFor, int ReadyTimeout)
    {
        /// <summary>The file HAProxy's "crt" reads: the certificate and the key joined.</summary>
        public string? CombinedPem => Tls is { } tls ? $"{tls.Cert}.haproxy.pem" : null;
    }

    public static int Run(string[] args)
    {
        if (ServerJob.Help(args, Help))
        {
            return 0;
        }
        var s = Read(ServerEnv.Current);
        if (s.Tls is { } tls)
        {
            File.WriteAllBytes(s.CombinedPem!, [.. File.ReadAllBytes(tls.Cert), .. File.ReadAllBytes(tls.Key)]);
        }
        var cfg = Path.Combine(Tools.CrankDir, "haproxy", "haproxy.cfg");
        string? rendered = null;
        try
        {
            if (s.Replicas is not null)
            {
                // A temp file of the run's own, removed once HAProxy has exited.
                rendered = Path.Combine(Path.GetTempPath(), $"haproxy-job.{Path.GetRandomFileName().Replace(".", "", StringComparison.Ordinal)}.cfg");
                using (var f = new StreamWriter(new FileStream(rendered, FileMode.CreateNew)))
                {
                    f.Write(Render(File.ReadAllText(cfg), s.Replicas));
                }
                cfg = rendered;
            }
            var haproxy = new ServerTool(s.Haproxy, ServerEnvironment(s));
            haproxy.Check("-c", "-q", "-f", cfg);
            var version = haproxy.Output("-v").Split('\n')[0];
            Console.Out.WriteLine(InfoLine(s, version));
            return haproxy.Serve(Name, ["-db", "-f", cfg], s.ListenAddress, s.ListenPort, s.ReadyTimeout);
        }
        finally
        {
            if (rendered is not null)
            {
                File.Delete(rendered);
            }
        }
    }

    /// <summary>The settings from <paramref name="env"/>, checked in the bash job's order (the first problem is the one
    /// reported).</summary>
    public static Settings Read(ServerEnv env)
    {
        var listenAddress = env.UnsetOr("LISTEN_ADDRESS", ServerJob.DefaultListenAddress);
        var listenPort = env.UnsetOr("LISTEN_PORT", ServerJob.DefaultListenPort);
        var downstreamAddress = env.UnsetOr("DOWNSTREAM_ADDRESS", ServerJob.DefaultDownstreamAddress);
        var downstreamPort = env.UnsetOr("DOWNSTREAM_PORT", ServerJob.DefaultDownstreamPort);
        var threads = env.EmptyOr("HAPROXY_THREADS", "1");
        var tls = ServerJob.Tls(env);
        var protocols = ServerJob.Protocols(env);
        // With TLS the ALPN list; without, h2 is prior-knowledge h2c (HAPROXY_H2C) and http1,h2 has no way to choose.
        var alpn = protocols switch
        {
            "http1" => "http/1.1",
            "h2" => "h2",
            _ when tls is null => throw JobFailure.BadUsage(ServerJob.CleartextHttp1H2),
            _ => "h2,http/1.1",
        };
        var downstreamCa = ServerJob.DownstreamCa(env);
        var haproxy = Tools.Find("HAPROXY", "haproxy", "haproxy", DefaultHaproxy, env.Get);
        ServerJob.RequireListenAddress(listenAddress);
        ServerJob.RequireAddresses(listenAddress, downstreamAddress);
        foreach (var (name, value) in new[] { ("LISTEN_PORT", listenPort), ("DOWNSTREAM_PORT", downstreamPort), ("HAPROXY_THREADS", threads) })
        {
            if (!ServerJob.IsDigits(value))
            {
                throw JobFailure.BadUsage($"{name}='{value}' is not a whole number");
            }
        }
        return new Settings(haproxy, listenAddress, listenPort, downstreamAddress, downstreamPort, threads,
            env.NonEmpty("DOWNSTREAMS"), ServerJob.Replicas(env), protocols, alpn, tls, downstreamCa,
            env.NonEmpty("HAPROXY_FORWARDFOR") is not null, ServerJob.ReadyTimeout(env));
    }

    /// <summary>The environment HAProxy gets on top of the job's: the variables haproxy.cfg expands, and those its
    /// ".if defined(...)" blocks test, which choose TLS on either side and h2c. Those three are removed when the job
    /// does not choose them, so that a stray one in the caller's environment cannot switch a block on.</summary>
    public static Dictionary<string, string?> ServerEnvironment(Settings s) => new()
    {
        ["LISTEN_ADDRESS"] = s.ListenAddress,
        ["LISTEN_PORT"] = s.ListenPort,
        ["DOWNSTREAM_ADDRESS"] = s.DownstreamAddress,
        ["DOWNSTREAM_PORT"] = s.DownstreamPort,
        ["HAPROXY_THREADS"] = s.Threads,
        ["HAPROXY_ALPN"] = s.Alpn,
        ["HAPROXY_TLS_CRT"] = s.CombinedPem,
        ["HAPROXY_H2C"] = s.Tls is null && s.Protocols == "h2" ? "1" : null,
        ["HAPROXY_DOWNSTREAM_CA"] = s.DownstreamCa,
    };

    /// <summary>haproxy.cfg with each "server server1 ..." line replaced by one line per replica, s1..sN, the rest of
    /// the line (maxconn, TLS) kept.</summary>
    public static string Render(string template, IReadOnlyList<string> replicas) => ServerConfig.RewriteLines(template, line =>
    {
        var f = ServerConfig.Fields(line);
        if (f.Length < 2 || f[0] != "server" || f[1] != "server1")
        {
            return null;
        }
        var rest = string.Concat(f.Skip(3).Select(x => " " + x));
        return replicas.Select((d, i) => $"    server s{i + 1} {d}{rest}").ToList();
    });

    /// <summary>The line the job prints before it starts HAProxy (the runner keeps it in the application log).</summary>
    public static string InfoLine(Settings s, string version) =>
        $"{Name}: {version}, nbthread {s.Threads}, listening on {s.ListenAddress}:{s.ListenPort} "
        + $"({(s.Tls is null ? $"http, {s.Protocols}" : $"https, ALPN {s.Alpn}")}{(s.ForwardFor ? ", X-Forwarded-For" : "")}), "
        + $"upstream {s.DownstreamsText ?? $"{s.DownstreamAddress}:{s.DownstreamPort}"}";
}
