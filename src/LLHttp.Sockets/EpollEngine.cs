using System.Runtime.InteropServices;
using static LLHttp.Sockets.Native;

namespace LLHttp.Sockets;

/// <summary>
/// LLHttp's own socket engine: one thread per core, each waiting in its own epoll set, each socket in one set for its
/// life, registered once edge-triggered for reading and writing. It differs from the runtime's engine in two ways,
/// and both save a system call per exchange:
/// <list type="bullet">
/// <item>A receive that returned fewer bytes than it asked for drained the socket, so the next receive waits for the
/// next readiness event instead of trying first and getting EAGAIN (the runtime tries every receive first).</item>
/// <item>The readiness events of an idle connection are kept, so whether the peer closed it (or sent bytes nobody
/// asked for) is known without a poll.</item>
/// </list>
/// Completions run on the engine's thread, as with the runtime's inline socket completions. Linux on x86-64 only.
/// </summary>
public static class EpollEngine
{
    public static bool IsSupported { get; } = OperatingSystem.IsLinux() && RuntimeInformation.ProcessArchitecture == Architecture.X64;

    /// <summary>
    /// How many loop threads the engine starts, each with its own epoll set (default: one per core, as the runtime's
    /// engine with inline completions). Read once, when the first socket registers; changing it after that throws.
    /// </summary>
    public static int ThreadCount
    {
        get => s_threadCount;
        set
        {
            ArgumentOutOfRangeException.ThrowIfLessThan(value, 1);
            lock (s_lock)
            {
                if (s_loops is not null && value != s_threadCount)
                {
                    throw new InvalidOperationException("The epoll engine has started; its thread count is fixed.");
                }

                s_threadCount = value;
            }
        }
    }

    private static readonly Lock s_lock = new();
    private static int s_threadCount = Environment.ProcessorCount;
    private static Loop[]? s_loops;
    private static int s_nextLoop;

    // The loop whose thread this is (null on every other thread).
    [ThreadStatic]
    private static Loop? t_loop;

    // Registered sockets by slot; an event carries (registration number << 32 | slot), so an event that arrives for a
    // socket after it left its slot (the slot may hold another socket by then) is recognised and dropped.
    private static EpollSocket?[] s_slots = new EpollSocket?[256];
    private static readonly Stack<int> s_freeSlots = new();
    private static int s_slotsUsed;
    private static uint s_registrations;

    internal static unsafe void Register(EpollSocket socket)
    {
        Loop loop;
        lock (s_lock)
        {
            s_loops ??= StartLoops();
            int slot;
            if (!s_freeSlots.TryPop(out slot))
            {
                if (s_slotsUsed == s_slots.Length)
                {
                    var grown = new EpollSocket?[s_slots.Length * 2];
                    Array.Copy(s_slots, grown, s_slots.Length);
                    Volatile.Write(ref s_slots, grown);
                }

                slot = s_slotsUsed++;
            }

            socket.Token = ((ulong)++s_registrations << 32) | (uint)slot;
            s_slots[slot] = socket;
            // A socket opened by code that runs on a loop (a downstream connection opened for a client connection's
            // request) joins that loop, so the whole exchange runs on one thread and neither side waits for the other
            // thread to wake up; any other socket goes to the loops in turn.
            loop = t_loop ?? s_loops[s_nextLoop++ % s_loops.Length];
        }

        // Stored before it is added: the first event can come as soon as it is.
        socket.LoopEpollFd = loop.EpollFd;
        var ev = new EpollEvent { Events = EpollIn | EpollOut | EpollRdHup | EpollEt, Data = socket.Token };
        if (epoll_ctl(loop.EpollFd, EpollCtlAdd, socket.Fd, &ev) != 0)
        {
            int errno = Marshal.GetLastPInvokeError();
            Release(socket);
            throw new System.Net.Sockets.SocketException((int)ToSocketError(errno));
        }
    }

    /// <summary>Takes the socket out of its epoll set and frees its slot; call before the descriptor is closed.</summary>
    internal static unsafe void Unregister(EpollSocket socket)
    {
        // Fails only if the descriptor is already gone, and closing it removes it from the set anyway.
        _ = epoll_ctl(socket.LoopEpollFd, EpollCtlDel, socket.Fd, null);
        Release(socket);
    }

    private static void Release(EpollSocket socket)
    {
        lock (s_lock)
        {
            int slot = (int)(uint)socket.Token;
            if (s_slots[slot] == socket)
            {
                s_slots[slot] = null;
                s_freeSlots.Push(slot);
            }
        }
    }

    /// <summary>
    /// On an engine thread, runs <paramref name="callback"/> once every event of the current epoll_wait batch has been
    /// dispatched (the caller dedupes; the same callback deferred twice runs twice), and returns true; elsewhere returns
    /// false and the caller acts at once. A connection that writes what several events produced (responses from
    /// several downstream connections, frames of several streams) writes them once per pass instead of once per event,
    /// as event-loop servers batch their writes.
    /// </summary>
    public static bool TryDeferToBatchEnd(IBatchEndCallback callback)
    {
        var loop = t_loop;
        if (loop is null)
        {
            return false;
        }

        loop.Deferred.Add(callback);
        return true;
    }

    private static void Dispatch(ulong token, uint events)
    {
        // Read after epoll_wait returned: a socket added to a grown array was stored before its epoll_ctl.
        var slots = Volatile.Read(ref s_slots);
        uint slot = (uint)token;
        if (slot < (uint)slots.Length && slots[slot] is { } socket && socket.Token == token)
        {
            socket.OnEvents(events);
        }
    }

    private static Loop[] StartLoops()
    {
        var loops = new Loop[s_threadCount];
        for (int i = 0; i < loops.Length; i++)
        {
            loops[i] = new Loop(i);
        }

        return loops;
    }

    private sealed unsafe class Loop
    {
        // Events taken per epoll_wait; more wait for the next call. The runtime's engine takes 1,024; a smaller batch
        // keeps the events a long batch of inline continuations delays few.
        private const int MaxEvents = 256;

        public int EpollFd { get; }

        // Callbacks for the end of the current batch, touched by the loop's own thread only.
        public List<IBatchEndCallback> Deferred { get; } = [];

        // Completions run inline here, so a failure escaping one (a bug in the code it resumed) would end the thread and
        // with it the process and every other connection: it is written to stderr, as the runtime writes an unhandled
        // exception, and the loop goes on with the next event.
        private static void Report(Exception e) =>
            Console.Error.WriteLine($"LLHttp epoll engine: a completion failed on the engine thread: {e}");

        public Loop(int index)
        {
            EpollFd = epoll_create1(EpollCloexec);
            if (EpollFd < 0)
            {
                throw new System.Net.Sockets.SocketException((int)ToSocketError(Marshal.GetLastPInvokeError()));
            }

            new Thread(Run) { IsBackground = true, Name = $"LLHttp epoll {index}" }.Start();
        }

        private void Run()
        {
            t_loop = this;
            var events = (EpollEvent*)NativeMemory.Alloc(MaxEvents, (nuint)sizeof(EpollEvent));
            while (true)
            {
                int count = epoll_wait(EpollFd, events, MaxEvents, -1);
                if (count < 0)
                {
                    int errno = Marshal.GetLastPInvokeError();
                    if (errno == EIntr)
                    {
                        continue;
                    }

                    Environment.FailFast($"LLHttp epoll engine: epoll_wait failed with errno {errno}.");
                }

                for (int i = 0; i < count; i++)
                {
                    try
                    {
                        Dispatch(events[i].Data, events[i].Events);
                    }
                    catch (Exception e)
                    {
                        Report(e);
                    }
                }

                // A callback may defer another (its work woke code that wrote again): the list is read as it grows.
                var deferred = Deferred;
                for (int i = 0; i < deferred.Count; i++)
                {
                    try
                    {
                        deferred[i].OnBatchEnd();
                    }
                    catch (Exception e)
                    {
                        Report(e);
                    }
                }

                deferred.Clear();
            }
        }
    }
}

/// <summary>Work to run at the end of an epoll engine thread's batch of events (<see cref="EpollEngine.TryDeferToBatchEnd"/>).</summary>
public interface IBatchEndCallback
{
    void OnBatchEnd();
}
