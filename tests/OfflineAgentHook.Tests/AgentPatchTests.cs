using System.Diagnostics;
using Xunit;

namespace LLRP.OfflineAgentHook.Tests;

// Stand-ins with the member shapes the hook meets in crank's agent (Startup: private static string _dotnetInstallPath)
// or in a crank version that changed it.
#pragma warning disable CS0169, CS0649, IDE0044, IDE0051, CA1823 // the fields are only reached by reflection
internal sealed class AgentLikeStartup
{
    private static string? _dotnetInstallPath;

    public static string? Current => _dotnetInstallPath;
}

internal sealed class RenamedFieldStartup
{
    private static string? _dotnetInstallFolder;
}

internal sealed class ReadOnlyFieldStartup
{
    private static readonly string? _dotnetInstallPath;
}

internal sealed class WrongTypeStartup
{
    private static int _dotnetInstallPath;
}
#pragma warning restore CS0169, CS0649, IDE0044, IDE0051, CA1823

// One collection: the tests change process-wide environment variables.
[Collection(nameof(AgentPatchTests))]
public sealed class AgentPatchTests : IDisposable
{
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "llrp-hook-test-" + Guid.NewGuid().ToString("N"));

    public void Dispose()
    {
        if (Directory.Exists(_dir))
        {
            Directory.Delete(_dir, recursive: true);
        }
    }

    [Fact]
    public void PinsTheFieldAndWritesAScriptThatRefusesToInstall()
    {
        var script = AgentPatch.Apply(_dir, () => typeof(AgentLikeStartup));

        Assert.Equal(Path.Combine(_dir, AgentPatch.ScriptName), script);
        Assert.Equal(_dir, AgentLikeStartup.Current);
        using var bash = Process.Start(new ProcessStartInfo("bash", [script, "--version", "10.0.100"]) { RedirectStandardError = true })!;
        var stderr = bash.StandardError.ReadToEnd();
        bash.WaitForExit();
        Assert.Equal(1, bash.ExitCode);
        Assert.Contains("disabled", stderr, StringComparison.Ordinal);
    }

    [Fact]
    public void KeepsAScriptThatIsAlreadyThere()
    {
        Directory.CreateDirectory(_dir);
        File.WriteAllText(Path.Combine(_dir, AgentPatch.ScriptName), "#!/bin/sh\nexit 0\n");

        AgentPatch.Apply(_dir, () => typeof(AgentLikeStartup));

        Assert.Equal("#!/bin/sh\nexit 0\n", File.ReadAllText(Path.Combine(_dir, AgentPatch.ScriptName)));
    }

    [Fact]
    public void ClearsItsVariablesSoJobsDoNotInheritThem()
    {
        Environment.SetEnvironmentVariable(AgentPatch.StartupHooksVariable, "/somewhere/OfflineAgentHook.dll");
        Environment.SetEnvironmentVariable(AgentPatch.InstallDirVariable, _dir);
        Environment.SetEnvironmentVariable(AgentPatch.ClearVariable, "LLRP_HOOK_TEST_A LLRP_HOOK_TEST_B");
        Environment.SetEnvironmentVariable("LLRP_HOOK_TEST_A", "1");
        Environment.SetEnvironmentVariable("LLRP_HOOK_TEST_B", "1");
        Environment.SetEnvironmentVariable("LLRP_HOOK_TEST_KEPT", "1");

        AgentPatch.Apply(_dir, () => typeof(AgentLikeStartup));

        Assert.Null(Environment.GetEnvironmentVariable(AgentPatch.StartupHooksVariable));
        Assert.Null(Environment.GetEnvironmentVariable(AgentPatch.InstallDirVariable));
        // What a child process (a crank job) sees.
        using var env = Process.Start(new ProcessStartInfo("env") { RedirectStandardOutput = true })!;
        var output = env.StandardOutput.ReadToEnd();
        env.WaitForExit();
        Assert.DoesNotContain(AgentPatch.StartupHooksVariable + "=", output, StringComparison.Ordinal);
        Assert.DoesNotContain(AgentPatch.InstallDirVariable + "=", output, StringComparison.Ordinal);
        Assert.DoesNotContain(AgentPatch.ClearVariable + "=", output, StringComparison.Ordinal);
        Assert.DoesNotContain("LLRP_HOOK_TEST_A=", output, StringComparison.Ordinal);
        Assert.DoesNotContain("LLRP_HOOK_TEST_B=", output, StringComparison.Ordinal);
        Assert.Contains("LLRP_HOOK_TEST_KEPT=1", output, StringComparison.Ordinal);
        Environment.SetEnvironmentVariable("LLRP_HOOK_TEST_KEPT", null);
    }

    [Theory]
    [InlineData(typeof(RenamedFieldStartup), AgentPatchError.FieldNotFound)]
    [InlineData(typeof(ReadOnlyFieldStartup), AgentPatchError.FieldNotWritableString)]
    [InlineData(typeof(WrongTypeStartup), AgentPatchError.FieldNotWritableString)]
    public void RefusesAStartupOfAnotherShape(Type startup, AgentPatchError expected)
    {
        var e = Assert.Throws<AgentPatchException>(() => AgentPatch.Apply(_dir, () => startup));
        Assert.Equal(expected, e.Error);
        Assert.False(File.Exists(Path.Combine(_dir, AgentPatch.ScriptName)));
    }

    [Fact]
    public void NeedsTheInstallDirAndTheAgent()
    {
        Assert.Equal(AgentPatchError.NoInstallDir, Assert.Throws<AgentPatchException>(() => AgentPatch.Apply(null, () => typeof(AgentLikeStartup))).Error);
        Assert.Equal(AgentPatchError.StartupTypeNotFound, Assert.Throws<AgentPatchException>(() => AgentPatch.Apply(_dir, () => null)).Error);
    }
}
