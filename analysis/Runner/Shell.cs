namespace LLRP.Runner;

/// <summary>Finding a program on PATH.</summary>
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
}
