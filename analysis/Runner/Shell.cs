using System.Text;

namespace LLRP.Runner;

/// <summary>Small shell-side helpers: quoting a command line as bash's printf %q does, finding a program on PATH.</summary>
internal static class Shell
{
    /// <summary>The word as bash's <c>printf %q</c> quotes it for the plain characters a command line holds: a
    /// backslash before every character the shell would read specially, '' for the empty word.</summary>
    public static string Quote(string word)
    {
        if (word.Length == 0)
        {
            return "''";
        }
        var s = new StringBuilder();
        for (var i = 0; i < word.Length; i++)
        {
            var c = word[i];
            var plain = char.IsAsciiLetterOrDigit(c) || c is '.' or '_' or '+' or ':' or '@' or '%' or '/' or '-' or '='
                || (c == '~' && i > 0);
            if (!plain)
            {
                s.Append('\\');
            }
            s.Append(c);
        }
        return s.ToString();
    }

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
