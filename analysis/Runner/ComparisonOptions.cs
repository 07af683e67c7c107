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

/// <summary>What `crank/run-local.sh scaling|sweep|ab|ramp|comparisons` takes, with the documented defaults
/// (Help.Comparisons).</summary>
internal sealed class ComparisonOptions
{
    public static readonly string[] Every = ["scaling", "sweep", "ab", "ramp"];
    public static readonly string[] LlrpPolicies = ["ConnectionRoundRobin", "PowerOfTwoChoices", "FirstAlphabetical", "Random", "RoundRobin", "LeastRequests"];
    public static readonly string[] YarpPolicies = ["PowerOfTwoChoices", "FirstAlphabetical", "Random", "RoundRobin", "LeastRequests"];

    /// <summary>The first argument as given (scaling, sweep, ab, ramp or comparisons): the default results folder's suffix.</summary>
    public string What = "";
    public IReadOnlyList<string> Comparisons = [];
    // Warm-up 20 s: run-local's default (docs/methodology.md, "Warm-up"); ramp warms up at its first rate.
    public int Rounds = 1, Warmup = 20;
    /// <summary>--duration; null: each comparison's default (<see cref="DurationOf"/>).</summary>
    public int? Duration;
    public string Proxies = "", Policies = "", Replicas = "1,2,3,5", Connections = "";
    // scaling: the published YARP load-balancing comparison's 200 k6 virtual users; ab: the published Zuul vs nginx
    // comparison's 200 concurrent clients and 26 KB page; ramp: 4k to 32k req/s in 8 steps over 100 connections
    // (crank/ramp-job.sh says where the range comes from).
    public int ScalingConnections = 200, AbClients = 200, RampStart = 4000, RampStep = 4000, RampSteps = 8, RampConnections = 100;
    public string AbPath = "/?s=26624";
    // The same count for every proxy; 1 as run-local's default (benchmarks.yml's "threads" says why).
    public int ProxyThreads = 1;
    public int ProxyPort = 8080, DownstreamPort = 8081;
    public string JsonDir = "";
    public bool UseCrank = true, Install = true, Report = true, Help;
    public IReadOnlyList<int> ReplicaCounts = [];

    // Measured seconds per run when --duration is not given: crank's default 15 s; a ramp step 10 s (ramp-job.sh's -d).
    private const int DefaultDuration = 15, DefaultRampStep = 10;

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
                        runs.AddRange(ComparisonParser.Numbers(Connections.Length > 0 ? Connections : "10,50,100,200").Select(k => new ComparisonRun(c, p, "-", 1, k)));
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

    public static ComparisonOptions Parse(IReadOnlyList<string> args)
    {
        var o = new ComparisonOptions();
        if (args.Count == 0)
        {
            throw new UsageException("name a comparison: scaling, sweep, ab, ramp or comparisons");
        }
        switch (args[0])
        {
            case "scaling" or "sweep" or "ab" or "ramp":
                o.Comparisons = [args[0]];
                break;
            case "comparisons":
                o.Comparisons = ComparisonOptions.Every;
                break;
            case "-h" or "--help":
                o.Help = true;
                return o;
            default:
                throw new UsageException($"unknown comparison '{args[0]}' (scaling, sweep, ab, ramp, comparisons)");
        }
        o.What = args[0];
        for (var i = 1; i < args.Count; i++)
        {
            var a = args[i];
            string Next() => i + 1 < args.Count ? args[++i] : "";
            int Int() => AtLeastOne(a, Next());
            string List()
            {
                var v = Next();
                return ListPattern().IsMatch(v) ? v : throw new UsageException($"{a} needs comma-separated whole numbers, got '{v}'");
            }
            string NonEmpty(string what)
            {
                var v = Next();
                return v.Length > 0 ? v : throw new UsageException($"{a} needs {what}");
            }
            switch (a)
            {
                case "--rounds": o.Rounds = Int(); break;
                case "--warmup":
                    var w = Next();
                    o.Warmup = WholePattern().IsMatch(w) && int.TryParse(w, NumberStyles.None, CultureInfo.InvariantCulture, out var ws)
                        ? ws : throw new UsageException("--warmup needs a whole number");
                    break;
                case "--duration": o.Duration = Int(); break;
                case "--proxies": o.Proxies = NonEmpty("a list"); break;
                case "--policies": o.Policies = NonEmpty("a list"); break;
                case "--replicas": o.Replicas = List(); break;
                case "--connections": o.Connections = List(); break;
                case "--scaling-connections": o.ScalingConnections = Int(); break;
                case "--ab-clients": o.AbClients = Int(); break;
                case "--ab-path":
                    var path = Next();
                    o.AbPath = path.StartsWith('/') ? path : throw new UsageException("--ab-path must start with /");
                    break;
                case "--ramp-start": o.RampStart = Int(); break;
                case "--ramp-step": o.RampStep = Int(); break;
                case "--ramp-steps": o.RampSteps = Int(); break;
                case "--ramp-connections": o.RampConnections = Int(); break;
                case "--proxy-threads": o.ProxyThreads = Int(); break;
                case "--proxy-port": o.ProxyPort = Int(); break;
                case "--downstream-port": o.DownstreamPort = Int(); break;
                case "--json-dir": o.JsonDir = NonEmpty("a value"); break;
                case "--fallback": o.UseCrank = false; break;
                case "--no-install": o.Install = false; break;
                case "--no-report": o.Report = false; break;
                case "-h" or "--help": o.Help = true; return o;
                default: throw new UsageException($"unknown option {a}");
            }
        }
        Check(o);
        return o;
    }

    /// <summary>The "needs a whole number >= 1" rule of the counts, ports and rates.</summary>
    private static int AtLeastOne(string option, string value) =>
        WholePattern().IsMatch(value) && int.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out var n) && n >= 1
            ? n : throw new UsageException($"{option} needs a whole number >= 1, got '{value}'");

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

    [GeneratedRegex("^[0-9]+$")]
    private static partial Regex WholePattern();

    [GeneratedRegex("^[0-9]+(,[0-9]+)*$")]
    private static partial Regex ListPattern();
}
