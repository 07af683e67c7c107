using System.Net;
using System.Net.Sockets;

namespace LLRP.Tests.Infrastructure;

/// <summary>
/// A loopback port with no listener, held so that nothing else takes it: connecting to it is refused for as long as
/// this is not disposed. The socket is bound and never listens; the kernel gives a held port to no other bind to port
/// 0 and to no outgoing connection. A port that was merely free a moment ago is not enough: tests run in parallel, and
/// another test's proxy or downstream may bind it meanwhile and receive what was meant to be refused.
/// </summary>
public sealed class RefusingPort : IDisposable
{
    private readonly Socket _socket = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);

    /// <param name="port">0 for any free port; or the port of a listener just stopped, held from now on.</param>
    public RefusingPort(int port = 0)
    {
        _socket.Bind(new IPEndPoint(IPAddress.Loopback, port));
        Port = ((IPEndPoint)_socket.LocalEndPoint!).Port;
    }

    public int Port { get; }

    /// <summary>http://127.0.0.1:PORT, without a trailing slash.</summary>
    public string Url => $"http://127.0.0.1:{Port}";

    public void Dispose() => _socket.Dispose();
}
