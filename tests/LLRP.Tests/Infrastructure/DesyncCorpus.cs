namespace LLRP.Tests.Infrastructure;

/// <summary>
/// Where the aws/http-desync-guardian request corpus is read from. The corpus is required: without it the tests that
/// use it fail with one message saying where it was looked for and how to get it, never a silent skip.
/// </summary>
public static class DesyncCorpus
{
    /// <summary>A path to cases.json, or to the folder holding it, overriding the search.</summary>
    public const string Variable = "LLRP_DESYNC_CORPUS";

    /// <summary>Searched for in the test assembly's folder and every folder above it.</summary>
    public const string Relative = "shared/data/http-desync-guardian/cases.json";

    /// <summary>The label of the one test row that stands for the whole corpus when it is missing.</summary>
    public const string MissingLabel = "desync-guardian corpus missing";

    /// <summary>The corpus file, or null with <paramref name="missing"/> explaining where it was looked for and how to get it.</summary>
    public static string? Find(out string missing)
    {
        missing = "";
        var overridden = Environment.GetEnvironmentVariable(Variable);
        if (!string.IsNullOrEmpty(overridden))
        {
            var file = Directory.Exists(overridden) ? Path.Combine(overridden, "cases.json") : overridden;
            if (File.Exists(file))
            {
                return file;
            }
            missing = $"The desync-guardian corpus was not found: {Variable} is '{overridden}', and {file} does not exist. {HowToGet}";
            return null;
        }
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            var candidate = Path.Combine(dir.FullName, Relative);
            if (File.Exists(candidate))
            {
                return candidate;
            }
        }
        missing = $"The desync-guardian corpus was not found: {Variable} is not set, and no folder above {AppContext.BaseDirectory} holds {Relative}. {HowToGet}";
        return null;
    }

    private const string HowToGet =
        "Get the request cases from https://github.com/aws/http-desync-guardian (Apache-2.0, folder tests/, one YAML file per group), " +
        "convert them to one JSON object keyed by YAML file name whose values are that file's case lists, save it as cases.json, " +
        $"and set {Variable} to that file or its folder.";
}
