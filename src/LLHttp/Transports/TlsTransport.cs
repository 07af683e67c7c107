using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;

namespace LLHttp.Transports;

/// <summary>
/// TLS over another transport (either socket engine): an <see cref="SslStream"/> reads and writes through
/// <see cref="TransportStream"/>, so the engine underneath keeps its own readiness handling and idle checks.
/// </summary>
internal sealed class TlsTransport : Transport
{
    private readonly Transport _inner;
    private readonly SslStream _ssl;

    private TlsTransport(Transport inner, SslStream ssl)
    {
        _inner = inner;
        _ssl = ssl;
    }

    /// <summary>
    /// Runs the client handshake over <paramref name="inner"/>, which this transport owns from then on (disposed with
    /// it, or here when the handshake fails). A refused certificate or protocol throws the handshake's
    /// <see cref="AuthenticationException"/>, which the connection reports as LLHttpError.TlsHandshakeFailed.
    /// </summary>
    public static async ValueTask<Transport> AuthenticateAsync(Transport inner, SslClientAuthenticationOptions options, CancellationToken cancellationToken)
    {
        var ssl = new SslStream(new TransportStream(inner), leaveInnerStreamOpen: false);
        try
        {
            await ssl.AuthenticateAsClientAsync(options, cancellationToken).ConfigureAwait(false);
            return new TlsTransport(inner, ssl);
        }
        catch (Exception e)
        {
            await ssl.DisposeAsync().ConfigureAwait(false);
            throw Unwrap(e);
        }
    }

    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        var read = _ssl.ReadAsync(buffer, cancellationToken);
        return read.IsCompletedSuccessfully ? read : ReceiveSlowAsync(read);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private static async ValueTask<int> ReceiveSlowAsync(ValueTask<int> read)
    {
        try
        {
            return await read.ConfigureAwait(false);
        }
        catch (IOException e)
        {
            throw Unwrap(e);
        }
    }

    public override ValueTask SendAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken)
    {
        var write = _ssl.WriteAsync(buffer, cancellationToken);
        return write.IsCompletedSuccessfully ? write : SendSlowAsync(write);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private static async ValueTask SendSlowAsync(ValueTask write)
    {
        try
        {
            await write.ConfigureAwait(false);
        }
        catch (IOException e)
        {
            throw Unwrap(e);
        }
    }

    // Any byte on an idle connection is a close_notify, a close or something unasked for: none may carry a request.
    // (TLS 1.3 session tickets arrive right after the handshake and are read with the first response.)
    public override bool IsReadableWhileIdle() => _inner.IsReadableWhileIdle();

    public override int ReceiveBufferSize => _inner.ReceiveBufferSize;

    /// <summary>The protocol ALPN selected (RFC 7301; h2 for an HTTP/2 connection, RFC 9113 §3.2), empty when none.</summary>
    public SslApplicationProtocol NegotiatedApplicationProtocol => _ssl.NegotiatedApplicationProtocol;

    public override void Dispose() => _ssl.Dispose();

    /// <summary>
    /// close_notify, then the FIN of the socket underneath: RFC 8446 §6.1 lets each side close its write side alone, and
    /// the peer reads the alert as the end of the stream while it may still send.
    /// </summary>
    public override async ValueTask<bool> ShutdownSendAsync()
    {
        await _ssl.ShutdownAsync().ConfigureAwait(false);
        return await _inner.ShutdownSendAsync().ConfigureAwait(false);
    }

    /// <summary>
    /// close_notify, then the socket: RFC 8446 §6.1 asks for the alert before a party closes its write side, and an
    /// origin such as OpenSSL reports a close without one as an unexpected EOF. The connection is idle, so the alert's
    /// few bytes go into an empty socket buffer and the send completes at once; one that would wait (an origin that
    /// stopped reading) is not waited for, and the socket closes under it, as an abort does.
    /// </summary>
    public override void Close()
    {
        try
        {
            var shutdown = _ssl.ShutdownAsync();
            if (!shutdown.IsCompletedSuccessfully)
            {
                // Its failure, now or once the socket closes under it, is observed and dropped.
                _ = shutdown.ContinueWith(static t => t.Exception, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            }
        }
        catch (Exception e) when (e is IOException or InvalidOperationException or ObjectDisposedException or NotSupportedException)
        {
            // The origin closed first, or the stream failed earlier: nothing to say.
        }
        Dispose();
    }

    /// <summary>
    /// SslStream reports a failure of the socket underneath as an IOException around it; the socket's own exception is
    /// what the connection classifies (a reset on a stale pooled connection is retried, as over TCP).
    /// </summary>
    private static Exception Unwrap(Exception e) => e is IOException { InnerException: SocketException socket } ? socket : e;

    /// <summary>The transport as the Stream SslStream reads records from and writes records to; asynchronous only.</summary>
    private sealed class TransportStream(Transport transport) : Stream
    {
        public override bool CanRead => true;
        public override bool CanWrite => true;
        public override bool CanSeek => false;

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) =>
            transport.ReceiveAsync(buffer, cancellationToken);

        public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default) =>
            transport.SendAsync(buffer, cancellationToken);

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

        public override void Flush()
        {
        }

        // SslStream is only ever used asynchronously here.
        public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();
        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
        public override long Length => throw new NotSupportedException();
        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }
        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
        public override void SetLength(long value) => throw new NotSupportedException();

        protected override void Dispose(bool disposing)
        {
            if (disposing)
            {
                transport.Dispose();
            }
            base.Dispose(disposing);
        }
    }
}
