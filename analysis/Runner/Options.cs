using System.Globalization;
using System.Text.RegularExpressions;

namespace LLRP.Runner;

/// <summary>Bad usage: one line on stderr, exit status 2. <see cref="SeeHelp"/> adds " (see --help)".</summary>
internal sealed class UsageException(string message, bool seeHelp = true) : Exception(message)
{
    public bool SeeHelp { get; } = seeHelp;
}

/// <summary>Everything run-local's command line sets, with its documented default (the reasons are in the help text
/// and below).</summary>
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

    // Warm-up: full YARP, the slowest .NET variant to reach tier-1 code, needed ~20 s of load on the shared 2-core box
    // before its CPU us/request stopped falling (docs/methodology.md, "Warm-up"); crank's own default, 15 s, is the
    // floor; the measured duration is crank's default.
    public int Rounds = 3, RoundOffset, Duration = 15, Warmup = 20, Connections = 64, LoadThreads = 1;
    // Every proxy gets the same thread/process count; 1 is what nginx and HAProxy always had here, and on the shared
    // 2-core box (load, proxy and origin together) there is no second core to give any proxy (benchmarks.yml's "threads").
    public int ProxyThreads = 1;
    public string Path = "/";
    public string ResponseSize = "";
    public int BodySize;
    public string BodyFraming = "content-length", Headers = "plaintext", Load = "wrk", Rate = "";
    public string ServerScheme = "http", DownstreamScheme = "http";
    // HTTP/2 (crank/README.md, "HTTP/2"): streams per h2load connection, 100 as in the .NET team's proxy lab (also
    // Kestrel's and HAProxy's default limit of concurrent streams); the proxies' protocols (Protocols.Resolve); LLRP's
    // front end (empty: LLRP's default, raw). ConnectionsGiven: h2load's default connections are the cores instead of 64.
    public int Streams = 100;
    public string Protocols = "", FrontEnd = "";
    public bool ConnectionsGiven, StreamsGiven;
    // WebSocket (crank/README.md, "WebSocket"): each message's bytes, 32 as the websocket job's default (a small chat or
    // ticker message); the path defaults to Downstream's echo, /ws, under --load websocket unless --path is given.
    public const int MaxMessageSize = 1024 * 1024;
    public int MessageSize = 32;
    public bool MessageSizeGiven, PathGiven;
    public string JsonDir = "", Pin = "", Origin = "", Pgo = "";
    public bool Shared, DryRun, OwnSessions, UseCrank = true, Install = true, Report = true;
    public int ProxyPort = 8080, DownstreamPort = 8081;
    // The steadiness criterion (docs/methodology.md, "The steadiness check"). 15 %: nginx, HAProxy and direct (no JIT)
    // had halves within 15 % in 16 of 18 runs of the 2026-11-23 sitting on the shared 2-core box, within 10 % in 14; a
    // variant still replacing tier-0 code differs by 15-50 %. 5 % of the window's CPU time spent compiling: what the JIT
    // costs then cannot move CPU us/request by more than 5 %, a third of the halves' tolerance, while a proxy still
    // tiering its request path spends 18 % there (llrp-httpclient's first 10 s of load). What still compiles after 25 s
    // is timer-driven code, not the request path, and the compile time is wall time that a busy box stretches: in the
    // sitting of 2026-11-24 that put 1-4.4 % into windows whose halves agreed (analysis/results/20261126-0138-late-jit).
    // 2 retries: with about one run in eight noisy on that box, three noisy attempts in a row are rare (~0.2 %).
    public int SteadyTolerance = 15, SteadyRetries = 2;
    public string SteadyJitShare = "5";
    // Adaptive warm-up of the .NET scenarios: the JIT counts as quiet at 2 methods or fewer in 3 s; 60 s caps it at
    // three times the 20 s the slowest variant (full YARP) needed on the shared 2-core box (docs/methodology.md, "Warm-up").
    public int WarmupMax = 60, WarmJit = 2;
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

/// <summary>run-local's options as a table: each entry names the option, whether it takes a value, and what it does
/// with it. A new option is one entry (and one help paragraph).</summary>
internal static partial class OptionParser
{
    private sealed record Spec(string Name, bool TakesValue, Action<Options, string, string> Apply);

    private static readonly Spec[] Table =
    [
        Int("--rounds", (o, v) => o.Rounds = v),
        Int("--round-offset", (o, v) => o.RoundOffset = v),
        Int("--duration", (o, v) => o.Duration = v),
        Int("--warmup", (o, v) => o.Warmup = v),
        Int("--connections", (o, v) => (o.Connections, o.ConnectionsGiven) = (v, true)),
        Int("--streams", (o, v) => (o.Streams, o.StreamsGiven) = (v, true)),
        Value("--protocols", (o, v) => o.Protocols = NonEmpty("--protocols", v)),
        Choice("--front-end", ["raw", "kestrel"], (o, v) => o.FrontEnd = v),
        Flag("--threads", _ => throw new UsageException(
            "--threads is ambiguous now: --load-threads T for wrk's threads, --proxy-threads N for the proxies'")),
        Int("--load-threads", (o, v) => o.LoadThreads = v),
        Int("--proxy-threads", (o, v) => o.ProxyThreads = v),
        Value("--path", (o, v) => (o.Path, o.PathGiven) = (NonEmpty("--path", v), true)),
        Value("--response-size", (o, v) => o.ResponseSize = WholeNumber("--response-size", v).ToString(CultureInfo.InvariantCulture)),
        Int("--request-body-size", (o, v) => o.BodySize = v),
        Choice("--request-body-framing", ["content-length", "chunked"], (o, v) => o.BodyFraming = v),
        Choice("--headers", ["plaintext", "browser", "handshake", "none"], (o, v) => o.Headers = v),
        Choice("--server-scheme", ["http", "https"], (o, v) => o.ServerScheme = v),
        Choice("--downstream-scheme", ["http", "https"], (o, v) => o.DownstreamScheme = v),
        Choice("--load", ["wrk", "fixedrate", "h2load", "websocket"], (o, v) => o.Load = v),
        Int("--message-size", (o, v) => (o.MessageSize, o.MessageSizeGiven) = (v, true)),
        Value("--rate", (o, v) => o.Rate = WholeNumber("--rate", v).ToString(CultureInfo.InvariantCulture)),
        Value("--json-dir", (o, v) => o.JsonDir = NonEmpty("--json-dir", v)),
        Int("--steady-tolerance", (o, v) => o.SteadyTolerance = v),
        Value("--steady-jit-share", (o, v) => o.SteadyJitShare = Number("--steady-jit-share", v)),
        Int("--steady-retries", (o, v) => o.SteadyRetries = v),
        Int("--warmup-max", (o, v) => o.WarmupMax = v),
        Int("--warm-jit", (o, v) => o.WarmJit = v),
        Flag("--no-report", o => o.Report = false),
        Flag("--pin", o => SetPin(o, "load")),
        Flag("--pin-proxy", o => SetPin(o, "proxy")),
        Choice("--origin", ["downstream", "nginx"], (o, v) => o.Origin = v),
        Flag("--shared", o => o.Shared = true),
        Flag("--dry-run", o => o.DryRun = true),
        Flag("--own-sessions", o => o.OwnSessions = true),
        Flag("--pgo", o => o.Pgo = "pgo"),
        Flag("--nopgo", o => o.Pgo = "nopgo"),
        Value("--app-env", (o, v) => o.AppEnv.Add(v.Contains('=') ? v : throw new UsageException("--app-env needs K=V"))),
        Int("--proxy-port", (o, v) => o.ProxyPort = v),
        Int("--downstream-port", (o, v) => o.DownstreamPort = v),
        Flag("--fallback", o => o.UseCrank = false),
        Flag("--no-install", o => o.Install = false),
        Value("--variable", Variable),
        Value("--agents", (o, v) => Roles(o.Agents, "--agents", v)),
        Value("--netns", (o, v) => Roles(o.Netns, "--netns", v)),
        Flag("-h", o => o.Help = true),
        Flag("--help", o => o.Help = true),
    ];

    /// <summary>Every option the table knows (the help text must describe each one).</summary>
    public static IEnumerable<string> Names => Table.Select(s => s.Name);

    private static Spec Flag(string name, Action<Options> apply) => new(name, false, (o, _, _) => apply(o));
    private static Spec Value(string name, Action<Options, string> apply) => new(name, true, (o, _, v) => apply(o, v));
    private static Spec Int(string name, Action<Options, int> apply) => new(name, true, (o, n, v) => apply(o, WholeNumber(n, v)));
    private static Spec Choice(string name, string[] allowed, Action<Options, string> apply) =>
        new(name, true, (o, n, v) => apply(o, allowed.Contains(v) ? v : throw new UsageException($"{n} must be {Words(allowed)}, not '{v}'")));

    /// <summary>"a, b or c".</summary>
    private static string Words(string[] w) => w.Length == 1 ? w[0] : string.Join(", ", w[..^1]) + " or " + w[^1];

    internal static int WholeNumber(string option, string value) =>
        WholeNumberPattern().IsMatch(value) && int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out var n)
            ? n : throw new UsageException($"{option} needs a whole number, got '{value}'");

    private static string Number(string option, string value) =>
        NumberPattern().IsMatch(value) ? value : throw new UsageException($"{option} needs a number such as 1 or 0.5, got '{value}'");

    private static string NonEmpty(string option, string value) =>
        value.Length > 0 ? value : throw new UsageException($"{option} needs a value");

    private static void SetPin(Options o, string pin)
    {
        if (o.Pin.Length > 0 && o.Pin != pin)
        {
            throw new UsageException("--pin and --pin-proxy exclude each other");
        }
        o.Pin = pin;
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
            case "maxErrors":
                WholeNumber("--variable maxErrors", v);
                break;
            default:
                throw new UsageException($"--variable {name}: only serverAddress, serverListenAddress, downstreamAddress, downstreamListenAddress and maxErrors");
        }
        o.GivenVariables[name] = v;
    }

    private static void Roles(Dictionary<string, string> into, string option, string value)
    {
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

    /// <summary>Parses and checks a run-local command line: every rule the bash runner had, in its order.</summary>
    public static Options Parse(IReadOnlyList<string> args)
    {
        var o = new Options();
        for (var i = 0; i < args.Count; i++)
        {
            var a = args[i];
            var spec = Array.Find(Table, s => s.Name == a);
            if (spec is not null)
            {
                var value = spec.TakesValue ? (i + 1 < args.Count ? args[++i] : "") : "";
                spec.Apply(o, a, value);
                if (o.Help)
                {
                    return o;
                }
            }
            else if (a.StartsWith('-'))
            {
                throw new UsageException($"unknown option {a}");
            }
            else if (Options.AllScenarios.Contains(a) || Options.NamedScenarios.Contains(a))
            {
                o.Scenarios.Add(a);
            }
            else
            {
                throw new UsageException($"unknown scenario '{a}' ({string.Join(' ', Options.AllScenarios.Concat(Options.NamedScenarios))})");
            }
        }
        Check(o);
        return o;
    }

    private static void Check(Options o)
    {
        if (o.Rounds < 1 || o.Duration < 1 || o.Connections < 1 || o.LoadThreads < 1 || o.ProxyThreads < 1)
        {
            throw new UsageException("rounds, duration, connections, load threads and proxy threads must be >= 1");
        }
        Require(o.Streams >= 1, "--streams must be >= 1");
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

    [GeneratedRegex("^[0-9]+$")]
    private static partial Regex WholeNumberPattern();

    [GeneratedRegex(@"^[0-9]+(\.[0-9]+)?$")]
    private static partial Regex NumberPattern();
}
