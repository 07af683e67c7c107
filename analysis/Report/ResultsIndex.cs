using System.Text;
using System.Text.RegularExpressions;

namespace LLRP.Analysis;

/// <summary>
/// Writes the index of analysis/results/ into docs/results.md, between its "index:start" and "index:end" lines: one row
/// per folder, oldest first. A crank sitting (a sitting.json) gets its date, commit, command, topology and, per point,
/// llrp-llhttp's ratios from <see cref="Headline"/>; any other study gets its README's title.
/// Exit status: 0 written, 1 a folder without a README (its row is written all the same), 2 bad usage.
/// </summary>
internal static partial class ResultsIndex
{
    public const string Start = "<!-- index:start -->";
    public const string End = "<!-- index:end -->";

    private const string Header =
        "| sitting (UTC) | kind | commit | command | topology | per point, llrp-llhttp ÷ best of nginx/HAProxy (RPS) / ÷ full YARP (RPS) / full YARP ÷ llrp-llhttp (CPU), or the study |\n" +
        "|---|---|---|---|---|---|\n";

    public static int Run(bool print)
    {
        try
        {
            return Write(Checkout.Root(), print);
        }
        catch (Exception e) when (e is ReportException or IOException or UnauthorizedAccessException)
        {
            Console.Error.WriteLine($"results-index: {e.Message}");
            return 1;
        }
    }

    private static int Write(string root, bool print)
    {
        var (rows, missing) = Rows(Path.Combine(root, "analysis", "results"));
        foreach (var name in missing)
        {
            Console.Error.WriteLine($"results-index: {name} has no README.md");
        }
        var status = missing.Count > 0 ? 1 : 0;
        if (print)
        {
            Console.Write(rows);
            return status;
        }
        var doc = Path.Combine(root, "docs", "results.md");
        if (Replace(File.ReadAllText(doc), rows) is not { } written)
        {
            Console.Error.WriteLine($"results-index: {doc} needs {Start} and {End} lines");
            return 1;
        }
        File.WriteAllText(doc, written);
        Console.WriteLine($"results-index: {rows.Count(c => c == '\n') - 2} folder(s) -> docs/results.md");
        return status;
    }

    /// <summary>The table (header and one row per folder of <paramref name="results"/>) and the folders without a README.</summary>
    public static (string Table, List<string> Missing) Rows(string results)
    {
        var table = new StringBuilder(Header);
        var missing = new List<string>();
        foreach (var dir in Directory.EnumerateDirectories(results).Where(d => !Path.GetFileName(d).StartsWith('.')).Order(StringComparer.Ordinal))
        {
            var name = Path.GetFileName(dir);
            var stamp = $"{Cut(name, 0, 4)}-{Cut(name, 4, 2)}-{Cut(name, 6, 2)} {Cut(name, 9, 2)}:{Cut(name, 11, 2)}";
            var kind = Cut(name, 14, int.MaxValue);
            var readme = Path.Combine(dir, "README.md");
            var link = $"[{stamp}](../analysis/results/{name}/README.md)";
            if (!File.Exists(readme))
            {
                missing.Add(name);
                link = stamp;
            }
            // The stepped and fixed-rate studies fold their runs too, but their figures are per offered rate, not a
            // closed-loop point: they get their title, like any other study.
            if (File.Exists(Path.Combine(dir, ResultsReader.FoldedFile)) && !File.Exists(Path.Combine(dir, "stepped.json"))
                && !File.Exists(Path.Combine(dir, "fixedrate.json")))
            {
                table.Append(SittingRow(dir, link, kind, readme)).Append('\n');
            }
            else
            {
                var title = Title(readme)?.Replace("|", "\\|", StringComparison.Ordinal);
                var commit = ReadmeCommit(readme) ?? MachineCommit(Path.Combine(dir, "machine.txt"));
                table.Append($"| {link} | {kind} | {(commit is null ? "" : $"`{commit}`")} | see README | see README | {Or(title)} |\n");
            }
        }
        return (table.ToString(), missing);
    }

    /// <summary>
    /// <paramref name="doc"/> with the lines between each index:start line and the next index:end line replaced by
    /// <paramref name="rows"/>; null when it lacks either line.
    /// </summary>
    public static string? Replace(string doc, string rows)
    {
        var lines = doc.Split('\n');
        // A final newline ends the last line; it does not start another.
        if (lines[^1].Length == 0)
        {
            lines = lines[..^1];
        }
        if (!lines.Contains(Start) || !lines.Contains(End))
        {
            return null;
        }
        var text = new StringBuilder();
        var skip = false;
        foreach (var line in lines)
        {
            if (line == Start)
            {
                text.Append(line).Append('\n').Append(rows);
                skip = true;
                continue;
            }
            if (line == End)
            {
                skip = false;
            }
            if (!skip)
            {
                text.Append(line).Append('\n');
            }
        }
        return text.ToString();
    }

    private static string SittingRow(string dir, string link, string kind, string readme)
    {
        List<Headline.Row> rows;
        Headline.Note? note;
        try
        {
            (rows, note) = Headline.Read(dir);
        }
        catch (Exception e) when (e is ReportException or IOException or UnauthorizedAccessException or System.Text.Json.JsonException)
        {
            (rows, note) = ([], null);
        }
        // No llrp-llhttp at a default point (an A/B of other variants), or more points than a headline holds: the
        // folder's title instead of ratios, and nothing from the note.
        if (rows.Count is 0 or > Headline.MaxRows)
        {
            (rows, note) = ([], null);
        }
        var points = string.Join(" · ", rows.Select(r =>
            $"{r.Point}: {Format.Ratio(r.VsBest)}{r.BestName} / {Format.Ratio(r.VsYarp)} / {Format.Ratio(r.CpuVsYarp)}"));
        if (points.Length == 0)
        {
            points = Title(readme) ?? "";
        }
        var commit = note is not null && HexOrUnknown().IsMatch(note.Commit) ? $"`{note.Commit}`" : null;
        var dirty = note?.Dirty == true ? " (dirty)" : "";
        var topology = note?.Topology
            .ReplaceFirst("pinned application=cpu1 load,downstream=cpu0", "proxy alone on CPU 1")
            .ReplaceFirst("pinned load=cpu0 application,downstream=cpu1", "load alone on CPU 0");
        var command = note is null ? null : JsonDirOption().Replace(OutOption().Replace(note.Command, "", 1), "", 1);
        return $"| {link} | {kind} | {Or(commit)}{dirty} | `{Or(command)}` | {Or(topology)} | {Or(points)} |";
    }

    private static string ReplaceFirst(this string s, string what, string with) =>
        s.IndexOf(what, StringComparison.Ordinal) is var i and >= 0 ? string.Concat(s.AsSpan(0, i), with, s.AsSpan(i + what.Length)) : s;

    private static string Or(string? s) => string.IsNullOrEmpty(s) ? "?" : s;

    /// <summary>Characters [start, start + length) of <paramref name="s"/>, as far as it goes (bash's ${s:start:length}).</summary>
    private static string Cut(string s, int start, int length) =>
        start >= s.Length ? "" : s.Substring(start, (int)Math.Min(length, (long)s.Length - start));

    /// <summary>A README's title: its first line without the leading "#" and the spaces after it; null without one.</summary>
    private static string? Title(string readme) =>
        Lines(readme).FirstOrDefault() is { } first && first.StartsWith('#') ? first[1..].TrimStart(' ') : null;

    /// <summary>The commit a study's README names first ("**Commit**: `abc1234`"), cut to seven digits.</summary>
    private static string? ReadmeCommit(string readme) =>
        Lines(readme).Select(l => ReadmeCommitLine().Match(l)).FirstOrDefault(m => m.Success)?.Groups[1].Value[..7];

    /// <summary>The commit of a study's machine.txt ("commit: abc1234...").</summary>
    private static string? MachineCommit(string machine) =>
        Lines(machine).Select(l => MachineCommitLine().Match(l)).FirstOrDefault(m => m.Success)?.Groups[1].Value;

    /// <summary>A file's lines (split at '\n' only, as sed and grep read them); none when it cannot be read.</summary>
    private static string[] Lines(string file)
    {
        try
        {
            var text = File.ReadAllText(file);
            return text.Length == 0 ? [] : text.TrimEnd('\n').Split('\n');
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return [];
        }
    }

    [GeneratedRegex("^[0-9a-f?]*$")]
    private static partial Regex HexOrUnknown();

    [GeneratedRegex(" --out [^ ]*")]
    private static partial Regex OutOption();

    [GeneratedRegex(" --json-dir [^ ]*")]
    private static partial Regex JsonDirOption();

    [GeneratedRegex(@"\*\*Commit:?\*\*:? *`?([0-9a-f]{7,40})")]
    private static partial Regex ReadmeCommitLine();

    [GeneratedRegex("^commit: *([0-9a-f]{7})")]
    private static partial Regex MachineCommitLine();
}
