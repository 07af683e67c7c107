namespace LLRP;

/// <summary>A word of a command line as a log line or a study's JSON shows it, ready to paste into a shell: as it is
/// when it holds only plain characters, else in single quotes (a quote inside as '\''). The runner links this file.</summary>
internal static class ShellWord
{
    public static string Quote(string word) =>
        word.Length > 0 && word.All(c => char.IsAsciiLetterOrDigit(c) || "._+:@%/-=,".Contains(c, StringComparison.Ordinal))
            ? word : "'" + word.Replace("'", "'\\''", StringComparison.Ordinal) + "'";

    /// <summary>Each word after a space.</summary>
    public static string Spaced(IEnumerable<string> words) => string.Concat(words.Select(w => " " + Quote(w)));
}
