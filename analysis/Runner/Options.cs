using System.CommandLine;
using System.Globalization;
using System.Text.RegularExpressions;

namespace LLRP.Runner;

/// <summary>Everything run-local's command line sets (OptionParser declares each option and its default).</summary>
internal sealed class Options
{
    public static readonly string[] AllScenarios =
        ["direct", "nginx", "haproxy", "llrp-llhttp", "llrp-httpclient", "llrp-httpclientwithcontext", "llrp-yarp", "httpclientproxy", "yarp"];
    // Scenarios run only when named: llhttp behind LLRP's Kestrel front end (benchmarks.yml's llrp-kestrel-h1), a
    // layer of the layer table rather than one of the comparison's proxies; the peers Caddy and h2o (Peers), so that
    // the default run, and the sittings and the headline made with it, keep their scenario set and length.
    public static readonly string[] NamedScenarios = ["llrp-kestrel-h1", "caddy", "h2o"];
    // The scenarios --load websocket can run (benchmarks.yml's websocket-<scenario>): those whose proxy tunnels an HTTP/1.1
    // upgrade (docs/upgrade.md). HttpClientProxy and LLRP's Kestrel front end do not; h2o 2.2's WebSocket proxying is an
    // experimental switch, off in its configuration.
    public static readonly string[] WebSocketScenarios =
        ["direct", "nginx", "haproxy", "llrp-llhttp", "llrp-httpclient", "llrp-httpclientwithcontext", "llrp-yarp", "yarp", "caddy"];

    // The values of the command line; the defaults are OptionParser's, with their reasons.
    public int Rounds, RoundOffset, Duration, Warmup, Connections, LoadThreads, ProxyThreads, BodySize, Streams, MessageSize;
    public string Path = "", ResponseSize = "", BodyFraming = "", Headers = "", Load = "", Rate = "", ServerScheme = "", DownstreamScheme = "";
    // Protocols: Protocols.Resolve; FrontEnd empty: LLRP's default, raw. ConnectionsGiven: h2load's default connections
    // are the cores instead of 64; PathGiven: --load websocket's path is Downstream's echo, /ws, unless --path is given.
    public string Protocols = "", FrontEnd = "";
    public bool ConnectionsGiven, StreamsGiven, MessageSizeGiven, PathGiven;
    public const int MaxMessageSize = 1024 * 1024;
    public string JsonDir = "", Pin = "", Origin = "", Pgo = "", SteadyJitShare = "";
    public bool Shared, DryRun, OwnSessions, UseCrank, Install, Report;
    public int ProxyPort, DownstreamPort, SteadyTolerance, SteadyRetries, WarmupMax, WarmJit;
    public readonly List<string> AppEnv = [];
    public readonly List<string> Scenarios = [];
    public bool ExplicitScenarios;
    public bool Help;
    // benchmarks.yml's address variables and the error threshold (maxErrors 0: a run with more bad responses + socket
    // errors fails); the crank agents (--agents) or the fallback's network namespaces (--netns) of a run across machines.
    public readonly Dictionary<string, string> GivenVariables = [];
    public readonly Dictionary<string, string> Agents = [];
    public readonly Dictionary<string, string> Netns = [];
    public bool Multimachine => Agents.Count > 0 || Netns.Count > 0;
}

/// <summary>run-local's command line: each option once, with its description and default (the generated --help), and
/// what it sets in <see cref="Options"/>.</summary>
internal static partial class OptionParser
{
    private static readonly Binder<Options> B = new();

    private static readonly Argument<string[]> ScenarioArgument = new("SCENARIO")
    {
        Arity = ArgumentArity.ZeroOrMore,
        Description = $"{string.Join(' ', Options.AllScenarios)} (default: every one that can run here); also, run only when named: " +
            "llrp-kestrel-h1 (llhttp behind LLRP's Kestrel HTTP/1.1 front end, as --front-end kestrel) and the peers caddy and h2o " +
            "(Debian's Caddy and h2o, crank/caddy-job.sh, crank/h2o-job.sh)",
    };

    internal static readonly Command Command = Cli.Command("crank/run-local.sh", """
        LLRP's benchmark driver on one machine: crank when it is installed, else the same job scripts directly. Also:
          crank/run-local.sh scaling|sweep|ab|ramp|comparisons [options]   the published comparisons (crank/README.md, "Comparisons")
          crank/run-local.sh fixed-rate (--max-rps N | --max-from DIR) [options]   open-loop latency at 25/50/75/90 % of a measured maximum
          crank/run-local.sh stepped [options]   the stepped comparison: TLS and h2 to the proxy, X-Forwarded-For on, the offered load stepped up until each proxy fails
        Topology (default, without crank on one machine of 2+ CPUs: --pin-proxy --origin nginx, the README headline's; with
        crank, --agents, --netns or 1 CPU: unpinned, Downstream as the origin).
        Writes <json-dir>/<scenario>.r<round>.json (crank --json shape), run.json, machine.txt, report.md with PNG charts,
        and each run's logs under <json-dir>/logs/. Exit status: 0 if every run that was attempted succeeded, 1 otherwise,
        2 on bad usage.
        """,
        ScenarioArgument,
        B.Bind(Cli.Int("--rounds", 3, "interleaved rounds: round 1 runs A B C D, round 2 A D C B, round 3 C D A B, ... (Rounds.Order: " +
            "no scenario always runs first, last or right after the same one)", min: 1), (o, v) => o.Rounds = v),
        B.Bind(Cli.Int("--round-offset", 0, "run round R in round R+K's order (analysis/sweep.sh runs one round per call and passes its round number - 1)",
            helpName: "K"), (o, v) => o.RoundOffset = v),
        // Warm-up: full YARP, the slowest .NET variant to reach tier-1 code, needed ~20 s of load on the shared 2-core
        // box before its CPU us/request stopped falling (docs/methodology.md, "Warm-up"); crank's own default, 15 s, is
        // the floor; the measured duration is crank's default. The adaptive warm-up's JIT counts as quiet at 2 methods
        // or fewer in 3 s; 60 s caps it at three times the 20 s full YARP needed.
        B.Bind(Cli.Int("--duration", 15, "measured seconds per run (crank's default)", min: 1, helpName: "S"), (o, v) => o.Duration = v),
        B.Bind(Cli.Int("--warmup", 20, "warm-up seconds before each measured run (docs/methodology.md, \"Warm-up\": full YARP needed ~20 s); " +
            "for the .NET scenarios the minimum of an adaptive warm-up (--warmup-max)", helpName: "S"), (o, v) => o.Warmup = v),
        B.Bind(Cli.Int("--warmup-max", 60, ".NET scenarios: keep warming up after --warmup until the proxy's JIT is quiet (at most --warm-jit " +
            "methods compiled in 3 s), at most S seconds in all (three times what full YARP needed); a run that reaches S is flagged " +
            "(0 or <= --warmup: fixed warm-up)", helpName: "S"), (o, v) => o.WarmupMax = v),
        B.Bind(Cli.Int("--warm-jit", 2, "the JIT is quiet at N methods or fewer in 3 s"), (o, v) => o.WarmJit = v),
        B.Bind(Cli.Int("--connections", 64, "load connections (2-core box, see README; with --load h2load the default is this machine's " +
            "cores, the .NET lab's one connection per core)", min: 1, helpName: "C"), (o, v, given) => (o.Connections, o.ConnectionsGiven) = (v, given)),
        Cli.Refused("--threads", "--threads is ambiguous now: --load-threads T for wrk's threads, --proxy-threads N for the proxies'"),
        B.Bind(Cli.Int("--load-threads", 1, "wrk threads (benchmarks.yml's loadThreads; \"--threads\" was this before the proxies had a thread " +
            "count, and is refused so that an old command line cannot change meaning silently)", min: 1, helpName: "T"), (o, v) => o.LoadThreads = v),
        // 1 is what nginx and HAProxy always had here, and on the shared 2-core box (load, proxy and origin together)
        // there is no second core to give any proxy (benchmarks.yml's "threads").
        B.Bind(Cli.Int("--proxy-threads", 1, "every proxy's threads or processes (benchmarks.yml's threads): nginx worker_processes, HAProxy " +
            "nbthread, Caddy GOMAXPROCS, h2o num-threads, LLRP --engineThreads, DOTNET_PROCESSOR_COUNT for full YARP and HttpClientProxy " +
            "(crank/README.md, \"Equal threads\")", min: 1), (o, v) => o.ProxyThreads = v),
        B.Bind(Cli.Text("--path", "/", "request path, e.g. '/?s=1024' (/ws, Downstream's echo, with --load websocket)", "P", Cli.NonEmpty("--path")),
            (o, v, given) => (o.Path, o.PathGiven) = (v, given)),
        B.Bind(Cli.OptionalInt("--response-size", "the origin's body in bytes: path '/?s=N' (benchmarks.yml's responseSize; not with --path)"),
            (o, v) => o.ResponseSize = v?.ToString(CultureInfo.InvariantCulture) ?? ""),
        B.Bind(Cli.Int("--request-body-size", 0, "0 = GET; N = POST with an N-byte body (benchmarks.yml's requestBodySize)"), (o, v) => o.BodySize = v),
        B.Bind(Cli.Choice("--request-body-framing", "content-length", "the request body's framing (chunked: wrk only)", "content-length", "chunked"),
            (o, v) => o.BodyFraming = v),
        B.Bind(Cli.Choice("--headers", "plaintext", "request header preset (crank/Jobs/HeaderPresets.cs); handshake is plaintext with " +
            "\"Connection: close\": a new connection, and with https a full TLS handshake, for every request", "plaintext", "browser", "handshake", "none"),
            (o, v) => o.Headers = v),
        B.Bind(Cli.Choice("--server-scheme", "http", "https: the load speaks TLS to the proxy (benchmarks.yml's serverScheme)", "http", "https"),
            (o, v) => o.ServerScheme = v),
        B.Bind(Cli.Choice("--downstream-scheme", "http", "https: the proxy speaks TLS to the origin (downstreamScheme). Every proxy and origin " +
            "of the run presents one self-signed ECDSA P-256 certificate made for it (crank/tls-cert.sh, in the run's tls/ folder) and " +
            "trusts only it downstream", "http", "https"), (o, v) => o.DownstreamScheme = v),
        B.Bind(Cli.Choice("--load", "wrk", "wrk: closed loop (crank/wrk-job.sh); fixedrate: open loop at --rate requests/s (crank/fixedrate-job.sh; " +
            "fixed warm-up, no adaptive one); h2load: HTTP/2 from the load (crank/h2load-job.sh: closed loop, -c connections with --streams " +
            "streams each, open loop with --rate; no direct scenario: the origin speaks HTTP/1.1; refuses --headers handshake and chunked " +
            "bodies); websocket: WebSocket echo (crank/websocket-job.sh: --connections connections each sending one --message-size binary " +
            "message and waiting for its echo from Downstream's /ws; RPS is messages/s, CPU us/request the proxy's CPU per message; the " +
            $"scenarios whose proxy tunnels an upgrade: {string.Join(' ', Options.WebSocketScenarios)} (caddy only when named))",
            "wrk", "fixedrate", "h2load", "websocket"), (o, v) => o.Load = v),
        // 32: the websocket job's default, a small chat or ticker message.
        B.Bind(Cli.Int("--message-size", 32, $"websocket only: bytes of each message (at most {Options.MaxMessageSize}; benchmarks.yml's messageSize)"),
            (o, v, given) => (o.MessageSize, o.MessageSizeGiven) = (v, given)),
        B.Bind(Cli.OptionalInt("--rate", "fixedrate: offered requests/s over all connections (benchmarks.yml's rate); h2load: open loop at R", helpName: "R"),
            (o, v) => o.Rate = v?.ToString(CultureInfo.InvariantCulture) ?? ""),
        // 100 as in the .NET team's proxy lab (also Kestrel's and HAProxy's default limit of concurrent streams).
        B.Bind(Cli.Int("--streams", 100, "h2load only: concurrent streams per connection (benchmarks.yml's streams; the .NET lab's, with " +
            "--connections defaulting to the cores: crank/README.md, \"HTTP/2\")", min: 1), (o, v, given) => (o.Streams, o.StreamsGiven) = (v, given)),
        B.Bind(Cli.Text("--protocols", "", "what every proxy's listener speaks (benchmarks.yml's protocols): http1, h2 or http1,h2; on https ALPN " +
            "chooses, on http h2 is prior-knowledge h2c (http1,h2 needs https; h2 on http needs --load h2load). Default: nothing passed " +
            "(HTTP/1.1), except with --load h2load: http1,h2 on https, h2 on http. nginx, HAProxy, Caddy and h2o get PROTOCOLS, LLRP " +
            "--protocols, full YARP and HttpClientProxy Kestrel's EndpointDefaults:Protocols; the origin always gets HTTP/1.1", "P",
            Cli.NonEmpty("--protocols")), (o, v) => o.Protocols = v),
        B.Bind(Cli.Choice("--front-end", "", "LLRP's front end, passed to every LLRP scenario (benchmarks.yml's frontEnd; default: LLRP's own, raw)",
            "raw", "kestrel"), (o, v) => o.FrontEnd = v),
        B.Bind(Cli.Text("--json-dir", "", "where the JSON files go (default artifacts/crank/<date>-<time>)", "DIR", Cli.NonEmpty("--json-dir")),
            (o, v) => o.JsonDir = v),
        B.Bind(Cli.Flag("--pin-proxy", "taskset: the proxy alone on CPU 1, load generator and origin on CPU 0 (fallback only): the proxy " +
            "has a core of its own, as on a machine of its own in crank's three-machine profile"), (o, v) => SetPin(o, v, "proxy")),
        B.Bind(Cli.Flag("--pin", "taskset: load generator on CPU 0, proxy and origin on CPU 1 (fallback only)"), (o, v) => SetPin(o, v, "load")),
        B.Bind(Cli.Choice("--origin", "", "nginx (crank/nginx/origin.conf; fallback only): about two thirds of Downstream's CPU per " +
            "request, so that with --pin-proxy the proxy is the bottleneck (docs/methodology.md, \"The origin\"); it answers GET / and " +
            "/?s=N for N in 0 10 1024 65536 (another --path gets Downstream unless --origin nginx is given); downstream: the Downstream " +
            "app, Kestrel, benchmarks.yml's job", "downstream", "nginx"), (o, v) => o.Origin = v),
        B.Bind(Cli.Flag("--shared", "the topology of the sittings before 2026-11-27 07:00: nothing pinned, Downstream as the origin (--pin, " +
            "--pin-proxy or --origin given as well still apply)"), (o, v) => o.Shared = v),
        B.Bind(Cli.Flag("--dry-run", "print the plan (scenarios, each round's order, topology, expected time) and exit 0; nothing is " +
            "installed, published or started"), (o, v) => o.DryRun = v),
        B.Bind(Cli.Flag("--own-sessions", "start each job in a session (and scheduler autogroup) of its own (fallback only; the default is " +
            "one session, as crank's agent: docs/methodology.md)"), (o, v) => o.OwnSessions = v),
        B.Bind(Cli.Flag("--pgo", "run the proxy with the \"pgo\" environment (benchmarks.yml profiles)"), (o, v) => o.Pgo = v ? "pgo" : ""),
        B.Bind(Cli.Flag("--nopgo", "run the proxy with the \"nopgo\" environment (not with --pgo)"),
            (o, v) => o.Pgo = !v ? o.Pgo : o.Pgo.Length == 0 ? "nopgo" : throw new UsageException("--pgo and --nopgo exclude each other")),
        B.Bind(Cli.Many("--app-env", "extra environment variable for the proxy, e.g. shareClients=true (repeatable)", "K=V"),
            (o, v) => o.AppEnv.AddRange(v.Select(e => e.Contains('=') ? e : throw new UsageException("--app-env needs K=V")))),
        B.Bind(Cli.Int("--proxy-port", 8080, "the proxy's port", helpName: "P"), (o, v) => o.ProxyPort = v),
        B.Bind(Cli.Int("--downstream-port", 8081, "the origin's port", helpName: "P"), (o, v) => o.DownstreamPort = v),
        // The steadiness criterion (docs/methodology.md, "The steadiness check"). 15 %: nginx, HAProxy and direct (no JIT)
        // had halves within 15 % in 16 of 18 runs of the 2026-11-23 sitting on the shared 2-core box, within 10 % in 14; a
        // variant still replacing tier-0 code differs by 15-50 %. 5 % of the window's CPU time spent compiling: what the
        // JIT costs then cannot move CPU us/request by more than 5 %, a third of the halves' tolerance, while a proxy
        // still tiering its request path spends 18 % there (llrp-httpclient's first 10 s of load). What still compiles
        // after 25 s is timer-driven code, not the request path, and the compile time is wall time that a busy box
        // stretches: in the sitting of 2026-11-24 that put 1-4.4 % into windows whose halves agreed
        // (analysis/results/20261126-0138-late-jit). 2 retries: with about one run in eight noisy on that box, three
        // noisy attempts in a row are rare (~0.2 %).
        B.Bind(Cli.Int("--steady-tolerance", 15, "largest change of the proxy's CPU us/request between the two halves of the measured " +
            "window for a run to count as steady, in percent", helpName: "P"), (o, v) => o.SteadyTolerance = v),
        B.Bind(Cli.Text("--steady-jit-share", "5", "largest share of a .NET proxy's CPU time in the measured window that its JIT may spend " +
            "compiling for the run to count as steady, in percent", "P",
            v => NumberPattern().IsMatch(v) ? null : $"--steady-jit-share needs a number such as 1 or 0.5, got '{v}'"), (o, v) => o.SteadyJitShare = v),
        B.Bind(Cli.Int("--steady-retries", 2, "run an unsteady run again, at most N more times; every attempt is logged and counted, the " +
            "last one is kept"), (o, v) => o.SteadyRetries = v),
        B.Bind(Cli.Flag("--fallback", "do not use crank even if it is installed"), (o, v) => o.UseCrank = !v),
        B.Bind(Cli.Flag("--no-install", "never call apt-get"), (o, v) => o.Install = !v),
        B.Bind(Cli.Flag("--no-report", "do not write report.md and the charts at the end"), (o, v) => o.Report = !v),
        B.Bind(Cli.Many("--variable", "a benchmarks.yml variable (passed on to crank): serverAddress, serverListenAddress, downstreamAddress, " +
            "downstreamListenAddress (default 127.0.0.1 / the target), maxErrors (default 0: a run with more bad responses + socket errors " +
            "fails)", "NAME=VALUE"), (o, v) => Array.ForEach(v, e => Variable(o, e))),
        B.Bind(Cli.Text("--agents", "", "crank across three machines' agents with --profile multimachine; serverAddress and downstreamAddress " +
            "have no default then", "load=URL,application=URL,downstream=URL"), (o, v, given) => Roles(o.Agents, "--agents", v, given)),
        B.Bind(Cli.Text("--netns", "", "the fallback across network namespaces (crank/hosts.sh): each role's processes run in its namespace; " +
            "the addresses have no default either", "load=NS,application=NS,downstream=NS"), (o, v, given) => Roles(o.Netns, "--netns", v, given)));

    private static void SetPin(Options o, bool given, string pin)
    {
        if (given)
        {
            o.Pin = o.Pin.Length == 0 ? pin : throw new UsageException("--pin and --pin-proxy exclude each other");
        }
    }

    private static void Variable(Options o, string value)
    {
        var eq = value.IndexOf('=');
        if (eq < 0)
        {
            throw new UsageException("--variable needs NAME=VALUE");
        }
        var (name, v) = (value[..eq], value[(eq + 1)..]);
        switch (name)
        {
            case "serverAddress" or "serverListenAddress" or "downstreamAddress" or "downstreamListenAddress":
                break;
            case "maxErrors" when v.Length > 0 && v.All(char.IsAsciiDigit):
                break;
            case "maxErrors":
                throw new UsageException($"--variable maxErrors needs a whole number, got '{v}'");
            default:
                throw new UsageException($"--variable {name}: only serverAddress, serverListenAddress, downstreamAddress, downstreamListenAddress and maxErrors");
        }
        o.GivenVariables[name] = v;
    }

    private static void Roles(Dictionary<string, string> into, string option, string value, bool given)
    {
        if (!given)
        {
            return;
        }
        if (value.Length == 0)
        {
            throw new UsageException($"{option} needs load=...,application=...,downstream=...");
        }
        foreach (var kv in value.Split(','))
        {
            var eq = kv.IndexOf('=');
            var role = eq < 0 ? kv : kv[..eq];
            if (role is not ("load" or "application" or "downstream"))
            {
                throw new UsageException($"{option}: unknown role '{role}' (load, application, downstream)");
            }
            if (eq < 0 || eq == kv.Length - 1)
            {
                throw new UsageException($"{option}: '{kv}' needs ROLE=VALUE");
            }
            into[role] = kv[(eq + 1)..];
        }
    }

    /// <summary>Parses and checks a run-local command line (<see cref="Options.Help"/>: --help was asked for).</summary>
    public static Options Parse(IReadOnlyList<string> args)
    {
        var o = new Options();
        if (Cli.Parse(Command, args) is not { } parsed)
        {
            o.Help = true;
            return o;
        }
        B.Apply(o, parsed);
        foreach (var a in parsed.GetValue(ScenarioArgument) ?? [])
        {
            o.Scenarios.Add(Options.AllScenarios.Contains(a) || Options.NamedScenarios.Contains(a) ? a
                : throw new UsageException($"unknown scenario '{a}' ({string.Join(' ', Options.AllScenarios.Concat(Options.NamedScenarios))})"));
        }
        Check(o);
        return o;
    }

    private static void Check(Options o)
    {
        // h2load's connections default to the load machine's cores (Plan), so its threads are checked there.
        Require(o.Load == "h2load" || o.LoadThreads <= o.Connections, "wrk needs connections >= threads");
        Require(o.Path.StartsWith('/'), "--path must start with /");
        if (o.Load == "websocket")
        {
            // Messages, not requests: the HTTP request options have no meaning, and only Downstream has the echo.
            Require(o.ResponseSize.Length == 0 && o.BodySize == 0,
                "--load websocket sends messages, not requests: --message-size N sets their size (not --response-size or --request-body-size)");
            Require(o.Headers == "plaintext", "--headers is for the HTTP loads: --load websocket sends the WebSocket handshake's fields only");
            Require(o.Origin != "nginx", "--load websocket needs the Downstream origin (its /ws echo): --origin nginx has none");
            Require(o.MessageSize <= Options.MaxMessageSize, $"--message-size must be 0 to {Options.MaxMessageSize} bytes");
            if (!o.PathGiven)
            {
                o.Path = "/ws";
            }
        }
        else
        {
            Require(!o.MessageSizeGiven, "--message-size is for --load websocket");
        }
        if (o.ResponseSize.Length > 0)
        {
            Require(o.Path == "/", "--response-size and --path exclude each other (--response-size N is --path '/?s=N')");
            o.Path = "/?s=" + o.ResponseSize;
        }
        Require(o.BodySize == 0 || o.Origin != "nginx",
            "--request-body-size needs the Downstream origin: --origin nginx answers GET and HEAD only (crank/nginx/origin.conf)");
        if (o.Load == "fixedrate")
        {
            Require(o.Rate.Length > 0 && int.Parse(o.Rate, CultureInfo.InvariantCulture) >= 1, "--load fixedrate needs --rate R (requests/s, >= 1)");
            Require(o.BodySize == 0 || o.BodyFraming == "content-length",
                "--load fixedrate sends bodies with Content-Length only (h2load); chunked is wrk's");
        }
        else if (o.Load == "h2load")
        {
            Require(o.Headers != "handshake", "--headers handshake (Connection: close) has no HTTP/2 meaning; --load h2load refuses it");
            Require(o.BodySize == 0 || o.BodyFraming == "content-length", "--load h2load sends bodies in DATA frames; chunked framing is wrk's");
            Require(o.Rate.Length == 0 || int.Parse(o.Rate, CultureInfo.InvariantCulture) >= 1, "--rate must be >= 1");
        }
        else
        {
            Require(o.Rate.Length == 0, "--rate is for --load fixedrate or h2load");
        }
        Require(o.Load == "h2load" || !o.StreamsGiven, "--streams is for --load h2load (wrk and the fixed-rate load speak HTTP/1.1)");
        o.Protocols = Protocols.Resolve(o.Load, o.ServerScheme, o.Protocols);
        o.ExplicitScenarios = o.Scenarios.Count > 0;
        if (!o.ExplicitScenarios)
        {
            o.Scenarios.AddRange(Options.AllScenarios);
        }
        if (o.Load == "websocket" && o.Scenarios.FirstOrDefault(s => !Options.WebSocketScenarios.Contains(s)) is { } untunneled)
        {
            // A named scenario that cannot tunnel is refused; the defaults lose those quietly (as h2load's lose direct).
            Require(!o.ExplicitScenarios,
                $"--load websocket has no {untunneled} scenario: its proxy does not tunnel an upgrade (runs: {string.Join(' ', Options.WebSocketScenarios)})");
            o.Scenarios.RemoveAll(s => !Options.WebSocketScenarios.Contains(s));
        }
        if (o.Load == "h2load" && o.Scenarios.Contains("direct"))
        {
            // direct would send h2 to the origin, which speaks HTTP/1.1 here.
            Require(!o.ExplicitScenarios, "--load h2load has no direct scenario: the origin speaks HTTP/1.1");
            o.Scenarios.Remove("direct");
        }
        if (o.Agents.Count > 0 && o.Netns.Count > 0)
        {
            throw new UsageException("--agents (crank) and --netns (fallback) exclude each other", seeHelp: false);
        }
        foreach (var role in new[] { "load", "application", "downstream" })
        {
            if (o.Agents.Count > 0 && !o.Agents.ContainsKey(role))
            {
                throw new UsageException($"--agents needs a URL for {role}", seeHelp: false);
            }
            if (o.Netns.Count > 0 && !o.Netns.ContainsKey(role))
            {
                throw new UsageException($"--netns needs a namespace for {role}", seeHelp: false);
            }
        }
        if (o.Agents.Count > 0 && !o.UseCrank)
        {
            throw new UsageException("--agents drives crank; it cannot be combined with --fallback", seeHelp: false);
        }
        if (o.Netns.Count > 0)
        {
            o.UseCrank = false;
        }
    }

    private static void Require(bool ok, string message)
    {
        if (!ok)
        {
            throw new UsageException(message);
        }
    }

    [GeneratedRegex(@"^[0-9]+(\.[0-9]+)?$")]
    private static partial Regex NumberPattern();
}
