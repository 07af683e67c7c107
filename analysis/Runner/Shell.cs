namespace LLRP.Runner;

/// <summary>Finding a program on PATH, installing the missing ones.</summary>
internal static class Shell
{
    /// <summary>The full path of <paramref name="program"/> on PATH, or null.</summary>
    public static string? Which(string program)
    {
        foreach (var dir in (Environment.GetEnvironmentVariable("PATH") ?? "").Split(':', StringSplitOptions.RemoveEmptyEntries))
        {
            var path = Path.Combine(dir, program);
            if (IsExecutable(path))
            {
                return path;
            }
        }
        return null;
    }

    public static bool IsExecutable(string path) =>
        File.Exists(path) && !OperatingSystem.IsWindows() && (File.GetUnixFileMode(path) & (UnixFileMode.UserExecute | UnixFileMode.GroupExecute | UnixFileMode.OtherExecute)) != 0;

    // apt-get: 10 min for the package lists, 15 for the installs, on the loaded 2-core box.
    private const int AptUpdateSeconds = 600, AptInstallSeconds = 900;

    /// <summary>Installs the <paramref name="missing"/> packages with apt-get (its output in <paramref name="aptLog"/>)
    /// when <paramref name="install"/>, root and apt-get allow it; otherwise warns that they are missing.</summary>
    public static void Install(IReadOnlyCollection<string> missing, bool install, string aptLog, Action<string> log, Action<string> warn)
    {
        if (missing.Count == 0)
        {
            return;
        }
        var isRoot = ProcessGroups.Run(["id", "-u"], TimeSpan.FromSeconds(5)).Out.Trim() == "0";
        if (!install || !isRoot || Which("apt-get") is null)
        {
            warn($"missing {string.Join(' ', missing)} and not installing them (not root, no apt-get, or --no-install)");
            return;
        }
        log($"installing {string.Join(' ', missing)} (apt-get)");
        File.WriteAllText(aptLog, "");
        if (ProcessGroups.Run(["apt-get", "update", "-qq"], TimeSpan.FromSeconds(AptUpdateSeconds), log: aptLog).Code != 0)
        {
            warn("apt-get update failed (see logs/apt.log)");
        }
        Environment.SetEnvironmentVariable("DEBIAN_FRONTEND", "noninteractive");
        if (ProcessGroups.Run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", .. missing], TimeSpan.FromSeconds(AptInstallSeconds), log: aptLog).Code != 0)
        {
            warn("apt-get install failed (see logs/apt.log)");
        }
    }
}
