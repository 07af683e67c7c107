using System.Text;
using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;

namespace LLRP.Analysis;

/// <summary>
/// Folds a sitting's result files into one file, DIR/sitting.json, the form a sitting is committed in (git keeps the
/// per-run files of sittings committed before this form; logs and /proc samples stay out of git: .gitignore).
/// <para>
/// Reads, under DIR: every per-run result (&lt;scenario&gt;.r&lt;N&gt;.json, run-local.sh's output, not under logs/),
/// every &lt;scenario&gt;.runs.json (the earlier folded form) and every run.json / sweep.json (machine, commit,
/// commands). Writes DIR/sitting.json:
/// <c>{ "runs": [...], "metas": [...] }</c>: crank --json runs, each with "file" (its path under DIR) and, in a round
/// folder r&lt;N&gt;, jobResults.properties.round; without the raw per-sample "measurements" and the per-job "metadata"
/// (descriptions; every aggregated figure stays in each job's "results"); and <c>{ "file", "content" }</c> for each
/// run.json / sweep.json. An existing DIR/sitting.json is folded in too (its runs and metas kept, so folding twice
/// changes nothing). <see cref="ResultsReader"/> reads sitting.json as it reads the files it came from.
/// </para>
/// <para>
/// --prune then deletes what was folded (per-run files, *.runs.json, run.json, sweep.json, and machine.txt of round
/// folders, the same machine as DIR/machine.txt, which is kept or copied up from the first round) and the PNG charts
/// (drawn again by <c>dotnet run --project analysis/Report -c Release -- DIR --out OUT</c>, with --stepped or
/// --fixed-rate before DIR for those studies).
/// </para>
/// Exit status: 0 done, 1 nothing to fold, 2 bad usage.
/// </summary>
internal static partial class Aggregate
{
    private const string Machine = "machine.txt";

    // jq's tojson keeps non-ASCII text as it is: so does sitting.json, readable in a diff.
    private static readonly JsonSerializerOptions Compact = new() { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping };

    public static int Run(string dir, bool prune)
    {
        if (!Directory.Exists(dir))
        {
            throw new UsageException($"{dir} is not a directory");
        }
        try
        {
            var (path, runs, metas) = Fold(dir, prune);
            Console.WriteLine($"aggregate: {path} <- {runs} run(s), {metas} run.json/sweep.json");
            return 0;
        }
        catch (Exception e) when (e is ReportException or IOException or UnauthorizedAccessException)
        {
            Console.Error.WriteLine($"aggregate: {e.Message}");
            return 1;
        }
    }

    /// <summary>Writes DIR/sitting.json (and prunes when asked); returns its path (as DIR was given) and what it holds.</summary>
    public static (string Path, int Runs, int Metas) Fold(string dir, bool prune)
    {
        dir = dir.EndsWith('/') && dir.Length > 1 ? dir[..^1] : dir;
        var output = $"{dir}/{ResultsReader.FoldedFile}";
        var (perRun, folded, metaFiles) = Sources(dir);
        if (!File.Exists(output) && perRun.Count == 0 && folded.Count == 0)
        {
            throw new ReportException($"no <scenario>.r<N>.json, *.runs.json or {ResultsReader.FoldedFile} under {dir}");
        }

        // What sitting.json already holds comes first: where a file is folded twice, its first folding stays.
        var runs = new List<JsonObject>();
        var metas = new List<JsonObject>();
        if (File.Exists(output))
        {
            var sitting = Parse(output) as JsonObject ?? throw new ReportException($"{output}: expected a JSON object");
            runs.AddRange(Objects(output, sitting["runs"]));
            metas.AddRange(Objects(output, sitting["metas"]));
        }
        foreach (var file in folded)
        {
            var list = Parse(file) as JsonArray ?? throw new ReportException($"{file}: expected a JSON array (a *.runs.json)");
            var i = 0;
            foreach (var run in Objects(file, list))
            {
                StripSamples(run);
                run["file"] = $"{Relative(dir, file)}#{++i}";
                runs.Add(run);
            }
        }
        foreach (var file in perRun)
        {
            var run = Parse(file) as JsonObject ?? throw new ReportException($"{file}: expected a JSON object (a crank --json run)");
            // A sweep runs one round per folder r<N>: that folder name is the run's round.
            if (RoundFolder().Match(Path.GetFileName(Path.GetDirectoryName(file)!)) is { Success: true } round)
            {
                Child(Child(run, "jobResults", file), "properties", file)["round"] = round.Groups[1].Value;
            }
            StripSamples(run);
            run["file"] = Relative(dir, file);
            runs.Add(run);
        }
        foreach (var file in metaFiles)
        {
            metas.Add(new JsonObject { ["file"] = Relative(dir, file), ["content"] = Parse(file) });
        }

        var keptRuns = UniqueByFile(runs);
        var keptMetas = UniqueByFile(metas);
        // One line per run and per meta: small, and a diff between two foldings reads run by run.
        var text = new StringBuilder("{\"runs\": [\n");
        text.AppendJoin(",\n", keptRuns.Select(r => r.ToJsonString(Compact))).Append("\n],\n\"metas\": [\n");
        text.AppendJoin(",\n", keptMetas.Select(m => m.ToJsonString(Compact))).Append("\n]}\n");
        var temporary = Path.Combine(dir, $".results.{Guid.NewGuid():N}");
        try
        {
            File.WriteAllText(temporary, text.ToString());
            File.Move(temporary, output, overwrite: true);
        }
        finally
        {
            File.Delete(temporary);
        }
        if (keptRuns.Count == 0)
        {
            throw new ReportException($"{output} holds no run");
        }

        if (prune)
        {
            Prune(dir, perRun.Concat(folded).Concat(metaFiles));
        }
        return (output, keptRuns.Count, keptMetas.Count);
    }

    /// <summary>The per-run files, *.runs.json and run.json / sweep.json under DIR, outside every logs/ folder.</summary>
    private static (List<string> PerRun, List<string> Folded, List<string> Metas) Sources(string dir)
    {
        List<string> perRun = [], folded = [], metas = [];
        foreach (var file in Directory.EnumerateFiles(dir, "*.json", SearchOption.AllDirectories).Order(VersionOrder.Instance))
        {
            var name = Path.GetFileName(file);
            if (ResultsReader.IsUnderLogs(dir, file) || name == ResultsReader.FoldedFile)
            {
                continue;
            }
            if (name is "run.json" or "sweep.json")
            {
                metas.Add(file);
            }
            else if (name.EndsWith(".runs.json", StringComparison.Ordinal))
            {
                folded.Add(file);
            }
            else if (RoundFile().IsMatch(name))
            {
                perRun.Add(file);
            }
        }
        return (perRun, folded, metas);
    }

    private static void Prune(string dir, IEnumerable<string> foldedFiles)
    {
        var top = Path.Combine(dir, Machine);
        var rounds = Directory.EnumerateFiles(dir, Machine, SearchOption.AllDirectories)
            .Where(f => Path.GetDirectoryName(Path.GetFullPath(f)) != Path.GetFullPath(dir))
            .ToList();
        if (!File.Exists(top) && rounds.Where(f => !ResultsReader.IsUnderLogs(dir, f)).Order(VersionOrder.Instance).FirstOrDefault() is { } first)
        {
            File.Copy(first, top);
        }
        foreach (var file in foldedFiles.Concat(rounds).Concat(Directory.EnumerateFiles(dir, "*.png", SearchOption.AllDirectories)).ToList())
        {
            File.Delete(file);
        }
        DeleteEmptyFolders(dir);
    }

    /// <summary>Deletes every empty folder under <paramref name="dir"/>, deepest first (a folder emptied so goes too).</summary>
    private static void DeleteEmptyFolders(string dir)
    {
        foreach (var sub in Directory.EnumerateDirectories(dir).ToList())
        {
            if (new FileInfo(sub).LinkTarget is not null)
            {
                continue;
            }
            DeleteEmptyFolders(sub);
            if (!Directory.EnumerateFileSystemEntries(sub).Any())
            {
                Directory.Delete(sub);
            }
        }
    }

    /// <summary>Each job without its raw per-sample "measurements" and its "metadata" (descriptions).</summary>
    private static void StripSamples(JsonObject run)
    {
        if (run["jobResults"] is JsonObject { } results && results["jobs"] is JsonObject jobs)
        {
            foreach (var job in jobs.Select(j => j.Value).OfType<JsonObject>())
            {
                job.Remove("measurements");
                job.Remove("metadata");
            }
        }
    }

    /// <summary>The first of each "file", ordered by "file" (ordinal; one without a "file" before every other).</summary>
    private static List<JsonObject> UniqueByFile(List<JsonObject> items)
    {
        static string? Key(JsonObject o) => o["file"] is JsonValue v && v.TryGetValue<string>(out var s) ? s : null;
        return items.Select((o, i) => (Key: Key(o), Index: i, Item: o))
            .GroupBy(x => x.Key ?? "\0null")
            .Select(g => g.First())
            .OrderBy(x => x.Key is not null)
            .ThenBy(x => x.Key, StringComparer.Ordinal)
            .Select(x => x.Item)
            .ToList();
    }

    private static JsonObject Child(JsonObject parent, string name, string file)
    {
        switch (parent[name])
        {
            case JsonObject o:
                return o;
            case null:
                var created = new JsonObject();
                parent[name] = created;
                return created;
            default:
                throw new ReportException($"{file}: \"{name}\" is not an object");
        }
    }

    private static IEnumerable<JsonObject> Objects(string file, JsonNode? list)
    {
        if (list is null)
        {
            yield break;
        }
        if (list is not JsonArray array)
        {
            throw new ReportException($"{file}: expected an array of runs and of metas");
        }
        foreach (var item in array.ToList())
        {
            array.Remove(item);
            yield return item as JsonObject ?? throw new ReportException($"{file}: an element is not a JSON object");
        }
    }

    private static JsonNode? Parse(string file)
    {
        try
        {
            return JsonNode.Parse(File.ReadAllBytes(file));
        }
        catch (JsonException e)
        {
            throw new ReportException($"{file}: not valid JSON: {e.Message}");
        }
    }

    private static string Relative(string dir, string file) => Path.GetRelativePath(dir, file).Replace(Path.DirectorySeparatorChar, '/');

    [GeneratedRegex(@"\.r[0-9]+\.json$")]
    private static partial Regex RoundFile();

    [GeneratedRegex("^r([0-9]+)$")]
    private static partial Regex RoundFolder();
}

/// <summary>
/// GNU sort -V's order, near enough for paths: runs of digits compare as numbers, other characters as in Debian
/// versions (letters before other characters), so r2 comes before r10 and c32-s10 before c256-s10.
/// </summary>
internal sealed class VersionOrder : IComparer<string>
{
    public static readonly VersionOrder Instance = new();

    public int Compare(string? x, string? y)
    {
        x ??= "";
        y ??= "";
        int i = 0, j = 0;
        while (i < x.Length || j < y.Length)
        {
            while ((i < x.Length && !char.IsAsciiDigit(x[i])) || (j < y.Length && !char.IsAsciiDigit(y[j])))
            {
                var c = Weight(x, i) - Weight(y, j);
                if (c != 0)
                {
                    return c;
                }
                i++;
                j++;
            }
            int si = i, sj = j;
            while (i < x.Length && x[i] == '0')
            {
                si = ++i;
            }
            while (j < y.Length && y[j] == '0')
            {
                sj = ++j;
            }
            while (i < x.Length && char.IsAsciiDigit(x[i]))
            {
                i++;
            }
            while (j < y.Length && char.IsAsciiDigit(y[j]))
            {
                j++;
            }
            var digits = (i - si) - (j - sj);
            if (digits != 0)
            {
                return digits;
            }
            var d = string.CompareOrdinal(x, si, y, sj, i - si);
            if (d != 0)
            {
                return d;
            }
        }
        return string.CompareOrdinal(x, y);
    }

    // Debian's order of the characters between numbers: '~' first, then the end, letters, and everything else.
    private static int Weight(string s, int i) =>
        i >= s.Length || char.IsAsciiDigit(s[i]) ? 0
        : s[i] == '~' ? -1
        : char.IsAsciiLetter(s[i]) ? s[i]
        : s[i] + 256;
}
