using System.Diagnostics;
using System.Reflection;
using System.Text.RegularExpressions;

namespace LLRP.Tests.Infrastructure;

/// <summary>
/// A full-stack baseline of src/Baselines: <paramref name="Directory"/> under src/Baselines, the assembly its project
/// builds. The test project references both projects (without their assemblies), so they are built with the tests.
/// </summary>
public sealed record Baseline(string Name, string Directory, string Assembly)
{
    public static readonly Baseline Yarp = new("yarp", "Yarp", "YarpProxy");
    public static readonly Baseline HttpClientProxy = new("httpclientproxy", "HttpClientProxy", "HttpClientProxy");

    public static readonly IReadOnlyList<Baseline> All = [Yarp, HttpClientProxy];

    public static Baseline Get(string name) => All.Single(b => b.Name == name);

    /// <summary>The verdict helpers take a variant; a baseline is none of LLRP's, so it claims no canonical framing.</summary>
    public Variant AsVariant { get; } = new(Name, CanonicalFraming: false, RelaysInterim: false, SupportsAsteriskForm: false);

    /// <summary>The built assembly, in the configuration the tests were built in.</summary>
    public string AssemblyPath()
    {
        var configuration = typeof(Baseline).Assembly.GetCustomAttribute<AssemblyConfigurationAttribute>()?.Configuration ?? "Release";
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "LLRP.slnx")))
            {
                return Path.Combine(dir.FullName, "src", "Baselines", Directory, "bin", configuration, "net10.0", Assembly + ".dll");
            }
        }
        throw new FileNotFoundException($"LLRP.slnx was not found above {AppContext.BaseDirectory}, so the {Name} baseline cannot be located");
    }
}

/// <summary>
/// A baseline running as `dotnet BASELINE.dll --urls http://127.0.0.1:0 --downstream ORIGIN`: ready when it has logged
/// Kestrel's "Now listening on:" address and "Application started." (crank's ready text); killed with its tree.
/// </summary>
public sealed partial class BaselineProcess : IAsyncDisposable
{
    private static readonly TimeSpan s_startCap = TimeSpan.FromSeconds(60);

    private readonly Process _process;
    private readonly List<string> _output = [];

    private BaselineProcess(Process process, Uri url)
    {
        _process = process;
        Url = url;
    }

    public Uri Url { get; private set; }

    public static async Task<BaselineProcess> StartAsync(Baseline baseline, string downstream)
    {
        var path = baseline.AssemblyPath();
        if (!File.Exists(path))
        {
            throw new FileNotFoundException($"the {baseline.Name} baseline is not built: {path} (build LLRP.slnx in the tests' configuration)");
        }
        var info = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
            UseShellExecute = false,
        };
        foreach (var arg in (string[])["exec", path, "--urls", "http://127.0.0.1:0", "--downstream", downstream])
        {
            info.ArgumentList.Add(arg);
        }
        // Production defaults, whatever the test runner's environment says.
        info.Environment["ASPNETCORE_ENVIRONMENT"] = "Production";
        info.Environment["DOTNET_ENVIRONMENT"] = "Production";

        var process = Process.Start(info) ?? throw new InvalidOperationException($"dotnet could not start {path}");
        var self = new BaselineProcess(process, new Uri("http://127.0.0.1/"));
        var listening = new TaskCompletionSource<Uri>(TaskCreationOptions.RunContinuationsAsynchronously);
        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        void OnLine(string? line)
        {
            if (line is null)
            {
                return;
            }
            lock (self._output)
            {
                self._output.Add(line);
            }
            if (ListeningLine().Match(line) is { Success: true } m)
            {
                listening.TrySetResult(new Uri(m.Groups[1].Value));
            }
            if (line.Contains("Application started.", StringComparison.Ordinal))
            {
                started.TrySetResult();
            }
        }
        process.OutputDataReceived += (_, e) => OnLine(e.Data);
        process.ErrorDataReceived += (_, e) => OnLine(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();

        var ready = Task.WhenAll(listening.Task, started.Task);
        var exited = process.WaitForExitAsync();
        if (await Task.WhenAny(ready, exited, Task.Delay(s_startCap)) != ready)
        {
            var output = self.Output();
            await self.DisposeAsync();
            throw new InvalidOperationException($"the {baseline.Name} baseline did not start within {s_startCap.TotalSeconds} s: {output}");
        }
        self.Url = await listening.Task;
        return self;
    }

    public string Output()
    {
        lock (_output)
        {
            return string.Join("\n", _output.TakeLast(30));
        }
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            if (!_process.HasExited)
            {
                _process.Kill(entireProcessTree: true);
            }
            await _process.WaitForExitAsync(Wire.Deadline());
        }
        catch (Exception e) when (e is InvalidOperationException or OperationCanceledException)
        {
        }
        _process.Dispose();
    }

    [GeneratedRegex(@"Now listening on: (http://[^\s]+)")]
    private static partial Regex ListeningLine();
}
