namespace LLRP.Runner;

/// <summary>The peers: the proxies that are Debian servers, each run by a job of crank/Jobs (crank/NAME-job.sh), which
/// takes its settings from the environment (LISTEN_*, DOWNSTREAM_*, TLS_*, PROTOCOLS and its own thread count), as
/// opposed to the .NET proxies, which take arguments. nginx and HAProxy run by default; Caddy and h2o only when named
/// (Options.NamedScenarios), so that the default run and the published sittings keep their scenario set.</summary>
internal static class Peers
{
    /// <summary>One peer: its binary (the job's default), the Debian package that installs it, and the job's variable
    /// for benchmarks.yml's "threads".</summary>
    public sealed record Peer(string Name, string Binary, string Package, string ThreadsVariable, string VersionArgument);

    public static readonly Peer[] All =
    [
        new("nginx", "/usr/sbin/nginx", "nginx-light", "NGINX_WORKERS", "-v"),
        new("haproxy", "/usr/sbin/haproxy", "haproxy", "HAPROXY_THREADS", "-v"),
        new("caddy", "/usr/bin/caddy", "caddy", "CADDY_THREADS", "version"),
        new("h2o", "/usr/bin/h2o", "h2o", "H2O_THREADS", "-v"),
    ];

    /// <summary>The peer a scenario runs, or null (direct and the .NET proxies).</summary>
    public static Peer? Of(string scenario) => Array.Find(All, p => p.Name == scenario);

    public static bool Is(string scenario) => Of(scenario) is not null;

    /// <summary>The peer's version line for run.json and machine.txt, "none" when it is not installed.</summary>
    public static string Version(Peer p) => File.Exists(p.Binary)
        ? ProcessGroups.Run([p.Binary, p.VersionArgument], TimeSpan.FromSeconds(30)).Out.Split('\n')[0].Trim()
        : "none";
}
