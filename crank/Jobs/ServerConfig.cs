namespace LLRP.Jobs;

/// <summary>Rendering of the servers' configuration templates (crank/nginx/*.conf, crank/haproxy/haproxy.cfg): tokens
/// replaced by their values, and whole lines replaced by a list of lines (one upstream server line per replica). Values
/// are inserted as they are: no character of a path or an address has a meaning here (the bash's sed gave '&amp;', '\'
/// and '|' one).</summary>
internal static class ServerConfig
{
    /// <summary>Every occurrence of each token (e.g. "@LISTEN_PORT@", in comments too) replaced by its value, in the
    /// order given.</summary>
    public static string ReplaceTokens(string text, IEnumerable<KeyValuePair<string, string>> tokens)
    {
        foreach (var (token, value) in tokens)
        {
            text = text.Replace(token, value, StringComparison.Ordinal);
        }
        return text;
    }

    /// <summary>Each line for which <paramref name="rewrite"/> returns lines replaced by them (none: the line goes);
    /// the others kept. Lines end with '\n', as the templates'.</summary>
    public static string RewriteLines(string text, Func<string, IReadOnlyList<string>?> rewrite)
    {
        var lines = text.Split('\n');
        var result = new List<string>(lines.Length);
        // The text after the last '\n' is a line only when not empty (a file that ends with '\n' ends there).
        for (var i = 0; i < lines.Length; i++)
        {
            var replaced = i < lines.Length - 1 || lines[i].Length > 0 ? rewrite(lines[i]) : null;
            if (replaced is null)
            {
                result.Add(lines[i]);
            }
            else
            {
                result.AddRange(replaced);
            }
        }
        return string.Join('\n', result);
    }

    /// <summary>True when <paramref name="line"/> is <paramref name="token"/> after spaces only (sed's "^ *TOKEN$").</summary>
    public static bool IsTokenLine(string line, string token) => line.TrimStart(' ') == token;

    /// <summary>The line's fields, split at runs of blanks (awk's default field splitting).</summary>
    public static string[] Fields(string line) => line.Split([' ', '\t'], StringSplitOptions.RemoveEmptyEntries);
}
