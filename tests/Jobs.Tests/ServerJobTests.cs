using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.RegularExpressions;

namespace LLRP.Jobs.Tests;

/// <summary>One recorded case of the server jobs (data/server-jobs/cases.tsv): a job and the environment it ran with;
/// data/server-jobs/expected/NAME.txt is what the bash job (crank/nginx-job.sh, haproxy-job.sh before the port) did
/// with the stand-in server (data/server-jobs/stand-in.sh), as data/README.md says.</summary>
internal sealed record ServerCase(string Name, string Job, IReadOnlyList<KeyValuePair<string, string>> Assignments)
{
    public static string Data => Path.Combine(AppContext.BaseDirectory, "data", "server-jobs");

    public static IEnumerable<ServerCase> All() => File.ReadAllLines(Path.Combine(Data, "cases.tsv"))
        .Where(l => l.Length > 0)
        .Select(l => l.Split('\t'))
        .Select(f => new ServerCase(f[0], f[1], [.. f.Skip(2).Select(a => new KeyValuePair<string, string>(a[..a.IndexOf('=')], a[(a.IndexOf('=') + 1)..]))]));

    public static TheoryData<string> Names(string job) => [.. All().Where(c => c.Job == job).Select(c => c.Name)];

    public static ServerCase Named(string name) => All().Single(c => c.Name == name);

    public override string ToString() => Name;
}

/// <summary>A folder of one case's run: the stand-in binaries, dummy TLS files, the work and temp folders, and the
/// environment of the recording (a clean one: PATH, HOME, TMPDIR, the stand-in's variables, READY_TIMEOUT=1 and for
/// nginx JOB_WORK_DIR, then the case's own assignments).</summary>
internal sealed class CaseRun : IDisposable
{
    public CaseRun(ServerCase c, params (string Name, string Value)[] more)
    {
        Case = c;
        Root = Directory.CreateTempSubdirectory("server-job-test.").FullName;
        foreach (var d in new[] { "bin", "tmp", "out", "tls" })
        {
            Directory.CreateDirectory(Path.Combine(Root, d));
        }
        foreach (var name in new[] { "nginx", "haproxy" })
        {
            var path = Path.Combine(Root, "bin", name);
            File.Copy(Path.Combine(ServerCase.Data, "stand-in.sh"), path);
            if (!OperatingSystem.IsWindows())
            {
                File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
            }
        }
        File.WriteAllText(Path.Combine(Root, "tls", "cert.pem"), "CERT\n");
        File.WriteAllText(Path.Combine(Root, "tls", "key.pem"), "KEY\n");
        File.WriteAllText(Path.Combine(Root, "tls", "ca.pem"), "CA\n");
        Env["PATH"] = "/usr/bin:/bin";
        Env["HOME"] = Environment.GetEnvironmentVariable("HOME") ?? "/root";
        Env["TMPDIR"] = Path.Combine(Root, "tmp");
        Env["STAND_IN_OUT"] = Path.Combine(Root, "out");
        Env["NGINX"] = Path.Combine(Root, "bin", "nginx");
        Env["HAPROXY"] = Path.Combine(Root, "bin", "haproxy");
        Env["READY_TIMEOUT"] = "1";
        if (c.Job == "nginx")
        {
            Env["JOB_WORK_DIR"] = Path.Combine(Root, "job");
        }
        foreach (var (name, value) in c.Assignments)
        {
            Env[name] = value.Replace("{TLS}", Path.Combine(Root, "tls"), StringComparison.Ordinal)
                .Replace("{WORK}", Root, StringComparison.Ordinal);
        }
        foreach (var (name, value) in more)
        {
            Env[name] = value;
        }
    }

    public ServerCase Case { get; }

    public string Root { get; }

    public Dictionary<string, string> Env { get; } = new(StringComparer.Ordinal);

    public ServerEnv ServerEnv => new(name => Env.TryGetValue(name, out var v) ? v : null);

    public string Out(string file) => Path.Combine(Root, "out", file);

    /// <summary>The job (the built Jobs.dll) as a process of its own, with this run's environment only.</summary>
    public Process Start()
    {
        var host = Environment.ProcessPath is { } p && Path.GetFileNameWithoutExtension(p) == "dotnet" ? p : "dotnet";
        var info = new ProcessStartInfo(host)
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
        };
        info.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "Jobs.dll"));
        info.ArgumentList.Add(Case.Job);
        info.Environment.Clear();
        foreach (var (name, value) in Env)
        {
            info.Environment[name] = value;
        }
        return Process.Start(info)!;
    }

    /// <summary>Paths made comparable with the recording: this run's folder {WORK}, crank/ {CRANK}, the random part of
    /// HAProxy's temp config {RANDOM}.</summary>
    public string Normalize(string text) => HaproxyTemp().Replace(
        text.Replace(Root, "{WORK}", StringComparison.Ordinal).Replace(Tools.CrankDir, "{CRANK}", StringComparison.Ordinal),
        "haproxy-job.{RANDOM}.cfg");

    public void Dispose() => Directory.Delete(Root, recursive: true);

    private static Regex HaproxyTemp() => new(@"haproxy-job\.[A-Za-z0-9]*\.cfg");
}

/// <summary>The recorded report of a case, in sections ("exit: N", then "--- calls", "--- stdout", "--- stderr",
/// "--- env", "--- config", "--- bodies", each present when the run made it).</summary>
internal static class Report
{
    /// <summary>The lines the ready probe prints (they depend on what else listens on the port) and the child's PID
    /// line (checked on its own) are left out, as in the recording.</summary>
    public static string Section(string name, string text)
    {
        var lines = text.Length == 0 ? [] : text.Split('\n');
        var kept = (text.EndsWith('\n') ? lines[..^1] : lines)
            .Where(l => !(l.Contains(": ready on ", StringComparison.Ordinal)
                || l.Contains(": nothing listening on ", StringComparison.Ordinal) || l.StartsWith("##ChildProcessId:", StringComparison.Ordinal)));
        var b = new StringBuilder($"--- {name}\n");
        foreach (var l in kept)
        {
            b.Append(l).Append('\n');
        }
        return b.ToString();
    }

    /// <summary>The report's sections by name ("exit" holds the first line).</summary>
    public static Dictionary<string, string> Sections(string report)
    {
        var result = new Dictionary<string, string>(StringComparer.Ordinal);
        var name = "exit";
        var b = new StringBuilder();
        var lines = report.Split('\n');
        foreach (var line in report.EndsWith('\n') ? lines[..^1] : lines)
        {
            if (line.StartsWith("--- ", StringComparison.Ordinal))
            {
                result[name] = b.ToString();
                (name, b) = (line[4..], new StringBuilder());
            }
            else
            {
                b.Append(line).Append('\n');
            }
        }
        result[name] = b.ToString();
        return result;
    }
}

/// <summary>The C# jobs against the bash jobs' recorded runs: every case of data/server-jobs/cases.tsv runs the built
/// job with the stand-in server and must print, exit and call the server as the bash job did, and the configuration
/// it hands the server must be the rendering of the current template.</summary>
public abstract class ServerJobRunTests(string job)
{
    protected async Task Same_as_the_bash_job(string name)
    {
        var c = ServerCase.Named(name);
        Assert.Equal(job, c.Job);
        using var run = new CaseRun(c);
        using var p = run.Start();
        var stdoutRead = p.StandardOutput.ReadToEndAsync();
        var stderrRead = p.StandardError.ReadToEndAsync();
        await Ended(p);
        var (stdout, stderr) = (await stdoutRead, await stderrRead);

        var report = new StringBuilder($"exit: {p.ExitCode}\n");
        void Add(string section, string? text)
        {
            if (text is not null)
            {
                report.Append(Report.Section(section, text));
            }
        }
        string? Saved(string file) => File.Exists(run.Out(file)) ? File.ReadAllText(run.Out(file)) : null;
        Add("calls", Saved("calls"));
        Add("stdout", stdout);
        Add("stderr", stderr);
        Add("env", Saved("env"));
        Add("config", Saved("config"));
        Add("bodies", Saved("bodies"));
        var actual = Report.Sections(run.Normalize(report.ToString()));
        var expected = Report.Sections(File.ReadAllText(Path.Combine(ServerCase.Data, "expected", $"{name}.txt")));

        // The configuration as the bash job rendered its template of then: RenderingTests. Here: the job hands the server
        // what its rendering of the current template gives.
        Assert.Equal(expected.ContainsKey("config"), actual.ContainsKey("config"));
        if (Saved("config") is { } config)
        {
            Assert.Equal(ServerJobRendering.Render(run, Tools.CrankDir), config);
            expected.Remove("config");
            actual.Remove("config");
        }
        Assert.Equal(expected, actual);

        // The server the job started is the child it announced (the runner and crank measure that PID).
        if (Saved("pid") is { } pid)
        {
            Assert.Contains($"##ChildProcessId:{pid.Trim()}\n", stderr, StringComparison.Ordinal);
        }
        else
        {
            Assert.DoesNotContain("##ChildProcessId:", stderr, StringComparison.Ordinal);
        }
    }

    /// <summary>Until <paramref name="p"/> exits; a failure after 2 minutes (a job that hangs).</summary>
    internal static async Task Ended(Process p)
    {
        using var limit = new CancellationTokenSource(TimeSpan.FromMinutes(2));
        await p.WaitForExitAsync(limit.Token);
    }

    /// <summary>Runs the case's job to its end, its output read; its stdout.</summary>
    internal static async Task<string> RunToEnd(CaseRun run)
    {
        using var p = run.Start();
        var stdout = p.StandardOutput.ReadToEndAsync();
        var stderr = p.StandardError.ReadToEndAsync();
        await Ended(p);
        await stderr;
        Assert.Equal(0, p.ExitCode);
        return await stdout;
    }
}

public sealed class NginxJobRunTests() : ServerJobRunTests("nginx")
{
    public static TheoryData<string> Cases => ServerCase.Names("nginx");

    [Theory]
    [MemberData(nameof(Cases))]
    public Task Same_as_the_bash_job_for(string name) => Same_as_the_bash_job(name);

    [Fact]
    public async Task Temp_work_folder_is_removed_when_nginx_exits()
    {
        using var run = new CaseRun(ServerCase.Named("nginx-default"));
        run.Env.Remove("JOB_WORK_DIR");
        var stdout = await RunToEnd(run);
        var conf = Regex.Match(stdout, @"config (\S+)/nginx\.conf").Groups[1].Value;
        Assert.StartsWith(Path.Combine(run.Root, "tmp", "nginx-job."), conf, StringComparison.Ordinal);
        Assert.False(Directory.Exists(conf));
        Assert.Contains($"-p {conf}/ -c {conf}/nginx.conf -e stderr", File.ReadAllText(run.Out("calls")), StringComparison.Ordinal);
    }
}

public sealed class HaproxyJobRunTests() : ServerJobRunTests("haproxy")
{
    public static TheoryData<string> Cases => ServerCase.Names("haproxy");

    [Theory]
    [MemberData(nameof(Cases))]
    public Task Same_as_the_bash_job_for(string name) => Same_as_the_bash_job(name);

    [Fact]
    public async Task Certificate_and_key_are_joined_for_haproxy()
    {
        using var run = new CaseRun(ServerCase.Named("haproxy-tls"));
        await RunToEnd(run);
        Assert.Equal("CERT\nKEY\n", File.ReadAllText(Path.Combine(run.Root, "tls", "cert.pem.haproxy.pem")));
        Assert.Empty(Directory.GetFiles(Path.Combine(run.Root, "tmp")));
    }

    [Fact]
    public async Task Temp_config_of_the_replicas_is_removed_when_haproxy_exits()
    {
        using var run = new CaseRun(ServerCase.Named("haproxy-replicas"));
        await RunToEnd(run);
        Assert.Contains("/tmp/haproxy-job.", File.ReadAllText(run.Out("calls")), StringComparison.Ordinal);
        Assert.Empty(Directory.GetFiles(Path.Combine(run.Root, "tmp")));
    }

    [Fact]
    public async Task A_stray_block_variable_does_not_reach_haproxy()
    {
        using var run = new CaseRun(ServerCase.Named("haproxy-default"), ("HAPROXY_H2C", "1"), ("HAPROXY_TLS_CRT", "/x.pem"));
        await RunToEnd(run);
        Assert.DoesNotContain("HAPROXY_H2C", File.ReadAllText(run.Out("env")), StringComparison.Ordinal);
        Assert.DoesNotContain("HAPROXY_TLS_CRT", File.ReadAllText(run.Out("env")), StringComparison.Ordinal);
    }
}

/// <summary>The rendering of the templates as they were when the bash jobs were recorded (data/server-jobs/templates)
/// against the configurations the bash jobs handed the server.</summary>
public class ServerJobRendering
{
    /// <summary>The configuration the job gives the server for <paramref name="run"/>'s case, from the templates under
    /// <paramref name="crankDir"/>.</summary>
    internal static string Render(CaseRun run, string crankDir)
    {
        if (run.Case.Job == "nginx")
        {
            var s = NginxJob.Read(run.ServerEnv, Tools.CrankDir);
            return NginxJob.Render(File.ReadAllText(Path.Combine(crankDir, "nginx", s.ConfigName)), s, s.WorkDir!);
        }
        var h = HaproxyJob.Read(run.ServerEnv);
        var template = File.ReadAllText(Path.Combine(crankDir, "haproxy", "haproxy.cfg"));
        return h.Replicas is null ? template : HaproxyJob.Render(template, h.Replicas);
    }

    public static TheoryData<string> Rendered => [.. ServerCase.All()
        .Where(c => File.ReadAllText(Path.Combine(ServerCase.Data, "expected", $"{c.Name}.txt")).Contains("--- config\n", StringComparison.Ordinal))
        .Select(c => c.Name)];

    [Theory]
    [MemberData(nameof(Rendered))]
    public void Config_is_the_bash_job_s(string name)
    {
        using var run = new CaseRun(ServerCase.Named(name));
        var expected = Report.Sections(File.ReadAllText(Path.Combine(ServerCase.Data, "expected", $"{name}.txt")))["config"];
        Assert.Equal(expected, run.Normalize(Render(run, Path.Combine(ServerCase.Data, "templates"))));
    }

    [Fact]
    public void Haproxy_environment_chooses_the_blocks()
    {
        using var run = new CaseRun(ServerCase.Named("haproxy-h2c"));
        var env = HaproxyJob.ServerEnvironment(HaproxyJob.Read(run.ServerEnv));
        Assert.Equal("1", env["HAPROXY_H2C"]);
        Assert.Equal("h2", env["HAPROXY_ALPN"]);
        Assert.Null(env["HAPROXY_TLS_CRT"]);
        Assert.Null(env["HAPROXY_DOWNSTREAM_CA"]);
    }

    [Fact]
    public void Nginx_origin_bodies_are_x_bytes_of_each_size()
    {
        var dir = Directory.CreateTempSubdirectory("bodies-test.").FullName;
        try
        {
            NginxJob.WriteBodies(dir, [0, 10, 70000]);
            Assert.Equal(0, new FileInfo(Path.Combine(dir, "bodies", "s0")).Length);
            Assert.Equal("xxxxxxxxxx", File.ReadAllText(Path.Combine(dir, "bodies", "s10")));
            Assert.Equal(new string('x', 70000), File.ReadAllText(Path.Combine(dir, "bodies", "s70000")));
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }
}

/// <summary>Settings the bash jobs refused: one line naming the variable, exit 2 (the recorded runs check the exact
/// lines; these check the error type the job's Program turns into them).</summary>
public class ServerJobSettingsTests
{
    [Theory]
    [InlineData("nginx-err-workers", "NGINX_WORKERS='0' is not a whole number >= 1")]
    [InlineData("nginx-err-listen-port-empty", "LISTEN_PORT='' is not a port number")]
    [InlineData("nginx-err-h2-template", "PROTOCOLS=h2: nginx-default.conf speaks HTTP/1.1 only (nginx.conf takes h2)")]
    [InlineData("nginx-err-sizes", "ORIGIN_BODY_SIZES entry '1k' is not a whole number")]
    [InlineData("haproxy-err-threads", "HAPROXY_THREADS='two' is not a whole number")]
    [InlineData("haproxy-err-h2-cleartext", ServerJob.CleartextHttp1H2)]
    [InlineData("haproxy-err-replicas", "DOWNSTREAMS entry 'b' is not ADDRESS:PORT")]
    public void Bad_setting_is_one_line_and_exit_2(string name, string message)
    {
        using var run = new CaseRun(ServerCase.Named(name));
        var e = Assert.Throws<JobFailure>(() => Read(run));
        Assert.Equal(JobFailure.Usage, e.ExitCode);
        Assert.Equal(message, e.Message);
        Assert.DoesNotContain('\n', e.Message);
    }

    [Fact]
    public void Address_rules_break_report_their_own_line_and_exit_2()
    {
        using var run = new CaseRun(ServerCase.Named("nginx-err-downstream-wildcard"));
        var e = Assert.Throws<JobFailure>(() => Read(run));
        Assert.Equal(JobFailure.Usage, e.ExitCode);
        Assert.Equal("", e.Message);
    }

    [Theory]
    [InlineData("nginx")]
    [InlineData("haproxy")]
    public void Ready_timeout_must_be_whole_seconds(string job)
    {
        using var run = new CaseRun(ServerCase.Named($"{job}-default"), ("READY_TIMEOUT", "soon"));
        var e = Assert.Throws<JobFailure>(() => Read(run));
        Assert.Equal(JobFailure.Usage, e.ExitCode);
        Assert.Equal("READY_TIMEOUT='soon' is not a whole number of seconds", e.Message);
    }

    [Theory]
    [InlineData("nginx")]
    [InlineData("haproxy")]
    public void Arguments_other_than_help_are_refused(string job)
    {
        var e = Assert.Throws<JobFailure>(() => job == "nginx" ? NginxJob.Run(["-x"]) : HaproxyJob.Run(["-x"]));
        Assert.Equal(JobFailure.Usage, e.ExitCode);
        Assert.StartsWith("unknown argument '-x'", e.Message, StringComparison.Ordinal);
    }

    private static object Read(CaseRun run) =>
        run.Case.Job == "nginx" ? NginxJob.Read(run.ServerEnv, Tools.CrankDir) : HaproxyJob.Read(run.ServerEnv);
}

/// <summary>The server as the job's child: the signals passed on, its exit status the job's, the ready line once the
/// port accepts connections.</summary>
public class ServerProcessTests
{
    [Theory]
    [InlineData("nginx", 15, "TERM", 0)]
    [InlineData("nginx", 2, "INT", 0)]
    [InlineData("haproxy", 10, "USR1", 0)]
    [InlineData("haproxy", 15, "TERM", 143)]
    public async Task Signals_reach_the_server_and_its_status_is_the_job_s(string job, int signal, string logged, int status)
    {
        // A listener of the test's own on the job's port: the probe's connect succeeds, so the ready line shows the job
        // got that far.
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        var port = ((IPEndPoint)listener.LocalEndpoint).Port.ToString(System.Globalization.CultureInfo.InvariantCulture);
        // Status 143: the stand-in ends itself with the signal (128 + 15), as a server that does not catch it.
        using var run = new CaseRun(ServerCase.Named($"{job}-default"), ("STAND_IN_SERVE", "1"), ("LISTEN_PORT", port),
            ("STAND_IN_DIE", status == 0 ? "" : "1"));
        using var p = run.Start();
        var stderr = p.StandardError.ReadToEndAsync();
        var ready = $"{job}-job: ready on 127.0.0.1:{port}";
        string? line;
        while ((line = await p.StandardOutput.ReadLineAsync()) is not null && line != ready)
        {
        }
        Assert.Equal(ready, line);
        // The ready line may come before the stand-in handles signals (the port is the test's): wait for that too.
        for (var i = 0; i < 600 && !File.Exists(run.Out("serving")); i++)
        {
            await Task.Delay(100);
        }
        Assert.True(File.Exists(run.Out("serving")), "the stand-in server runs");

        Assert.True(Tools.Signal(p.Id, signal));
        await ServerJobRunTests.Ended(p);
        var server = int.Parse(File.ReadAllText(run.Out("pid")).Trim(), System.Globalization.CultureInfo.InvariantCulture);
        Assert.Contains($"##ChildProcessId:{server}\n", await stderr, StringComparison.Ordinal);
        Assert.Equal($"{logged}\n", File.ReadAllText(run.Out("signals")));
        Assert.Equal(status, p.ExitCode);
    }
}

public class ReadyProbeTests
{
    [Theory]
    [InlineData("127.0.0.1")]
    [InlineData("0.0.0.0")]
    [InlineData("localhost")]
    public async Task Listening_port_is_ready(string address)
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        var port = ((IPEndPoint)listener.LocalEndpoint).Port;
        Assert.True(await ReadyProbe.WaitListeningAsync(address, port, TimeSpan.FromSeconds(30), CancellationToken.None));
    }

    [Fact]
    public async Task Ready_line_names_the_job_and_the_address()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        var port = ((IPEndPoint)listener.LocalEndpoint).Port.ToString(System.Globalization.CultureInfo.InvariantCulture);
        var (output, error) = (new StringWriter(), new StringWriter());
        await ReadyProbe.AnnounceAsync("nginx-job", "127.0.0.1", port, 30, output, error, CancellationToken.None);
        Assert.Equal($"nginx-job: ready on 127.0.0.1:{port}\n", output.ToString());
        Assert.Equal("", error.ToString());
    }

    [Fact]
    public async Task Closed_port_fails_with_a_line_on_stderr()
    {
        // A port that was just free: bound, then released.
        var l = new TcpListener(IPAddress.Loopback, 0);
        l.Start();
        var port = ((IPEndPoint)l.LocalEndpoint).Port.ToString(System.Globalization.CultureInfo.InvariantCulture);
        l.Stop();
        var (output, error) = (new StringWriter(), new StringWriter());
        await ReadyProbe.AnnounceAsync("haproxy-job", "127.0.0.1", port, 0, output, error, CancellationToken.None);
        Assert.Equal("", output.ToString());
        Assert.Equal($"haproxy-job: nothing listening on 127.0.0.1:{port} after 0s\n", error.ToString());
    }

    [Fact]
    public async Task Stopped_probe_prints_nothing()
    {
        var (output, error) = (new StringWriter(), new StringWriter());
        using var stop = new CancellationTokenSource();
        await stop.CancelAsync();
        await ReadyProbe.AnnounceAsync("nginx-job", "127.0.0.1", "1", 30, output, error, stop.Token);
        Assert.Equal("", output.ToString() + error.ToString());
    }
}

public class ServerConfigTests
{
    [Fact]
    public void Tokens_are_replaced_everywhere_and_literally()
    {
        var text = ServerConfig.ReplaceTokens("a @X@ b @X@ # @Y@\n", [new("@X@", "p&q|r\\s"), new("@Y@", "")]);
        Assert.Equal("a p&q|r\\s b p&q|r\\s # \n", text);
    }

    [Fact]
    public void Token_line_becomes_the_lines_given()
    {
        var text = ServerConfig.RewriteLines("up {\n        @SERVERS@\n    x @SERVERS@\n}\n",
            l => ServerConfig.IsTokenLine(l, "@SERVERS@") ? ["    server a:1;", "    server b:2;"] : null);
        Assert.Equal("up {\n    server a:1;\n    server b:2;\n    x @SERVERS@\n}\n", text);
    }

    [Fact]
    public void Last_line_without_a_line_break_is_a_line_too()
    {
        Assert.Equal("b", ServerConfig.RewriteLines("a", _ => ["b"]));
        Assert.Equal("b\nb\n", ServerConfig.RewriteLines("a\na\n", _ => ["b"]));
    }

    [Fact]
    public void Haproxy_server_lines_keep_the_rest_of_the_line_with_single_spaces()
    {
        var text = HaproxyJob.Render("backend b\n  server   server1 \"x:1\"  maxconn 256\tssl\n    server other y\n", ["h1:1", "h2:2"]);
        Assert.Equal("backend b\n    server s1 h1:1 maxconn 256 ssl\n    server s2 h2:2 maxconn 256 ssl\n    server other y\n", text);
    }
}
