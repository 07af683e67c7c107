namespace LLRP.Runner;

/// <summary>The runner's --help texts: run-local's is the whole option reference (docs/options.md is generated from it).</summary>
internal static class Help
{
    internal const string RunLocal = """
        usage: crank/run-local.sh [options] [SCENARIO...]
               crank/run-local.sh scaling|sweep|ab|ramp|comparisons [options]   the published comparisons (crank/README.md, "Comparisons")
               crank/run-local.sh fixed-rate (--max-rps N | --max-from DIR) [options]   open-loop latency at 25/50/75/90 % of a
                          measured maximum (`crank/run-local.sh fixed-rate --help`)
               crank/run-local.sh stepped [options]   the stepped comparison: TLS and h2 to the proxy, X-Forwarded-For on, the
                          offered load stepped up until each proxy fails (`crank/run-local.sh stepped --help`)
          SCENARIO        direct nginx haproxy llrp-llhttp llrp-httpclient llrp-httpclientwithcontext
                          llrp-yarp httpclientproxy yarp (default: every one that can run here); also, run only when
                          named: llrp-kestrel-h1 (llhttp behind LLRP's Kestrel HTTP/1.1 front end, as --front-end kestrel)
                          and the peers caddy and h2o (Debian's Caddy and h2o, crank/caddy-job.sh, crank/h2o-job.sh)
          --rounds N      interleaved rounds (default 3): round 1 runs A B C D, round 2 A D C B, round 3 C D A B, ...
                          (analysis/Runner, Rounds.Order: no scenario always runs first, last or right after the same one)
          --round-offset K  run round R in round R+K's order (default 0; analysis/sweep.sh runs one round per call and
                          passes its round number - 1)
          --duration S    measured seconds per run (default 15)
          --warmup S      warm-up seconds before each measured run (default 20: see docs/methodology.md); for the
                          .NET scenarios the minimum of an adaptive warm-up (--warmup-max)
          --warmup-max S  .NET scenarios: keep warming up after --warmup until the proxy's JIT is quiet (at most
                          --warm-jit methods compiled in 3 s), at most S seconds in all; a run that reaches S is
                          flagged (default 60; 0 or <= --warmup: fixed warm-up)
          --warm-jit N    the JIT is quiet at N methods or fewer in 3 s (default 2)
          --connections C load connections (default 64: 2-core box, see README; with --load h2load the cores of this
                          machine, the .NET lab's one connection per core)
          --load-threads T  wrk threads (default 1; benchmarks.yml's loadThreads; "--threads" was this before the proxies
                          had a thread count, and is refused so that an old command line cannot change meaning silently)
          --proxy-threads N  every proxy's threads or processes (benchmarks.yml's threads; default 1): nginx
                          worker_processes, HAProxy nbthread, Caddy GOMAXPROCS, h2o num-threads, LLRP --engineThreads,
                          DOTNET_PROCESSOR_COUNT for full YARP and HttpClientProxy (crank/README.md, "Equal threads")
          --path P        request path, e.g. '/?s=1024' (default /; /ws, Downstream's echo, with --load websocket)
          --response-size N  the origin's body in bytes: path '/?s=N' (benchmarks.yml's responseSize; not with --path)
          --request-body-size N  0 = GET (default); N = POST with an N-byte body (benchmarks.yml's requestBodySize)
          --request-body-framing F  content-length (default) or chunked (wrk only)
          --headers H     request header preset: plaintext (default), browser, handshake (plaintext with "Connection: close":
                          a new connection, and with https a full TLS handshake, for every request), none (crank/Jobs/HeaderPresets.cs)
          --server-scheme S      http (default) or https: the load speaks TLS to the proxy (benchmarks.yml's serverScheme)
          --downstream-scheme S  http (default) or https: the proxy speaks TLS to the origin (downstreamScheme). Every
                          proxy and origin of the run presents one self-signed ECDSA P-256 certificate made for it
                          (crank/tls-cert.sh, in the run's tls/ folder) and trusts only it downstream
          --load L        wrk (default: closed loop, crank/wrk-job.sh), fixedrate (open loop at --rate requests/s,
                          crank/fixedrate-job.sh; fixed warm-up, no adaptive one; run-local.sh fixed-rate runs it at 25/50/75/90 %
                          of a measured maximum) or h2load (HTTP/2 from the load, crank/h2load-job.sh: closed loop, -c
                          connections with --streams streams each; open loop with --rate; no direct scenario: the origin
                          speaks HTTP/1.1; refuses --headers handshake and chunked bodies) or websocket (WebSocket echo,
                          crank/websocket-job.sh: --connections connections each sending one --message-size binary message
                          and waiting for its echo from Downstream's /ws; a round trip is the request, so RPS is messages/s
                          and CPU us/request the proxy's CPU per message; the origin is Downstream; the scenarios whose
                          proxy tunnels an upgrade: direct nginx haproxy llrp-llhttp llrp-httpclient
                          llrp-httpclientwithcontext llrp-yarp yarp, and caddy when named)
          --message-size N  websocket only: bytes of each message (default 32, at most 1048576; benchmarks.yml's messageSize)
          --rate R        fixedrate: offered requests/s over all connections (benchmarks.yml's rate); h2load: open loop at R
          --streams N     h2load only: concurrent streams per connection (benchmarks.yml's streams; default 100, the .NET
                          lab's, with --connections defaulting to the cores: crank/README.md, "HTTP/2")
          --protocols P   what every proxy's listener speaks (benchmarks.yml's protocols): http1, h2 or http1,h2; on https
                          ALPN chooses, on http h2 is prior-knowledge h2c (http1,h2 needs https; h2 on http needs
                          --load h2load). Default: nothing passed (HTTP/1.1), except with --load h2load: http1,h2 on
                          https, h2 on http. nginx, HAProxy, Caddy and h2o get PROTOCOLS, LLRP --protocols, full YARP
                          and HttpClientProxy Kestrel's EndpointDefaults:Protocols; the origin always gets HTTP/1.1
          --front-end F   LLRP's front end, raw (LLRP's default) or kestrel, passed to every LLRP scenario (benchmarks.yml's
                          frontEnd; LLRP's option name is in analysis/Runner/Protocols.cs)
          --json-dir DIR  where the JSON files go (default artifacts/crank/<date>-<time>)
          Topology (default, without crank on one machine of 2+ CPUs: --pin-proxy --origin nginx, the README
          headline's; with crank, --agents, --netns or 1 CPU: unpinned, Downstream as the origin):
          --pin-proxy     taskset: the proxy alone on CPU 1, load generator and origin on CPU 0 (fallback only):
                          the proxy has a core of its own, as on a machine of its own in crank's three-machine
                          profile, and every proxy gets the same one core (the peers run one worker/thread)
          --pin           taskset: load generator on CPU 0, proxy and origin on CPU 1 (fallback only)
          --origin O      nginx (nginx as the origin, crank/nginx/origin.conf; fallback only): an origin that needs about
                          two thirds of Downstream's CPU per request, so that with --pin-proxy the proxy, not the origin
                          and wrk, is the bottleneck (docs/methodology.md, "The origin"); it answers GET / and /?s=N for
                          N in 0 10 1024 65536 (another --path gets Downstream unless --origin nginx is given), or
                          downstream (the Downstream app, Kestrel, benchmarks.yml's job)
          --shared        the topology of the sittings before 2026-11-27 07:00: nothing pinned, Downstream as the
                          origin (--pin, --pin-proxy or --origin given as well still apply)
          --dry-run       print the plan (scenarios, each round's order, topology, expected time) and exit 0; nothing
                          is installed, published or started
          --own-sessions  start each job in a session (and scheduler autogroup) of its own, as run-local.sh did until
                          2026-11-26 (fallback only; the default is one session, as crank's agent: docs/methodology.md)
          --pgo | --nopgo run the proxy (application) with the "pgo" / "nopgo" environment (benchmarks.yml profiles)
          --app-env K=V   extra environment variable for the proxy, e.g. shareClients=true (repeatable)
          --proxy-port P / --downstream-port P   (defaults 8080 / 8081)
          --steady-tolerance P   largest change of the proxy's CPU us/request between the two halves of the
                          measured window for a run to count as steady, in percent (default 15)
          --steady-jit-share P   largest share of a .NET proxy's CPU time in the measured window that its JIT may
                          spend compiling for the run to count as steady, in percent (default 5)
          --steady-retries N     run an unsteady run again, at most N more times (default 2); every attempt is
                          logged and counted, the last one is kept
          --fallback      do not use crank even if it is installed
          --no-install    never call apt-get
          --no-report     do not write report.md and the charts at the end
          --variable NAME=VALUE  a benchmarks.yml variable (passed on to crank): serverAddress, serverListenAddress,
                          downstreamAddress, downstreamListenAddress (default 127.0.0.1 / the target), maxErrors
                          (default 0: a run with more bad responses + socket errors fails)
          --agents load=URL,application=URL,downstream=URL  crank across three machines' agents with
                          --profile multimachine; serverAddress and downstreamAddress have no default then
          --netns load=NS,application=NS,downstream=NS  the fallback across network namespaces (crank/hosts.sh):
                          each role's processes run in its namespace; the addresses have no default either
        Writes <json-dir>/<scenario>.r<round>.json (crank --json shape), run.json, machine.txt, report.md
        with PNG charts, and each run's logs under <json-dir>/logs/. Exit status: 0 if every run that was
        attempted succeeded, 1 otherwise, 2 on bad usage.
        """;

    /// <summary>The comparisons' --help (crank/run-local.sh scaling|sweep|ab|ramp|comparisons --help).</summary>
    internal const string Comparisons = """
        usage: crank/run-local.sh COMPARISON [options]     (or crank/runner.sh comparisons COMPARISON [options])
          COMPARISON      scaling | sweep | ab | ramp | comparisons (all four, in that order)
          --rounds N      interleaved rounds (default 1)
          --warmup S      unmeasured seconds before each measured run (default 20, as run-local.sh; ramp: at its first rate)
          --duration S    measured seconds per run (default 15); ramp: seconds per step (default 10)
          --proxies LIST  comma-separated, from llrp-llhttp,yarp,nginx,nginx-default,haproxy,direct (default: the
                          comparison's own list)
          --policies LIST scaling: load-balancing policies of llrp-llhttp and yarp (default: every one each has)
          --replicas LIST scaling: replica counts (default 1,2,3,5)
          --connections LIST  sweep: connection counts (default 10,50,100,200)
          --scaling-connections N  scaling: wrk connections (default 200)
          --ab-clients N  ab: concurrent clients (default 200)   --ab-path P  ab: the page (default /?s=26624)
          --ramp-start R --ramp-step R --ramp-steps N --ramp-connections C   ramp (defaults 4000, 4000, 8, 100: 4k to 32k
                          req/s; ramp-job.sh says where the range comes from)
          --proxy-threads N  every proxy's threads or processes (benchmarks.yml's "threads", default 1: crank/README.md,
                          "Equal threads"): nginx worker_processes, HAProxy nbthread, LLRP --engineThreads, YARP's
                          DOTNET_PROCESSOR_COUNT
          --proxy-port P / --downstream-port P   the proxy's port and the first replica's (replica i: P + i - 1);
                          defaults 8080 / 8081 (then run under flock /tmp/llrp-ports.lock)
          --json-dir DIR  where results go (default artifacts/crank/<date>-<time>-<comparison>)
          --fallback      never use crank, even if it is installed
          --no-install    never call apt-get
          --no-report     do not write comparisons.md and the charts
        With crank (crank on PATH or in .tools/crank/, and an agent on http://127.0.0.1:5010) every run is
        "crank --config benchmarks.yml --scenario <comparison scenario> --profile local ..."; otherwise the same job
        scripts run directly. Writes <json-dir>/<comparison>.<proxy>[.<policy>].n<replicas>.c<connections>.r<round>.json
        (crank --json shape), comparisons.json (one row per run), comparisons.md with PNG charts, logs under logs/.
        Exit status: 0 every run succeeded, 1 a run failed, 2 bad usage.
        """;
}
