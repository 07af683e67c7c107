using System.Diagnostics;
using System.Text.RegularExpressions;

namespace LLRP.Jobs.Tests;

/// <summary>A folder for one run of the Caddy or h2o job: a stand-in server (it logs its arguments and the environment
/// the job gives it, copies the configuration it is handed, prints a version line and exits 0), dummy TLS files, and a
/// clean environment (PATH, HOME, TMPDIR, the stand-in as CADDY and H2O, READY_TIMEOUT=1) with the given assignments.
/// These jobs have no recorded bash runs (ServerJobTests' cases), so the checks are written out here.</summary>
internal sealed partial class PeerRun : IDisposable
{
    private const string StandIn = """
        #!/usr/bin/env bash
        set -euo pipefail
        out="${PEER_OUT:?}"
        echo "$*" >> "$out/calls"
        case "$1" in
          version) echo "v2.6.2"; exit 0 ;;
          -v) echo "h2o version 2.2.5"; echo "OpenSSL: stand-in"; exit 0 ;;
          -t|validate) exit "${PEER_CHECK_EXIT:-0}" ;;
        esac
        echo "$$" > "$out/pid"
        env | grep -E '^(LISTEN|DOWNSTREAM|CADDY|TLS|GOMAXPROCS|XDG)_?' | LC_ALL=C sort > "$out/env" || true
        [ "$1" != -c ] || cp "$2" "$out/config"
        exit 0
        """;

    public PeerRun(string job, params (string Name, string Value)[] assignments)
    {
        Job = job;
        Root = Directory.CreateTempSubdirectory("peer-job-test.").FullName;
        foreach (var d in new[] { "bin", "tmp", "out", "tls" })
        {
            Directory.CreateDirectory(Path.Combine(Root, d));
        }
        var server = Path.Combine(Root, "bin", "server");
        File.WriteAllText(server, StandIn.Replace("\r", "", StringComparison.Ordinal) + "\n");
        if (!OperatingSystem.IsWindows())
        {
            File.SetUnixFileMode(server, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        }
        File.WriteAllText(Path.Combine(Root, "tls", "cert.pem"), "CERT\n");
        File.WriteAllText(Path.Combine(Root, "tls", "key.pem"), "KEY\n");
        File.WriteAllText(Path.Combine(Root, "tls", "ca.pem"), "CA\n");
        Env["PATH"] = "/usr/bin:/bin";
        Env["HOME"] = Environment.GetEnvironmentVariable("HOME") ?? "/root";
        Env["TMPDIR"] = Path.Combine(Root, "tmp");
        Env["PEER_OUT"] = Path.Combine(Root, "out");
        Env["CADDY"] = server;
        Env["H2O"] = server;
        Env["READY_TIMEOUT"] = "1";
        foreach (var (name, value) in assignments)
        {
            Env[name] = value.Replace("{TLS}", Path.Combine(Root, "tls"), StringComparison.Ordinal);
        }
    }

    public string Job { get; }

    public string Root { get; }

    public Dictionary<string, string> Env { get; } = new(StringComparer.Ordinal);

    public ServerEnv ServerEnv => new(name => Env.TryGetValue(name, out var v) ? v : null);

    public string Tls(string file) => Path.Combine(Root, "tls", file);

    public string Saved(string file) => File.ReadAllText(Path.Combine(Root, "out", file));

    /// <summary>The job (the built Jobs.dll) to its end with this run's environment only: exit status, stdout, stderr.</summary>
    public async Task<(int Code, string Stdout, string Stderr)> RunAsync()
    {
        var host = Environment.ProcessPath is { } p && Path.GetFileNameWithoutExtension(p) == "dotnet" ? p : "dotnet";
        var info = new ProcessStartInfo(host) { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        info.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "Jobs.dll"));
        info.ArgumentList.Add(Job);
        info.Environment.Clear();
        foreach (var (name, value) in Env)
        {
            info.Environment[name] = value;
        }
        using var process = Process.Start(info)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        await ServerJobRunTests.Ended(process);
        return (process.ExitCode, await stdout, await stderr);
    }

    /// <summary>A real server binary's run with <paramref name="environment"/> on top of the test's: its exit status
    /// and what it printed.</summary>
    public static async Task<(int Code, string Output)> ToolAsync(string path, string[] args, IReadOnlyDictionary<string, string?> environment)
    {
        var info = new ProcessStartInfo(path, args) { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var (name, value) in environment)
        {
            info.Environment[name] = value;
        }
        using var p = Process.Start(info)!;
        var stdout = p.StandardOutput.ReadToEndAsync();
        var stderr = p.StandardError.ReadToEndAsync();
        await ServerJobRunTests.Ended(p);
        return (p.ExitCode, await stdout + await stderr);
    }

    public void Dispose() => Directory.Delete(Root, recursive: true);

    [GeneratedRegex(@"\{\$([A-Z0-9_]+)\}")]
    public static partial Regex CaddyVariable();
}

public class CaddyJobTests
{
    private static string Caddyfile => File.ReadAllText(Path.Combine(Tools.CrankDir, "caddy", "Caddyfile"));

    [Fact]
    public void Defaults_are_the_local_profile_s_one_thread_and_http1()
    {
        using var run = new PeerRun("caddy");
        var s = CaddyJob.Read(run.ServerEnv);
        Assert.Equal(("127.0.0.1", "8080", "127.0.0.1:8081", "1", "h1"), (s.ListenAddress, s.ListenPort, s.Upstreams, s.Threads, s.CaddyProtocols));
        var env = CaddyJob.ServerEnvironment(s, "/h");
        Assert.Equal("1", env["GOMAXPROCS"]);
        Assert.Equal("off", env["CADDY_TLS"]);
        Assert.Equal("off", env["CADDY_UPSTREAM_TLS"]);
        Assert.Equal("/h/config", env["XDG_CONFIG_HOME"]);
        Assert.Equal("/h/data", env["XDG_DATA_HOME"]);
    }

    [Theory]
    [InlineData(false, "h2", "h1 h2c")]
    [InlineData(false, "http1", "h1")]
    [InlineData(false, "", "h1")]
    [InlineData(true, "http1", "h1")]
    [InlineData(true, "h2", "h1 h2")]
    [InlineData(true, "http1,h2", "h1 h2")]
    public void Protocols_become_caddy_s_server_protocols(bool tls, string protocols, string expected)
    {
        using var run = new PeerRun("caddy", ("PROTOCOLS", protocols));
        if (tls)
        {
            run.Env["TLS_CERT"] = run.Tls("cert.pem");
            run.Env["TLS_KEY"] = run.Tls("key.pem");
        }
        var s = CaddyJob.Read(run.ServerEnv);
        Assert.Equal(expected, s.CaddyProtocols);
        Assert.Equal(tls ? "on" : "off", CaddyJob.ServerEnvironment(s, "/h")["CADDY_TLS"]);
    }

    [Fact]
    public void Replicas_threads_and_upstream_tls_reach_caddy()
    {
        using var run = new PeerRun("caddy", ("DOWNSTREAMS", "127.0.0.1:8081 127.0.0.1:8082"), ("CADDY_THREADS", "2"),
            ("DOWNSTREAM_TLS_CA", "{TLS}/ca.pem"));
        var env = CaddyJob.ServerEnvironment(CaddyJob.Read(run.ServerEnv), "/h");
        Assert.Equal("127.0.0.1:8081 127.0.0.1:8082", env["CADDY_UPSTREAMS"]);
        Assert.Equal("2", env["GOMAXPROCS"]);
        Assert.Equal("on", env["CADDY_UPSTREAM_TLS"]);
        Assert.Equal(run.Tls("ca.pem"), env["DOWNSTREAM_TLS_CA"]);
    }

    [Theory]
    [InlineData("CADDY_THREADS", "two", "CADDY_THREADS='two' is not a whole number")]
    [InlineData("CADDY_THREADS", "0", "CADDY_THREADS='0' is not a whole number >= 1")]
    [InlineData("PROTOCOLS", "http1,h2", ServerJob.CleartextHttp1H2)]
    [InlineData("PROTOCOLS", "h3", "PROTOCOLS='h3' is not http1, h2 or http1,h2")]
    [InlineData("DOWNSTREAMS", "a:1 b", "DOWNSTREAMS entry 'b' is not ADDRESS:PORT")]
    [InlineData("LISTEN_PORT", "", "LISTEN_PORT='' is not a whole number")]
    public void Bad_setting_is_one_line_and_exit_2(string name, string value, string message)
    {
        using var run = new PeerRun("caddy", (name, value));
        var e = Assert.Throws<JobFailure>(() => CaddyJob.Read(run.ServerEnv));
        Assert.Equal(JobFailure.Usage, e.ExitCode);
        Assert.Equal(message, e.Message);
    }

    [Fact]
    public void The_caddyfile_reads_every_variable_the_job_sets_and_no_other()
    {
        using var run = new PeerRun("caddy");
        var set = CaddyJob.ServerEnvironment(CaddyJob.Read(run.ServerEnv), "/h").Keys
            .Where(k => k is not ("GOMAXPROCS" or "XDG_CONFIG_HOME" or "XDG_DATA_HOME")).Order(StringComparer.Ordinal);
        var read = PeerRun.CaddyVariable().Matches(Caddyfile).Select(m => m.Groups[1].Value).Distinct().Order(StringComparer.Ordinal);
        Assert.Equal(set, read);
        // Both values of each switch have their snippet.
        foreach (var snippet in new[] { "tls-on", "tls-off", "upstream-tls-on", "upstream-tls-off" })
        {
            Assert.Contains($"({snippet}) {{", Caddyfile, StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task The_job_validates_then_runs_caddy_as_its_announced_child()
    {
        using var run = new PeerRun("caddy", ("TLS_CERT", "{TLS}/cert.pem"), ("TLS_KEY", "{TLS}/key.pem"), ("PROTOCOLS", "h2"));
        var (code, stdout, stderr) = await run.RunAsync();
        Assert.Equal(0, code);
        var config = $"--config {Tools.CrankDir}/caddy/Caddyfile --adapter caddyfile";
        Assert.Equal($"validate {config}\nversion\nrun {config}\n", run.Saved("calls"));
        Assert.Contains($"##ChildProcessId:{run.Saved("pid").Trim()}\n", stderr, StringComparison.Ordinal);
        Assert.Contains("caddy-job: Caddy v2.6.2, GOMAXPROCS 1, listening on 127.0.0.1:8080 (https, h2: protocols h1 h2), upstream 127.0.0.1:8081\n",
            stdout, StringComparison.Ordinal);
        var env = run.Saved("env");
        Assert.Contains("CADDY_PROTOCOLS=h1 h2\n", env, StringComparison.Ordinal);
        Assert.Contains("CADDY_TLS=on\n", env, StringComparison.Ordinal);
        Assert.Contains($"XDG_CONFIG_HOME={run.Root}/tmp/caddy-job.", env, StringComparison.Ordinal);
        // Caddy's folders were the run's, and are gone.
        Assert.Empty(Directory.GetFileSystemEntries(Path.Combine(run.Root, "tmp")));
    }

    [Fact]
    public async Task A_refused_configuration_is_the_job_s_exit_status()
    {
        using var run = new PeerRun("caddy", ("PEER_CHECK_EXIT", "1"));
        var (code, _, stderr) = await run.RunAsync();
        Assert.Equal(1, code);
        Assert.DoesNotContain("##ChildProcessId:", stderr, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Debian_s_caddy_accepts_the_caddyfile_for_h2c_and_for_tls()
    {
        // Only where Debian's caddy is installed (benchmarks.yml's agents, run-local.sh installs it); elsewhere there is
        // nothing to check it against.
        if (!File.Exists(CaddyJob.DefaultCaddy))
        {
            return;
        }
        var tls = Directory.CreateTempSubdirectory("caddy-validate.").FullName;
        try
        {
            Assert.Equal(0, Tools.Run(Path.Combine(Tools.CrankDir, "tls-cert.sh"), tls));
            foreach (var assignments in new[] { new[] { ("PROTOCOLS", "h2") }, [("PROTOCOLS", "http1,h2"), ("TLS_CERT", $"{tls}/cert.pem"), ("TLS_KEY", $"{tls}/key.pem"), ("DOWNSTREAM_TLS_CA", $"{tls}/ca.pem")] })
            {
                using var run = new PeerRun("caddy", assignments);
                run.Env.Remove("CADDY");
                var s = CaddyJob.Read(run.ServerEnv);
                var (code, output) = await PeerRun.ToolAsync(s.Caddy,
                    ["validate", "--config", Path.Combine(Tools.CrankDir, "caddy", "Caddyfile"), "--adapter", "caddyfile"],
                    CaddyJob.ServerEnvironment(s, run.Root));
                Assert.True(code == 0, $"caddy validate: {output}");
            }
        }
        finally
        {
            Directory.Delete(tls, recursive: true);
        }
    }
}

public class H2oJobTests
{
    private static string Template => File.ReadAllText(Path.Combine(Tools.CrankDir, "h2o", "h2o.conf"));

    /// <summary>The rendering's lines that are not comments (the template's comments name the marks).</summary>
    private static string[] Settings(string text) => [.. text.Split('\n').Where(l => !l.TrimStart().StartsWith('#'))];

    [Fact]
    public void Without_tls_the_marked_lines_go_and_every_token_is_filled()
    {
        using var run = new PeerRun("h2o", ("LISTEN_PORT", "9000"), ("DOWNSTREAM_ADDRESS", "10.1.2.3"), ("DOWNSTREAM_PORT", "9001"), ("H2O_THREADS", "2"));
        var text = H2oJob.Render(Template, H2oJob.Read(run.ServerEnv));
        Assert.DoesNotContain("ssl:", text, StringComparison.Ordinal);
        Assert.DoesNotContain("certificate-file", text, StringComparison.Ordinal);
        Assert.DoesNotContain(Settings(text), l => l.EndsWith(H2oJob.TlsMark, StringComparison.Ordinal) || Regex.IsMatch(l, "@[A-Z_]+@"));
        Assert.Contains("\nnum-threads: 2\n", text, StringComparison.Ordinal);
        Assert.Contains("  host: \"127.0.0.1\"\n  port: 9000\n", text, StringComparison.Ordinal);
        Assert.Contains("proxy.reverse.url: \"http://10.1.2.3:9001/\"\n", text, StringComparison.Ordinal);
    }

    [Fact]
    public void With_tls_the_marked_lines_stay_without_the_mark()
    {
        using var run = new PeerRun("h2o", ("TLS_CERT", "{TLS}/cert.pem"), ("TLS_KEY", "{TLS}/key.pem"));
        var text = H2oJob.Render(Template, H2oJob.Read(run.ServerEnv));
        Assert.Contains($"  ssl:\n    certificate-file: \"{run.Tls("cert.pem")}\"\n    key-file: \"{run.Tls("key.pem")}\"\n", text, StringComparison.Ordinal);
        Assert.Contains("    ocsp-update-interval: 0\n", text, StringComparison.Ordinal);
        Assert.DoesNotContain(Settings(text), l => l.EndsWith(H2oJob.TlsMark, StringComparison.Ordinal) || Regex.IsMatch(l, "@[A-Z_]+@"));
    }

    [Theory]
    [InlineData("H2O_THREADS", "two", "H2O_THREADS='two' is not a whole number")]
    [InlineData("H2O_THREADS", "0", "H2O_THREADS='0' is not a whole number >= 1")]
    [InlineData("PROTOCOLS", "http1,h2", ServerJob.CleartextHttp1H2)]
    [InlineData("DOWNSTREAMS", "a:1 b:2", "DOWNSTREAMS: h2o 2.2's proxy.reverse.url names one origin (no replicas)")]
    [InlineData("DOWNSTREAM_TLS_CA", "/ca.pem", "DOWNSTREAM_TLS_CA: not supported with h2o (it cannot verify the origin as \"localhost\")")]
    public void Bad_setting_is_one_line_and_exit_2(string name, string value, string message)
    {
        using var run = new PeerRun("h2o", (name, value));
        var e = Assert.Throws<JobFailure>(() => H2oJob.Read(run.ServerEnv));
        Assert.Equal(JobFailure.Usage, e.ExitCode);
        Assert.Equal(message, e.Message);
    }

    [Fact]
    public async Task The_job_checks_then_runs_h2o_on_its_rendering_and_removes_it()
    {
        using var run = new PeerRun("h2o", ("PROTOCOLS", "h2"));
        var (code, stdout, stderr) = await run.RunAsync();
        Assert.Equal(0, code);
        var conf = Regex.Match(run.Saved("calls"), @"^-t -c (\S+)\n").Groups[1].Value;
        Assert.StartsWith(Path.Combine(run.Root, "tmp", "h2o-job."), conf, StringComparison.Ordinal);
        Assert.Equal($"-t -c {conf}\n-v\n-c {conf}\n", run.Saved("calls"));
        Assert.Equal(H2oJob.Render(Template, H2oJob.Read(run.ServerEnv)), run.Saved("config"));
        Assert.Contains($"##ChildProcessId:{run.Saved("pid").Trim()}\n", stderr, StringComparison.Ordinal);
        Assert.Contains("h2o-job: h2o version 2.2.5, num-threads 1, listening on 127.0.0.1:8080 (http: HTTP/1.1 and h2c, PROTOCOLS h2)",
            stdout, StringComparison.Ordinal);
        Assert.False(File.Exists(conf));
    }

    [Fact]
    public async Task Debian_s_h2o_accepts_the_rendering()
    {
        // Only where Debian's h2o is installed (benchmarks.yml's agents, run-local.sh installs it). Without TLS: with it,
        // "h2o -t" loads the certificate, which the TLS run of the end-to-end check covers.
        if (!File.Exists(H2oJob.DefaultH2o))
        {
            return;
        }
        using var run = new PeerRun("h2o");
        run.Env.Remove("H2O");
        var conf = Path.Combine(run.Root, "h2o.conf");
        File.WriteAllText(conf, H2oJob.Render(Template, H2oJob.Read(run.ServerEnv)));
        var (code, output) = await PeerRun.ToolAsync(H2oJob.DefaultH2o, ["-t", "-c", conf], new Dictionary<string, string?>());
        Assert.True(code == 0, $"h2o -t: {output}");
    }
}
