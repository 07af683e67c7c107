using System.Text.Json.Nodes;

namespace LLRP.Analysis.Tests;

/// <summary>Folds a results folder as analysis/aggregate.sh --prune does: every per-run file into sitting.json's "runs",
/// each with its path under the folder as "file", and the per-run files deleted.</summary>
internal static class Folding
{
    public static void Fold(string dir)
    {
        var runs = new JsonArray();
        foreach (var file in Directory.EnumerateFiles(dir, "*.r*.json", SearchOption.AllDirectories).Order(StringComparer.Ordinal).ToList())
        {
            var run = JsonNode.Parse(File.ReadAllText(file))!.AsObject();
            run["file"] = Path.GetRelativePath(dir, file).Replace(Path.DirectorySeparatorChar, '/');
            runs.Add(run);
            File.Delete(file);
        }
        File.WriteAllText(Path.Combine(dir, "sitting.json"), new JsonObject { ["runs"] = runs, ["metas"] = new JsonArray() }.ToJsonString());
    }
}
