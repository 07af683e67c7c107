namespace LLRP.Jobs;

/// <summary>crank/nginx-job.sh, Debian's nginx as the proxy or (NGINX_CONFIG=origin.conf) the origin: <see cref="Help"/>
/// says how it runs and what it takes.</summary>
internal static class NginxJob
{
    public const string Name = "nginx-job";

    public const string Help = """
        usage: crank/nginx-job.sh   (crank's nginx jobs in benchmarks.yml; settings from the environment)
        Runs Debian's nginx as the proxy (port 8080 by default), or with NGINX_CONFIG=origin.conf as the origin
        (run-local.sh --origin nginx). Renders crank/nginx/NGINX_CONFIG into a writable work folder, checks it with
        "nginx -t", runs nginx as a child announced with "##ChildProcessId:<pid>" on stderr (a crank agent then tracks
        nginx itself), and prints "nginx-job: ready on ADDRESS:PORT" once the port accepts connections (crank's
        readyStateText: "nginx-job: ready"). nginx runs with "master_process off; daemon off;": one process, which exits
        on SIGTERM; the job passes SIGTERM/SIGINT on and exits with nginx's status.

        Environment (all optional; set but empty is an error, so that a forgotten benchmarks.yml variable
        is never replaced by a default):
          LISTEN_ADDRESS (127.0.0.1; 0.0.0.0 = every interface)  LISTEN_PORT (8080)
          DOWNSTREAM_ADDRESS (127.0.0.1)  DOWNSTREAM_PORT (8081)
          DOWNSTREAMS    several replicas instead, "ADDRESS:PORT ADDRESS:PORT ...": one "server" line each in the upstream
                         block, which nginx balances round-robin (its default); the scaling comparison sets it
          NGINX_WORKERS  worker_processes (default 1: benchmarks.yml's "threads"). With more than one, nginx needs its master
                         process to run the workers, so the config gets "master_process on" and the agent then tracks the
                         master; the runner's /proc samples count the master's children with it (crank/README.md, "Equal threads")
          NGINX_CONFIG   template in crank/nginx/ (default nginx.conf, the tuned proxy; nginx-default.conf: Debian's stock
                         proxy settings, no upstream keep-alive; origin.conf: nginx as the origin, DOWNSTREAM_* unused)
          ORIGIN_BODY_SIZES  origin.conf only: the body sizes in bytes it serves, as /?s=N (default "0 10 100 1024 10240
                         65536 102400": the sizes the sweeps and the matrix use; "/" answers 10 bytes, Downstream's default,
                         from the config)
          JOB_WORK_DIR   folder for the rendered config, pid and temp files, kept (run-local.sh puts it in
                         its logs). Default: a new temp folder, removed as soon as nginx exits.
          TLS_CERT, TLS_KEY  listen with TLS (benchmarks.yml's serverScheme=https): this PEM certificate and key
                         (crank/tls-cert.sh); TLS 1.2 and 1.3, as every proxy here: nginx 1.22 (Debian 12's) enables TLS 1.0-1.2
                         only (1.3 is its default from 1.23.4), so without ssl_protocols it negotiates TLS 1.2 where the
                         others negotiate 1.3. Sessions are resumed with TLS tickets (nginx's default, as the others')
          DOWNSTREAM_TLS_CA  proxy to the upstream over TLS (downstreamScheme=https), verifying its certificate against
                         this PEM file for the name "localhost" (nginx checks DNS names only), SNI on, sessions reused,
                         TLS 1.2 and 1.3 (proxy_ssl_protocols: the same 1.22 default as ssl_protocols)
          PROTOCOLS      what the listener speaks (benchmarks.yml's protocols): http1 (default; empty is the default too),
                         h2 or http1,h2. h2 in it adds "http2" to the listen line: with TLS_CERT, ALPN offers h2 and http/1.1
                         (nginx cannot offer h2 alone); without, prior-knowledge h2c only, so http1,h2 needs TLS_CERT. The
                         upstream stays HTTP/1.1. Only nginx.conf takes it (the other templates are HTTP/1.1)
          NGINX          nginx binary (default /usr/sbin/nginx)
          READY_TIMEOUT  seconds to wait for the port before reporting failure (default 30)
        Exit status: nginx's; 2 for a bad setting (one line on stderr), nginx -t's when it refuses the configuration.

        """;

    public const string DefaultNginx = "/usr/sbin/nginx";
    public const string DefaultConfig = "nginx.conf";
    public const string OriginConfig = "origin.conf";

    /// <summary>origin.conf's bodies: the sizes the sweeps and the matrix use (analysis/Runner/Sweep.cs); "/" answers
    /// 10 bytes, Downstream's default, from the config itself.</summary>
    public const string DefaultBodySizes = "0 10 100 1024 10240 65536 102400";

    /// <summary>The job's settings, read and checked from the environment before anything is written.</summary>
    internal sealed record Settings(
        string Nginx, string ListenAddress, string ListenPort, string DownstreamAddress, string DownstreamPort,
        string? DownstreamsText, IReadOnlyList<string>? Replicas, string Workers, string ConfigName, string TemplatePath,
        string? BodySizesText, IReadOnlyList<long>? BodySizes, string Protocols, (string Cert, string Key)? Tls,
        string? DownstreamCa, int ReadyTimeout, string? WorkDir);

    public static int Run(string[] args)
    {
        if (ServerJob.Help(args, Help))
        {
            return 0;
        }
        var s = Read(ServerEnv.Current, Tools.CrankDir);
        // No JOB_WORK_DIR: a new temp folder, removed once nginx has exited (it writes its pid and temp files there).
        var workDir = s.WorkDir ?? Directory.CreateTempSubdirectory("nginx-job.").FullName;
        try
        {
            Directory.CreateDirectory(workDir);
            if (s.BodySizes is not null)
            {
                WriteBodies(workDir, s.BodySizes);
            }
            var conf = $"{workDir}/nginx.conf";
            File.WriteAllText(conf, Render(File.ReadAllText(s.TemplatePath), s, workDir));
            // NGINX is the binary's path here, but nginx itself reads that variable as a list of inherited sockets.
            var nginx = new ServerTool(s.Nginx, new Dictionary<string, string?> { ["NGINX"] = null });
            // -p: prefix for relative paths; -e: the startup error log before the config's error_log applies.
            string[] files = ["-p", $"{workDir}/", "-c", conf, "-e", "stderr"];
            nginx.Check(["-t", "-q", .. files]);
            Console.Out.WriteLine(InfoLine(s, nginx.Output("-v"), conf));
            return nginx.Serve(Name, files, s.ListenAddress, s.ListenPort, s.ReadyTimeout);
        }
        finally
        {
            if (s.WorkDir is null)
            {
                Directory.Delete(workDir, recursive: true);
            }
        }
    }

    /// <summary>The settings from <paramref name="env"/>, checked in the bash job's order (the first problem is the one
    /// reported); templates and tools under <paramref name="crankDir"/>.</summary>
    public static Settings Read(ServerEnv env, string crankDir)
    {
        var listenAddress = env.UnsetOr("LISTEN_ADDRESS", ServerJob.DefaultListenAddress);
        var listenPort = env.UnsetOr("LISTEN_PORT", ServerJob.DefaultListenPort);
        var downstreamAddress = env.UnsetOr("DOWNSTREAM_ADDRESS", ServerJob.DefaultDownstreamAddress);
        var downstreamPort = env.UnsetOr("DOWNSTREAM_PORT", ServerJob.DefaultDownstreamPort);
        var workers = env.EmptyOr("NGINX_WORKERS", "1");
        if (!ServerJob.IsDigits(workers) || workers[0] == '0')
        {
            throw JobFailure.BadUsage($"NGINX_WORKERS='{workers}' is not a whole number >= 1");
        }
        var configName = env.EmptyOr("NGINX_CONFIG", DefaultConfig);
        var template = Path.Combine(crankDir, "nginx", configName);
        if (!File.Exists(template))
        {
            throw JobFailure.BadUsage($"NGINX_CONFIG={configName} is not a file in crank/nginx/");
        }
        var replicas = ServerJob.Replicas(env);
        var nginx = Tools.Find("NGINX", "nginx", "nginx-light", DefaultNginx, env.Get);
        ServerJob.RequireListenAddress(listenAddress);
        ServerJob.RequireAddresses(listenAddress, downstreamAddress);
        foreach (var (name, value) in new[] { ("LISTEN_PORT", listenPort), ("DOWNSTREAM_PORT", downstreamPort) })
        {
            if (!ServerJob.IsDigits(value))
            {
                throw JobFailure.BadUsage($"{name}='{value}' is not a port number");
            }
        }
        string? sizesText = null;
        List<long>? sizes = null;
        if (configName == OriginConfig)
        {
            sizesText = env.EmptyOr("ORIGIN_BODY_SIZES", DefaultBodySizes);
            sizes = [];
            foreach (var n in sizesText.Split([' ', '\t', '\n'], StringSplitOptions.RemoveEmptyEntries))
            {
                sizes.Add(ServerJob.IsDigits(n) && long.TryParse(n, out var size)
                    ? size
                    : throw JobFailure.BadUsage($"ORIGIN_BODY_SIZES entry '{n}' is not a whole number"));
            }
        }
        var protocols = ServerJob.Protocols(env);
        var tls = env.NonEmpty("TLS_CERT") is not null;
        if (protocols != "http1")
        {
            if (!File.ReadAllText(template).Contains("@LISTEN_HTTP2@", StringComparison.Ordinal))
            {
                throw JobFailure.BadUsage($"PROTOCOLS={protocols}: {configName} speaks HTTP/1.1 only (nginx.conf takes h2)");
            }
            if (protocols == "http1,h2" && !tls)
            {
                throw JobFailure.BadUsage(ServerJob.CleartextHttp1H2);
            }
        }
        return new Settings(nginx, listenAddress, listenPort, downstreamAddress, downstreamPort, env.NonEmpty("DOWNSTREAMS"),
            replicas, workers, configName, template, sizesText, sizes, protocols, ServerJob.Tls(env), ServerJob.DownstreamCa(env),
            ServerJob.ReadyTimeout(env), env.NonEmpty("JOB_WORK_DIR"));
    }

    /// <summary>The template with its @NAME@ tokens filled for <paramref name="s"/> and <paramref name="workDir"/>, and
    /// its "@SERVERS@" line replaced by one "server ADDRESS:PORT;" line per upstream.</summary>
    public static string Render(string template, Settings s, string workDir)
    {
        var upstreams = s.Replicas ?? [$"{s.DownstreamAddress}:{s.DownstreamPort}"];
        var text = ServerConfig.RewriteLines(template, line =>
            ServerConfig.IsTokenLine(line, "@SERVERS@") ? upstreams.Select(u => $"    server {u};").ToList() : null);
        // One worker runs as the single process (master_process off), so the tracked PID is the one doing the work; more
        // workers need the master to start them.
        return ServerConfig.ReplaceTokens(text,
        [
            new("@LISTEN_SSL@", s.Tls is null ? "" : " ssl"),
            new("@LISTEN_HTTP2@", s.Protocols == "http1" ? "" : " http2"),
            new("@SERVER_TLS@", s.Tls is { } tls
                ? $"ssl_protocols TLSv1.2 TLSv1.3; ssl_certificate {tls.Cert}; ssl_certificate_key {tls.Key};"
                : ""),
            new("@UPSTREAM_SCHEME@", s.DownstreamCa is null ? "http" : "https"),
            new("@UPSTREAM_TLS@", s.DownstreamCa is { } ca
                ? $"proxy_ssl_verify on; proxy_ssl_trusted_certificate {ca}; proxy_ssl_name localhost; proxy_ssl_server_name on; proxy_ssl_session_reuse on; proxy_ssl_protocols TLSv1.2 TLSv1.3;"
                : ""),
            new("@LISTEN_ADDRESS@", s.ListenAddress),
            new("@WORKERS@", s.Workers),
            new("@MASTER@", s.Workers == "1" ? "off" : "on"),
            new("@LISTEN_PORT@", s.ListenPort),
            new("@WORK_DIR@", workDir),
        ]);
    }

    /// <summary>origin.conf's bodies: bodies/s&lt;N&gt;, N bytes of 'x' each.</summary>
    public static void WriteBodies(string workDir, IEnumerable<long> sizes)
    {
        var dir = Path.Combine(workDir, "bodies");
        Directory.CreateDirectory(dir);
        var chunk = new byte[64 * 1024];
        Array.Fill(chunk, (byte)'x');
        foreach (var n in sizes)
        {
            using var f = File.Create(Path.Combine(dir, $"s{n}"));
            for (var left = n; left > 0; left -= chunk.Length)
            {
                f.Write(chunk, 0, (int)Math.Min(left, chunk.Length));
            }
        }
    }

    /// <summary>The line the job prints before it starts nginx (the runner keeps it in the application log).</summary>
    public static string InfoLine(Settings s, string version, string conf)
    {
        var role = s.ConfigName == OriginConfig
            ? $"the origin, bodies of {s.BodySizesText} bytes"
            : $"upstream {s.DownstreamsText ?? $"{s.DownstreamAddress}:{s.DownstreamPort}"}";
        return $"{Name}: {version}, worker_processes {s.Workers}, listening on {s.ListenAddress}:{s.ListenPort} "
            + $"({(s.Tls is null ? "http" : "https")}, {s.Protocols}), {role}, config {conf}";
    }
}
