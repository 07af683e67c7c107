using System.Net.Sockets;

namespace LLHttp.Sockets;

/// <summary>The receive buffer of a socket about to connect, the same on either engine.</summary>
public static class ReceiveBuffer
{
    /// <summary>Sets SO_RCVBUF on a socket about to connect (before, so the window scale fits it); 0 leaves the kernel's.</summary>
    public static void Set(Socket socket, int receiveBufferSize)
    {
        if (receiveBufferSize > 0)
        {
            socket.ReceiveBufferSize = receiveBufferSize;
        }
    }
}
