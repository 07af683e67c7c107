using System.Globalization;
using System.Text;

namespace LLRP.Analysis;

/// <summary>
/// The README's headline: one row per point (connections, response size) of one or more sittings, llrp-llhttp against
/// nginx, HAProxy and full YARP, and under the table each sitting's date, commit, topology and command, and whether
/// src/ changed after that commit (<see cref="SourceAge"/>). It writes nothing; the README pastes what it prints, and
/// a test holds the README's block to what it prints today (so a change under src/ makes the old rows say so).
/// </summary>
internal static class Headline
{
    // A README headline stays short: more points than this belong in docs/results.md.
    public const int MaxRows = 10;

    private const string Proxy = "llrp-llhttp";

    public static int Run(IEnumerable<string> dirs) => ReportCommand.Run(() => Console.Write(Build(dirs.Select(Path.GetFullPath).ToList())));

    /// <summary>One row of the table: a default point of a sitting and llrp-llhttp's figures there.</summary>
    internal sealed record Row(string Point, int Rounds, double? Rps, double? Cpu, double? VsBest, string BestName, double? VsYarp, double? CpuVsYarp);

    /// <summary>What the line under the table says of a sitting.</summary>
    /// <param name="Revision">The full commit the sitting ran (null when not recorded); Commit is its short form.</param>
    internal sealed record Note(string Date, string Commit, bool Dirty, string Topology, string Command, string? Revision);

    public static string Build(IReadOnlyList<string> dirs)
    {
        var rows = new StringBuilder();
        var notes = new StringBuilder();
        var count = 0;
        foreach (var dir in dirs)
        {
            var (points, note) = Read(dir);
            var name = Path.GetFileName(dir.TrimEnd(Path.DirectorySeparatorChar));
            var stamp = SittingStamp(name);
            var changes = note.Revision is { } revision
                ? SourceAge.FirstSince(dir, revision)
                : throw new ReportException($"{dir}: no commit recorded, so it cannot tell whether src/ changed since");
            var stale = changes is null ? "" : " (src/ changed since)";
            foreach (var r in points)
            {
                if (++count > MaxRows)
                {
                    throw new ReportException($"more than {MaxRows} rows: name fewer sittings (the full history is docs/results.md)");
                }
                rows.AppendLine(CultureInfo.InvariantCulture,
                    $"| [{stamp}](analysis/results/{name}/README.md){stale} | {r.Point} | " +
                    $"{r.Rounds} | {Format.N0(r.Rps)} | {Format.F(r.Cpu, 1)} | " +
                    $"{Lead(r.VsBest)}{r.BestName} | {Lead(r.VsYarp)} | {Lead(r.CpuVsYarp)} |");
            }
            var changed = changes is { } c
                ? $"; **measured on code that has changed since**: src/ changed after it, first in `{c.Commit}` of {c.Date}"
                : "";
            notes.AppendLine(CultureInfo.InvariantCulture,
                $"- {stamp}: started {note.Date}, commit `{note.Commit}`{(note.Dirty ? " (uncommitted changes)" : "")}; " +
                $"topology: {note.Topology}; `{note.Command}`{changed}");
        }
        if (count == 0)
        {
            throw new ReportException($"no {Proxy} runs at a default point in {string.Join(", ", dirs)}");
        }
        var t = new StringBuilder();
        t.AppendLine("| sitting | point | rounds | llhttp RPS | llhttp CPU µs/req | llhttp ÷ best of nginx/HAProxy (RPS) | llhttp ÷ full YARP (RPS) | full YARP ÷ llhttp (CPU) |");
        t.AppendLine("|---|---|--:|--:|--:|--:|--:|--:|");
        t.Append(rows).AppendLine().Append(notes);
        return t.ToString();
    }

    /// <summary>A sitting's rows (its default points with llrp-llhttp) and its note.</summary>
    internal static (List<Row> Rows, Note Note) Read(string dir)
    {
        var (runs, metas, _) = ResultsReader.ReadAll(dir, null);
        if (runs.Count == 0)
        {
            throw new ReportException($"{dir}: no runs (sitting.json, *.runs.json or per-run files)");
        }
        var a = new Analysis(runs);
        var rows = new List<Row>();
        foreach (var p in a.Points.Where(p => p.Profile.Length == 0 && p.AppEnv.Length == 0))
        {
            if (a.Get(p, Proxy) is not { } s)
            {
                continue;
            }
            var yarp = a.Baseline(p, Analysis.Yarp);
            var best = a.BestNative(p);
            var cpuVsYarp = yarp?.CpuUsPerRequest is { } y && s.CpuUsPerRequest is > 0 ? y / s.CpuUsPerRequest.Value : (double?)null;
            var bestName = best is null ? "" : best.Scenario == "haproxy" ? " (HAProxy)" : $" ({best.Scenario})";
            rows.Add(new Row($"{p.Connections?.ToString(CultureInfo.InvariantCulture) ?? "?"} c, {Format.Bytes(p.ResponseBytes)}",
                s.Runs.Count, s.Rps, s.CpuUsPerRequest, a.VsBestNative(s), bestName, a.VsYarp(s), cpuVsYarp));
        }
        var sweep = metas.FirstOrDefault(m => m.IsSweep) ?? metas.FirstOrDefault();
        var commit = runs.Select(r => r.Commit).Concat(metas.Select(m => m.Commit)).FirstOrDefault(c => !string.IsNullOrEmpty(c));
        var command = sweep?.Commands.FirstOrDefault() ?? "not recorded";
        var pinning = metas.Select(m => m.Pinned).FirstOrDefault(x => !string.IsNullOrEmpty(x) && x != "no");
        var origin = metas.Select(m => m.Origin).FirstOrDefault(x => !string.IsNullOrEmpty(x)) ?? "downstream";
        return (rows, new Note(sweep?.Date ?? "(not recorded)", commit is { Length: > 7 } ? commit[..7] : commit ?? "?",
            metas.Any(m => m.Dirty == true), $"{(pinning is null ? "unpinned" : "pinned " + pinning)}, origin {origin}", Format.Inline(command),
            string.IsNullOrEmpty(commit) ? null : commit));
    }

    /// <summary>A ratio in bold where llhttp leads (at or above 1.00 as printed).</summary>
    private static string Lead(double? ratio) => ratio is >= 0.995 ? $"**{Format.Ratio(ratio)}**" : Format.Ratio(ratio);

    /// <summary>"20261127-1823-…" → "2026-11-27 18:23"; another name stays as it is.</summary>
    internal static string SittingStamp(string folder) =>
        folder.Length >= 13 && folder[8] == '-' && folder[..8].All(char.IsAsciiDigit) && folder[9..13].All(char.IsAsciiDigit)
            ? $"{folder[..4]}-{folder[4..6]}-{folder[6..8]} {folder[9..11]}:{folder[11..13]}"
            : folder;
}
