namespace LLRP.Hosting;

/// <summary>
/// The runtime half of --inlineScheduling. Kestrel's UnsafePreferInlineScheduling only stops Kestrel from hopping to
/// its IOQueue; the socket engine still hands every completion (Kestrel's and LLHttp's downstream sockets) to the
/// thread pool unless DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS is "1". The runtime reads that variable once, into a
/// static of SocketAsyncEngine, when the first socket of the process registers with epoll; it has no AppContext switch,
/// so runtimeconfig.json cannot set it. On Unix the managed environment is what the runtime reads, so setting it here,
/// before Kestrel binds and before any downstream connection, takes effect. Visible from outside: the runtime sizes its
/// engine from the same static, so with the variable in effect the process runs one ".NET Sockets" thread per core
/// instead of one (analysis/ab-options.sh records the count for every run). Either half alone was measured slower than
/// neither: more context switches, and the work still crosses threads once (docs/methodology.md, "Decisions and their
/// evidence").
/// </summary>
public static class InlineSocketCompletions
{
    public const string Variable = "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS";

    /// <summary>Sets the variable when inline scheduling is on; leaves the environment alone otherwise.</summary>
    public static void Request(bool inline)
    {
        if (inline)
        {
            Environment.SetEnvironmentVariable(Variable, "1");
        }
    }
}
