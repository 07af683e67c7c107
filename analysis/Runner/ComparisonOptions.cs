using System.CommandLine;
using System.Globalization;
using System.Text.RegularExpressions;

namespace LLRP.Runner;

/// <summary>One run of a published comparison: the proxy (a benchmarks.yml scenario name), its load-balancing policy
/// ("-": the proxy's only one, round-robin), the Downstream replicas behind it and the load's connections.</summary>
internal sealed record ComparisonRun(string Comparison, string Proxy, string Policy, int Replicas, int Connections)
{
    /// <summary>The run's file name stem: &lt;comparison&gt;.&lt;proxy&gt;[.&lt;policy&gt;].n&lt;replicas&gt;.c&lt;connections&gt;.r&lt;round&gt;.</summary>
    public string Tag(int round) =>
        $"{Comparison}.{Proxy}{(Policy == "-" ? "" : "." + Policy)}.n{Replicas}.c{Connections}.r{round}";
}

/// <summary>What `crank/run-local.sh scaling|sweep|ab|ramp|comparisons` takes (ComparisonParser declares each option and
/// its default).</summary>
internal sealed class ComparisonOptions
{
    public static readonly string[] Every = ["scaling", "sweep", "ab", "ramp"];
    public static readonly string[] LlrpPolicies = ["ConnectionRoundRobin", "PowerOfTwoChoices", "FirstAlphabetical", "Random", "RoundRobin", "LeastRequests"];
    public static readonly string[] YarpPolicies = ["PowerOfTwoChoices", "FirstAlphabetical", "Random", "RoundRobin", "LeastRequests"];

    /// <summary>The first argument as given (scaling, sweep, ab, ramp or comparisons): the default results folder's suffix.</summary>
    public string What = "";
    public IReadOnlyList<string> Comparisons = [];
    public int Rounds, Warmup, ScalingConnections, AbClients, RampStart, RampStep, RampSteps, RampConnections, ProxyThreads, ProxyPort, DownstreamPort;
    /// <summary>--duration; null: each comparison's default (<see cref="DurationOf"/>).</summary>
    public int? Duration;
    public string Proxies = "", Policies = "", Replicas = "", Connections = "", AbPath = "", JsonDir = "";
    public bool UseCrank, Install, Report, Help;
    public IReadOnlyList<int> ReplicaCounts = [];

    // Measured seconds per run when --duration is not given: crank's default 15 s; a ramp step 10 s (ramp-job.sh's -d).
    internal const int DefaultDuration = 15, DefaultRampStep = 10;

    /// <summary>The measured seconds of one run of <paramref name="comparison"/> (ramp: of one step).</summary>
    public int DurationOf(string comparison) => Duration ?? (comparison == "ramp" ? DefaultRampStep : DefaultDuration);

    /// <summary>The proxies (scenario names) <paramref name="comparison"/> runs: --proxies, else its own list.</summary>
    public IReadOnlyList<string> ProxiesFor(string comparison) => ComparisonParser.Fields(Proxies.Length > 0 ? Proxies : comparison switch
    {
        "scaling" => "llrp-llhttp,yarp,nginx,haproxy",
        "sweep" => "llrp-llhttp,yarp,nginx,nginx-default,haproxy",
        "ab" => "direct,llrp-llhttp,yarp,nginx,haproxy",
        _ => "llrp-llhttp,nginx,haproxy",
    });

    /// <summary>The load-balancing policies scaling runs <paramref name="proxy"/> with ("-": the proxy's only one,
    /// round-robin): every one it has, or those of --policies it has (matched without regard to case).</summary>
    public IReadOnlyList<string> PoliciesFor(string proxy)
    {
        var all = proxy switch { "llrp-llhttp" => LlrpPolicies, "yarp" => YarpPolicies, _ => null };
        if (all is null)
        {
            return ["-"];
        }
        if (Policies.Length == 0)
        {
            return all;
        }
        List<string> kept = [];
        foreach (var wanted in ComparisonParser.Fields(Policies))
        {
            var found = all.Where(a => string.Equals(a, wanted, StringComparison.OrdinalIgnoreCase)).ToList();
            // Every policy must be one of LLRP's (it has them all); YARP runs the ones it has.
            if (found.Count == 0 && proxy == "llrp-llhttp")
            {
                throw new UsageException($"--policies: unknown policy '{wanted}' ({string.Join(' ', LlrpPolicies)})");
            }
            kept.AddRange(found);
        }
        return kept;
    }

    /// <summary>Every run of one round, in the order each round runs them: comparison by comparison, proxy by proxy
    /// (then policy by policy and replica count by replica count, or connection count by connection count).</summary>
    public IReadOnlyList<ComparisonRun> Runs()
    {
        List<ComparisonRun> runs = [];
        foreach (var c in Comparisons)
        {
            foreach (var p in ProxiesFor(c))
            {
                switch (c)
                {
                    case "scaling":
                        runs.AddRange(from pol in PoliciesFor(p) from n in ReplicaCounts select new ComparisonRun(c, p, pol, n, ScalingConnections));
                        break;
                    case "sweep":
                        runs.AddRange(ComparisonParser.Numbers(Connections).Select(k => new ComparisonRun(c, p, "-", 1, k)));
                        break;
                    case "ab":
                        runs.Add(new ComparisonRun(c, p, "-", 1, AbClients));
                        break;
                    default:
                        runs.Add(new ComparisonRun(c, p, "-", 1, RampConnections));
                        break;
                }
            }
        }
        return runs;
    }

    // Seconds a run costs beyond warm-up + measured time: start the replicas and the proxy, stop them, write the JSON
    // (more than run-local's 6 s, Plan.RunOverhead: up to five replicas start and stop).
    public const int RunOverhead = 8;

    /// <summary>The expected minutes of every round of <paramref name="runs"/> (a ramp run is its steps).</summary>
    public long ExpectedMinutes(IReadOnlyList<ComparisonRun> runs)
    {
        long expected = 0;
        foreach (var r in runs)
        {
            var d = DurationOf(r.Comparison);
            expected += Warmup + (r.Comparison == "ramp" ? (long)RampSteps * d : d) + RunOverhead;
        }
        return ((expected * Rounds) + 59) / 60;
    }
}

/// <summary>The comparisons' command line: every rule the bash crank/comparisons.sh had, in its order, and the same messages ("nothing to run" is found here, before the results folder is made).</summary>
internal static partial class ComparisonParser
{
    /// <summary>The comma-separated fields of <paramref name="list"/> as bash's <c>IFS=, read -a</c> splits them: a
    /// trailing comma ends the list, an empty field elsewhere is kept.</summary>
    public static List<string> Fields(string list)
    {
        if (list.Length == 0)
        {
            return [];
        }
        var fields = list.Split(',').ToList();
        if (fields.Count > 1 && fields[^1].Length == 0)
        {
            fields.RemoveAt(fields.Count - 1);
        }
        return fields;
    }

    public static List<int> Numbers(string list) => [.. Fields(list).Select(n => int.Parse(n, NumberStyles.None, CultureInfo.InvariantCulture))];

    private static readonly Binder<ComparisonOptions> B = new();

    private static readonly Argument<string> ComparisonArgument = new("COMPARISON")
    {
        Arity = ArgumentArity.ZeroOrOne,
        Description = "scaling | sweep | ab | ramp | comparisons (all four, in that order)",
    };

    private static Option<string> List(string name, string @default, string description) =>
        Cli.Text(name, @default, description, "LIST", v => ListPattern().IsMatch(v) ? null : $"{name} needs comma-separated whole numbers, got '{v}'");

    internal static readonly Command Command = Cli.Command("crank/run-local.sh", """
        The published comparisons (crank/README.md, "Comparisons"; also crank/runner.sh comparisons COMPARISON [options]).
        With crank (crank on PATH or in .tools/crank/, and an agent on http://127.0.0.1:5010) every run is
        "crank --config benchmarks.yml --scenario <comparison scenario> --profile local ..."; otherwise the same job
        scripts run directly. Writes <json-dir>/<comparison>.<proxy>[.<policy>].n<replicas>.c<connections>.r<round>.json
        (crank --json shape), comparisons.json (one row per run), comparisons.md with PNG charts, logs under logs/.
        Exit status: 0 every run succeeded, 1 a run failed, 2 bad usage.
        """,
        ComparisonArgument,
        B.Bind(Cli.Int("--rounds", 1, "interleaved rounds", min: 1), (o, v) => o.Rounds = v),
        // Warm-up 20 s: run-local's default (docs/methodology.md, "Warm-up"); ramp warms up at its first rate.
        B.Bind(Cli.Int("--warmup", 20, "unmeasured seconds before each measured run (as run-local.sh; ramp: at its first rate)", helpName: "S"),
            (o, v) => o.Warmup = v),
        B.Bind(Cli.OptionalInt("--duration", $"measured seconds per run (default {ComparisonOptions.DefaultDuration}); ramp: seconds per step (default {ComparisonOptions.DefaultRampStep})",
            min: 1, helpName: "S"), (o, v) => o.Duration = v),
        B.Bind(Cli.Text("--proxies", "", "comma-separated, from llrp-llhttp,yarp,nginx,nginx-default,haproxy,direct (default: the comparison's own list)",
            "LIST", Cli.NonEmpty("--proxies", "a list")), (o, v) => o.Proxies = v),
        B.Bind(Cli.Text("--policies", "", "scaling: load-balancing policies of llrp-llhttp and yarp (default: every one each has)", "LIST",
            Cli.NonEmpty("--policies", "a list")), (o, v) => o.Policies = v),
        B.Bind(List("--replicas", "1,2,3,5", "scaling: replica counts"), (o, v) => o.Replicas = v),
        B.Bind(List("--connections", "10,50,100,200", "sweep: connection counts"), (o, v) => o.Connections = v),
        // scaling: the published YARP load-balancing comparison's 200 k6 virtual users; ab: the published Zuul vs nginx
        // comparison's 200 concurrent clients and 26 KB page; ramp: 4k to 32k req/s in 8 steps over 100 connections
        // (crank/ramp-job.sh says where the range comes from).
        B.Bind(Cli.Int("--scaling-connections", 200, "scaling: wrk connections", min: 1), (o, v) => o.ScalingConnections = v),
        B.Bind(Cli.Int("--ab-clients", 200, "ab: concurrent clients", min: 1), (o, v) => o.AbClients = v),
        B.Bind(Cli.Text("--ab-path", "/?s=26624", "ab: the page", "P", v => v.StartsWith('/') ? null : "--ab-path must start with /"), (o, v) => o.AbPath = v),
        B.Bind(Cli.Int("--ramp-start", 4000, "ramp: the first rate (req/s)", min: 1, helpName: "R"), (o, v) => o.RampStart = v),
        B.Bind(Cli.Int("--ramp-step", 4000, "ramp: the rate added per step (req/s)", min: 1, helpName: "R"), (o, v) => o.RampStep = v),
        B.Bind(Cli.Int("--ramp-steps", 8, "ramp: steps", min: 1), (o, v) => o.RampSteps = v),
        B.Bind(Cli.Int("--ramp-connections", 100, "ramp: connections", min: 1, helpName: "C"), (o, v) => o.RampConnections = v),
        // The same count for every proxy; 1 as run-local's default (benchmarks.yml's "threads" says why).
        B.Bind(Cli.Int("--proxy-threads", 1, "every proxy's threads or processes (benchmarks.yml's \"threads\": crank/README.md, \"Equal threads\"): " +
            "nginx worker_processes, HAProxy nbthread, LLRP --engineThreads, YARP's DOTNET_PROCESSOR_COUNT", min: 1), (o, v) => o.ProxyThreads = v),
        B.Bind(Cli.Int("--proxy-port", 8080, "the proxy's port (the defaults run under flock /tmp/llrp-ports.lock)", min: 1, helpName: "P"),
            (o, v) => o.ProxyPort = v),
        B.Bind(Cli.Int("--downstream-port", 8081, "the first replica's port (replica i: P + i - 1)", min: 1, helpName: "P"), (o, v) => o.DownstreamPort = v),
        B.Bind(Cli.Text("--json-dir", "", "where results go (default artifacts/crank/<date>-<time>-<comparison>)", "DIR", Cli.NonEmpty("--json-dir")),
            (o, v) => o.JsonDir = v),
        B.Bind(Cli.Flag("--fallback", "never use crank, even if it is installed"), (o, v) => o.UseCrank = !v),
        B.Bind(Cli.Flag("--no-install", "never call apt-get"), (o, v) => o.Install = !v),
        B.Bind(Cli.Flag("--no-report", "do not write comparisons.md and the charts"), (o, v) => o.Report = !v));

    public static ComparisonOptions Parse(IReadOnlyList<string> args)
    {
        if (Cli.Parse(Command, args) is not { } parsed)
        {
            return new ComparisonOptions { Help = true };
        }
        var o = B.Apply(new ComparisonOptions(), parsed);
        o.What = parsed.GetValue(ComparisonArgument) ?? throw new UsageException("name a comparison: scaling, sweep, ab, ramp or comparisons");
        o.Comparisons = o.What switch
        {
            "scaling" or "sweep" or "ab" or "ramp" => [o.What],
            "comparisons" => ComparisonOptions.Every,
            _ => throw new UsageException($"unknown comparison '{o.What}' (scaling, sweep, ab, ramp, comparisons)"),
        };
        Check(o);
        return o;
    }

    private static void Check(ComparisonOptions o)
    {
        o.ReplicaCounts = Numbers(o.Replicas);
        foreach (var n in o.ReplicaCounts)
        {
            if (n is < 1 or > 5)
            {
                throw new UsageException($"--replicas: 1 to 5 replicas, got {n}");
            }
        }
        // Replica i listens on --downstream-port + i - 1: none of them may be the proxy's port.
        var last = o.DownstreamPort + o.ReplicaCounts.Append(1).Max() - 1;
        if (!(last < o.ProxyPort || o.DownstreamPort > o.ProxyPort))
        {
            throw new UsageException($"the replicas' ports {o.DownstreamPort}..{last} include the proxy's {o.ProxyPort}");
        }
        foreach (var c in o.Comparisons)
        {
            foreach (var p in o.ProxiesFor(c))
            {
                switch (p)
                {
                    case "llrp-llhttp" or "yarp" or "nginx" or "nginx-default" or "haproxy":
                        break;
                    // The origin itself: no replicas to balance (scaling), no proxy to ramp against (ramp).
                    case "direct":
                        if (c is not ("ab" or "sweep"))
                        {
                            throw new UsageException("--proxies: direct runs in the ab and sweep comparisons only");
                        }
                        break;
                    default:
                        throw new UsageException($"--proxies: unknown proxy '{p}' (llrp-llhttp, yarp, nginx, nginx-default, haproxy, direct)");
                }
            }
        }
        // Every named policy must be one of LLRP's, whichever proxies run.
        _ = o.PoliciesFor("llrp-llhttp");
        if (o.Runs().Count == 0)
        {
            throw new UsageException("nothing to run (check --proxies and --policies)");
        }
    }

    [GeneratedRegex("^[0-9]+(,[0-9]+)*$")]
    private static partial Regex ListPattern();
}
