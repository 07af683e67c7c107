namespace LLHttp.Sockets;

/// <summary>What carries a connection's socket I/O.</summary>
public enum LLHttpSocketEngine
{
    /// <summary>The runtime's System.Net.Sockets engine: every platform.</summary>
    Runtime,

    /// <summary>
    /// LLHttp's own epoll engine: Linux on x86-64. Saves two system calls per exchange against <see cref="Runtime"/>:
    /// the receive that finds nothing yet (the runtime tries each receive before it waits), and the poll of an idle
    /// connection before reuse (its readiness events are kept instead). Completions run on the engine's threads.
    /// </summary>
    Epoll,
}

/// <summary>Where each engine runs.</summary>
public static class LLHttpSocketEngineExtensions
{
    /// <summary>Whether this process can use the engine.</summary>
    public static bool IsSupported(this LLHttpSocketEngine engine)
        => engine != LLHttpSocketEngine.Epoll || EpollEngine.IsSupported;
}
