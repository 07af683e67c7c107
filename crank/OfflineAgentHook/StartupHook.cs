using LLRP.OfflineAgentHook;

/// <summary>
/// Loaded by the runtime before crank-agent's Main when DOTNET_STARTUP_HOOKS names this assembly (the runtime looks
/// for a type called StartupHook outside any namespace with a static Initialize method).
/// </summary>
internal static class StartupHook
{
    public static void Initialize()
    {
        try
        {
            var script = AgentPatch.Apply(Environment.GetEnvironmentVariable(AgentPatch.InstallDirVariable), AgentPatch.FindAgentStartup);
            Console.WriteLine($"[offline-agent-hook] dotnet-install.sh pinned at {script}; the agent will not download it");
        }
        catch (AgentPatchException e)
        {
            // The agent would die on its first job anyway ("Failed to download dotnet-install.sh"): stop now, saying why.
            Console.Error.WriteLine($"[offline-agent-hook] {e.Message}");
            Environment.Exit(3);
        }
    }
}
