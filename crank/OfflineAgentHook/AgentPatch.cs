using System.Reflection;

namespace LLRP.OfflineAgentHook;

public enum AgentPatchError
{
    /// <summary>LLRP_CRANK_DOTNET_INSTALL_DIR is not set.</summary>
    NoInstallDir,
    /// <summary>The agent's Startup type was not found (not started as crank-agent?).</summary>
    StartupTypeNotFound,
    /// <summary>Startup has no private static _dotnetInstallPath (a crank version that changed it).</summary>
    FieldNotFound,
    /// <summary>_dotnetInstallPath exists but is not a writable static string.</summary>
    FieldNotWritableString,
}

public sealed class AgentPatchException(AgentPatchError error, string message) : Exception(message)
{
    public AgentPatchError Error { get; } = error;
}

/// <summary>
/// What the hook does. crank's agent, before every job, makes sure it holds dotnet-install.sh: in the folder named by
/// its private static Startup._dotnetInstallPath (a random folder under its temp root when that field is empty), and
/// downloads the script from the internet when the file is missing; offline, that download throws after five attempts
/// and the exception ends the agent. Setting the field to a folder that already holds a dotnet-install.sh skips the
/// download. The file put there only exits 1: jobs that run published executables never call it, and a job that
/// would install an SDK fails with the agent's own "dotnet-install could not install" message instead of killing it.
/// </summary>
public static class AgentPatch
{
    public const string InstallDirVariable = "LLRP_CRANK_DOTNET_INSTALL_DIR";

    /// <summary>Space-separated names of more variables to remove, e.g. DOTNET_ROLL_FORWARD, which the agent needs only to start.</summary>
    public const string ClearVariable = "LLRP_CRANK_HOOK_CLEAR";
    public const string StartupHooksVariable = "DOTNET_STARTUP_HOOKS";
    public const string StartupTypeName = "Microsoft.Crank.Agent.Startup";
    public const string AgentAssemblyName = "crank-agent";
    public const string FieldName = "_dotnetInstallPath";
    public const string ScriptName = "dotnet-install.sh";

    internal const string ScriptText =
        "#!/usr/bin/env bash\n" +
        "# Put here by LLRP's offline agent hook: this agent has no internet, so it installs no .NET SDK or runtime.\n" +
        "echo 'dotnet-install.sh: disabled on this offline crank agent (LLRP offline agent hook)' >&2\n" +
        "exit 1\n";

    /// <summary>
    /// Removes the hook's variables and those <see cref="ClearVariable"/> names from the process environment (every
    /// job the agent starts inherits it), writes the
    /// stand-in script into <paramref name="installDir"/> unless one is there, and points the agent's field at that
    /// folder. Returns the script's path.
    /// </summary>
    public static string Apply(string? installDir, Func<Type?> findStartup)
    {
        var more = Environment.GetEnvironmentVariable(ClearVariable) ?? "";
        foreach (var name in more.Split(' ', StringSplitOptions.RemoveEmptyEntries))
        {
            Environment.SetEnvironmentVariable(name, null);
        }
        Environment.SetEnvironmentVariable(ClearVariable, null);
        Environment.SetEnvironmentVariable(StartupHooksVariable, null);
        Environment.SetEnvironmentVariable(InstallDirVariable, null);
        if (string.IsNullOrWhiteSpace(installDir))
        {
            throw new AgentPatchException(AgentPatchError.NoInstallDir,
                $"{InstallDirVariable} is not set: it names the folder that holds (or will hold) the stand-in {ScriptName}.");
        }
        var startup = findStartup() ?? throw new AgentPatchException(AgentPatchError.StartupTypeNotFound,
            $"no type {StartupTypeName} in this process: DOTNET_STARTUP_HOOKS is meant for {AgentAssemblyName} only.");
        var field = PinnedField(startup);

        var dir = Path.GetFullPath(installDir);
        Directory.CreateDirectory(dir);
        var script = Path.Combine(dir, ScriptName);
        if (!File.Exists(script))
        {
            File.WriteAllText(script, ScriptText);
            if (!OperatingSystem.IsWindows())
            {
                File.SetUnixFileMode(script, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute |
                UnixFileMode.GroupRead | UnixFileMode.GroupExecute | UnixFileMode.OtherRead | UnixFileMode.OtherExecute);
            }
        }
        field.SetValue(null, dir);
        return script;
    }

    /// <summary>The field the agent reads, checked for the shape this hook relies on.</summary>
    public static FieldInfo PinnedField(Type startup)
    {
        var field = startup.GetField(FieldName, BindingFlags.NonPublic | BindingFlags.Static)
            ?? throw new AgentPatchException(AgentPatchError.FieldNotFound,
                $"{startup.FullName} has no private static field {FieldName}: this crank version changed how it finds {ScriptName}.");
        if (field.FieldType != typeof(string) || field.IsInitOnly || field.IsLiteral)
        {
            throw new AgentPatchException(AgentPatchError.FieldNotWritableString,
                $"{startup.FullName}.{FieldName} is not a writable static string: this crank version changed how it finds {ScriptName}.");
        }
        return field;
    }

    /// <summary>The agent's Startup type: from the entry assembly (crank-agent), else by loading crank-agent.</summary>
    public static Type? FindAgentStartup()
    {
        if (Assembly.GetEntryAssembly()?.GetType(StartupTypeName) is { } fromEntry)
        {
            return fromEntry;
        }
        try
        {
            return Assembly.Load(new AssemblyName(AgentAssemblyName)).GetType(StartupTypeName);
        }
        catch (IOException)
        {
            return null;
        }
        catch (BadImageFormatException)
        {
            return null;
        }
    }
}
