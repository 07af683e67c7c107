using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace LLHttp.Sockets;

/// <summary>The Linux calls the epoll engine makes, with their constants (x86-64 values, from the kernel's UAPI headers).</summary>
internal static unsafe partial class Native
{
    public const int EpollCloexec = 0x80000;
    public const int EpollCtlAdd = 1;
    public const int EpollCtlDel = 2;

    public const uint EpollIn = 0x001;
    public const uint EpollOut = 0x004;
    public const uint EpollErr = 0x008;
    public const uint EpollHup = 0x010;
    public const uint EpollRdHup = 0x2000;
    public const uint EpollEt = 1u << 31;

    public const int MsgPeek = 0x02;
    public const int MsgDontWait = 0x40;
    public const int MsgNoSignal = 0x4000;

    public const int EIntr = 4;
    public const int EAgain = 11;

    public const int FDupFdCloexec = 1030;
    public const int SolSocket = 1;
    public const int SoError = 4;
    public const int SoRcvBuf = 8;

    /// <summary>struct epoll_event, which x86-64 packs to 12 bytes (the reason the engine runs on x86-64 only).</summary>
    [StructLayout(LayoutKind.Sequential, Pack = 4)]
    public struct EpollEvent
    {
        public uint Events;
        public ulong Data;
    }

    [LibraryImport("libc", SetLastError = true)]
    public static partial int epoll_create1(int flags);

    [LibraryImport("libc", SetLastError = true)]
    public static partial int epoll_ctl(int epfd, int op, int fd, EpollEvent* ev);

    [LibraryImport("libc", SetLastError = true)]
    public static partial int epoll_wait(int epfd, EpollEvent* events, int maxEvents, int timeout);

    [LibraryImport("libc", SetLastError = true)]
    public static partial nint recv(int fd, byte* buffer, nuint length, int flags);

    [LibraryImport("libc", SetLastError = true)]
    public static partial nint send(int fd, byte* buffer, nuint length, int flags);

    /// <summary>fcntl with an int argument (F_DUPFD_CLOEXEC here); the x86-64 calling convention passes it as the variadic call does.</summary>
    [LibraryImport("libc", SetLastError = true)]
    public static partial int fcntl(int fd, int cmd, int arg);

    [LibraryImport("libc", SetLastError = true)]
    public static partial int close(int fd);

    /// <summary>shutdown(2); SocketShutdown's values are SHUT_RD, SHUT_WR and SHUT_RDWR.</summary>
    [LibraryImport("libc", SetLastError = true)]
    public static partial int shutdown(int fd, int how);

    [LibraryImport("libc", SetLastError = true)]
    public static partial int getsockopt(int fd, int level, int name, int* value, int* length);

    [LibraryImport("libc", SetLastError = true)]
    public static partial int getpeername(int fd, byte* address, int* length);

    /// <summary>The SocketError a failed recv, send or connect reports, as the runtime's own sockets report it.</summary>
    public static SocketError ToSocketError(int errno) => errno switch
    {
        EAgain => SocketError.WouldBlock,
        32 => SocketError.Shutdown, // EPIPE
        103 => SocketError.ConnectionAborted, // ECONNABORTED
        104 => SocketError.ConnectionReset, // ECONNRESET
        107 => SocketError.NotConnected, // ENOTCONN
        110 => SocketError.TimedOut, // ETIMEDOUT
        111 => SocketError.ConnectionRefused, // ECONNREFUSED
        113 => SocketError.HostUnreachable, // EHOSTUNREACH
        101 => SocketError.NetworkUnreachable, // ENETUNREACH
        99 => SocketError.AddressNotAvailable, // EADDRNOTAVAIL
        100 => SocketError.NetworkDown, // ENETDOWN
        112 => SocketError.HostDown, // EHOSTDOWN
        9 => SocketError.OperationAborted, // EBADF
        _ => SocketError.SocketError,
    };
}
