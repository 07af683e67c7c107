namespace LLRP.Jobs;

/// <summary>crank/h2o-job.sh, Debian's h2o as the proxy: <see cref="Help"/> says how it runs and what it takes.</summary>
internal static class H2oJob
{
    public const string Name = "h2o-job";

    public const string Help = """
        usage: crank/h2o-job.sh   (crank's h2o jobs in benchmarks.yml; settings from the environment)
        Runs Debian's h2o as the proxy (port 8080 by default): renders crank/h2o/h2o.conf into a temp file (removed when h2o
        exits), checks it ("h2o -t"), runs "h2o -c" (foreground) as a child announced with "##ChildProcessId:<pid>" on
        stderr (a crank agent then tracks h2o itself), and prints "h2o-job: ready on ADDRESS:PORT" once the port accepts
        connections (crank's readyStateText: "h2o-job: ready"). h2o exits on SIGTERM/SIGINT; the job passes them on and
        exits with h2o's status.

        Environment (all optional; set but empty is an error, so that a forgotten benchmarks.yml variable
        is never replaced by a default):
          LISTEN_ADDRESS (127.0.0.1; 0.0.0.0 = every interface)  LISTEN_PORT (8080)
          DOWNSTREAM_ADDRESS (127.0.0.1)  DOWNSTREAM_PORT (8081)
          H2O_THREADS    num-threads (default 1: benchmarks.yml's "threads", as nginx's workers and HAProxy's nbthread)
          H2O (/usr/bin/h2o)  READY_TIMEOUT (30 s)
          TLS_CERT, TLS_KEY  listen with TLS (benchmarks.yml's serverScheme=https): this PEM certificate and key
                         (crank/tls-cert.sh)
          PROTOCOLS      what the listener speaks (benchmarks.yml's protocols): http1 (default; empty is the default too),
                         h2 or http1,h2. h2o 2.2 cannot narrow it: with TLS_CERT, ALPN offers h2 and http/1.1 whatever the
                         value; without, the port takes HTTP/1.1 and prior-knowledge h2c, and http1,h2 is refused as by the
                         other peers (ALPN needs TLS). The upstream stays HTTP/1.1
        Not supported (refused): DOWNSTREAMS (h2o 2.2's proxy.reverse.url names one origin) and DOWNSTREAM_TLS_CA (h2o
        would send the URL's host as SNI and check the certificate against it, not "localhost" as the other proxies).
        Exit status: h2o's; 2 for a bad setting (one line on stderr), h2o -t's when it refuses the configuration.

        """;

    public const string DefaultH2o = "/usr/bin/h2o";

    /// <summary>The mark that ends the template's TLS-only lines.</summary>
    public const string TlsMark = "#@TLS";

    /// <summary>The job's settings, read and checked from the environment before anything is written.</summary>
    internal sealed record Settings(
        string H2o, string ListenAddress, string ListenPort, string DownstreamAddress, string DownstreamPort,
        string Threads, string Protocols, (string Cert, string Key)? Tls, int ReadyTimeout);

    public static int Run(string[] args)
    {
        if (ServerJob.Help(args, Help))
        {
            return 0;
        }
        var s = Read(ServerEnv.Current);
        // A temp file of the run's own, removed once h2o has exited.
        var conf = Path.Combine(Path.GetTempPath(), $"h2o-job.{Path.GetRandomFileName().Replace(".", "", StringComparison.Ordinal)}.conf");
        try
        {
            using (var f = new StreamWriter(new FileStream(conf, FileMode.CreateNew)))
            {
                f.Write(Render(File.ReadAllText(Path.Combine(Tools.CrankDir, "h2o", "h2o.conf")), s));
            }
            var h2o = new ServerTool(s.H2o, new Dictionary<string, string?>());
            h2o.Check("-t", "-c", conf);
            Console.Out.WriteLine(InfoLine(s, h2o.Output("-v").Split('\n')[0], conf));
            return h2o.Serve(Name, ["-c", conf], s.ListenAddress, s.ListenPort, s.ReadyTimeout);
        }
        finally
        {
            File.Delete(conf);
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
        var threads = env.EmptyOr("H2O_THREADS", "1");
        var tls = ServerJob.Tls(env);
        var protocols = ServerJob.Protocols(env);
        if (protocols == "http1,h2" && tls is null)
        {
            throw JobFailure.BadUsage(ServerJob.CleartextHttp1H2);
        }
        if (env.NonEmpty("DOWNSTREAMS") is not null)
        {
            throw JobFailure.BadUsage("DOWNSTREAMS: h2o 2.2's proxy.reverse.url names one origin (no replicas)");
        }
        if (env.NonEmpty("DOWNSTREAM_TLS_CA") is not null)
        {
            throw JobFailure.BadUsage("DOWNSTREAM_TLS_CA: not supported with h2o (it cannot verify the origin as \"localhost\")");
        }
        var h2o = Tools.Find("H2O", "h2o", "h2o", DefaultH2o, env.Get);
        ServerJob.RequireListenAddress(listenAddress);
        ServerJob.RequireAddresses(listenAddress, downstreamAddress);
        foreach (var (name, value) in new[] { ("LISTEN_PORT", listenPort), ("DOWNSTREAM_PORT", downstreamPort), ("H2O_THREADS", threads) })
        {
            if (!ServerJob.IsDigits(value))
            {
                throw JobFailure.BadUsage($"{name}='{value}' is not a whole number");
            }
        }
        if (threads.All(c => c == '0'))
        {
            throw JobFailure.BadUsage($"H2O_THREADS='{threads}' is not a whole number >= 1");
        }
        return new Settings(h2o, listenAddress, listenPort, downstreamAddress, downstreamPort, threads, protocols, tls,
            ServerJob.ReadyTimeout(env));
    }

    /// <summary>The template with its @NAME@ tokens filled for <paramref name="s"/>, and its lines marked
    /// <see cref="TlsMark"/> kept without the mark with TLS, left out without.</summary>
    public static string Render(string template, Settings s)
    {
        var text = ServerConfig.RewriteLines(template, line =>
        {
            var trimmed = line.TrimEnd();
            if (!trimmed.EndsWith(TlsMark, StringComparison.Ordinal))
            {
                return null;
            }
            return s.Tls is null ? [] : [trimmed[..^TlsMark.Length].TrimEnd()];
        });
        return ServerConfig.ReplaceTokens(text,
        [
            new("@THREADS@", s.Threads),
            new("@LISTEN_ADDRESS@", s.ListenAddress),
            new("@LISTEN_PORT@", s.ListenPort),
            new("@DOWNSTREAM_ADDRESS@", s.DownstreamAddress),
            new("@DOWNSTREAM_PORT@", s.DownstreamPort),
            new("@TLS_CERT@", s.Tls?.Cert ?? ""),
            new("@TLS_KEY@", s.Tls?.Key ?? ""),
        ]);
    }

    /// <summary>The line the job prints before it starts h2o (the runner keeps it in the application log).</summary>
    public static string InfoLine(Settings s, string version, string conf) =>
        $"{Name}: {version}, num-threads {s.Threads}, listening on {s.ListenAddress}:{s.ListenPort} "
        + $"({(s.Tls is null ? "http: HTTP/1.1 and h2c" : "https: ALPN h2,http/1.1")}, PROTOCOLS {s.Protocols}), "
        + $"upstream {s.DownstreamAddress}:{s.DownstreamPort}, config {conf}";
}
