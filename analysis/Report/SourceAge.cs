using System.Diagnostics;

namespace LLRP.Analysis;

/// <summary>
/// Whether the proxy's code changed after a sitting's commit: the commits under src/ since then, read from git in the
/// sitting's folder. A figure measured on code that has changed since says so, so that no headline outlives its code.
/// </summary>
internal static class SourceAge
{
    /// <summary>
    /// The first commit under src/ after the sitting's: what a note names, because it stays the same however many
    /// commits follow (a README that says so needs no update per commit).
    /// </summary>
    internal sealed record Change(string Commit, string Date);

    /// <summary>
    /// The first commit under src/ after <paramref name="commit"/> up to HEAD (null when there is none); throws a
    /// <see cref="ReportException"/> when git cannot tell (no repository, or a commit this history does not hold).
    /// </summary>
    public static Change? FirstSince(string dir, string commit)
    {
        // The full hash and the committer date (YYYY-MM-DD), oldest first; the top-level path makes the pathspec
        // independent of dir. The hash is cut to 7 characters here, as every commit the report names: git's own %h grows
        // with the number of objects it counts, which differs between a clone and the repository it was cloned from.
        var root = Git(dir, "rev-parse", "--show-toplevel").Trim();
        var lines = Git(dir, "log", "--reverse", "--format=%H %cs", $"{commit}..HEAD", "--", Path.Combine(root, "src"))
            .Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        if (lines.Length == 0)
        {
            return null;
        }
        var oldest = lines[0].Split(' ');
        return new Change(oldest[0][..Math.Min(7, oldest[0].Length)], oldest.Length > 1 ? oldest[1] : "?");
    }

    private static string Git(string dir, params string[] args)
    {
        var start = new ProcessStartInfo("git") { RedirectStandardOutput = true, RedirectStandardError = true, WorkingDirectory = dir };
        foreach (var a in args)
        {
            start.ArgumentList.Add(a);
        }
        Process process;
        try
        {
            process = Process.Start(start) ?? throw new ReportException("git did not start");
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            throw new ReportException($"git is needed to tell whether src/ changed after a sitting: {e.Message}");
        }
        using (process)
        {
            var error = process.StandardError.ReadToEndAsync();
            var output = process.StandardOutput.ReadToEnd();
            process.WaitForExit();
            if (process.ExitCode != 0)
            {
                throw new ReportException($"git {string.Join(' ', args)} in {dir}: {error.Result.Trim()}");
            }
            return output;
        }
    }
}
