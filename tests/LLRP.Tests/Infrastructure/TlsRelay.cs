using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;

namespace LLRP.Tests.Infrastructure;

/// <summary>
/// An https downstream for the proxy: terminates TLS with <paramref name="certificate"/> and relays the plaintext both
/// ways to a <see cref="RecordingDownstream"/>, which records it as usual. One relay per accepted connection.
/// </summary>
public sealed class TlsRelay(X509Certificate2 certificate, int targetPort) : IAsyncDisposable
{
    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly CancellationTokenSource _stop = new();
    private Task? _accepting;
    private int _handshakesFailed;

    public int Port => ((IPEndPoint)_listener.LocalEndpoint).Port;

    /// <summary>Handshakes the proxy did not complete (it refused the certificate, as it must for a bad one).</summary>
    public int HandshakesFailed => Volatile.Read(ref _handshakesFailed);

    public void Start()
    {
        _listener.Start();
        _accepting = AcceptAsync();
    }

    private async Task AcceptAsync()
    {
        while (!_stop.IsCancellationRequested)
        {
            Socket client;
            try
            {
                client = await _listener.AcceptSocketAsync(_stop.Token);
            }
            catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
            {
                return;
            }
            _ = RelayAsync(client);
        }
    }

    private async Task RelayAsync(Socket client)
    {
        await using var tls = new SslStream(new NetworkStream(client, ownsSocket: true));
        try
        {
            await tls.AuthenticateAsServerAsync(new SslServerAuthenticationOptions { ServerCertificate = certificate }, _stop.Token);
        }
        catch (Exception)
        {
            Interlocked.Increment(ref _handshakesFailed);
            return;
        }
        using var target = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        try
        {
            await target.ConnectAsync(new IPEndPoint(IPAddress.Loopback, targetPort), _stop.Token);
            await using var plain = new NetworkStream(target, ownsSocket: false);
            var up = CopyAsync(tls, plain, () => target.Shutdown(SocketShutdown.Send));
            var down = CopyAsync(plain, tls, () => client.Shutdown(SocketShutdown.Send));
            await Task.WhenAll(up, down);
        }
        catch (Exception)
        {
            // Either side went away: the relay ends with it.
        }
    }

    private async Task CopyAsync(Stream from, Stream to, Action endOfInput)
    {
        var buffer = new byte[16 * 1024];
        int read;
        while ((read = await from.ReadAsync(buffer, _stop.Token)) > 0)
        {
            await to.WriteAsync(buffer.AsMemory(0, read), _stop.Token);
        }
        endOfInput();
    }

    public async ValueTask DisposeAsync()
    {
        _stop.Cancel();
        _listener.Stop();
        if (_accepting is not null)
        {
            await _accepting;
        }
        _stop.Dispose();
    }
}
