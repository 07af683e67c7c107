namespace LLRP.Analysis;

/// <summary>The checkout the tools belong to: one definition, linked into the runner and the report.</summary>
internal static class Checkout
{
    /// <summary>The checkout this build belongs to (LLRP_ROOT, else the folder above the assembly that holds LLRP.slnx).</summary>
    public static string Root()
    {
        if (Environment.GetEnvironmentVariable("LLRP_ROOT") is { Length: > 0 } root)
        {
            return Path.GetFullPath(root);
        }
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "LLRP.slnx")))
            {
                return dir.FullName;
            }
        }
        throw new DirectoryNotFoundException($"no LLRP.slnx above {AppContext.BaseDirectory}: set LLRP_ROOT");
    }
}
