using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text;

namespace LLRP.Soak;

/// <summary>How one response ended, as the client saw it.</summary>
internal enum Outcome
{
    /// <summary>Status 200, framed completely, body length and SHA-256 as expected.</summary>
    Ok,
    /// <summary>A complete 502, 503 or 504: the proxy's clean answer when the origin is gone.</summary>
    ErrorAnswer,
    /// <summary>The connection closed before a status line.</summary>
    NoAnswer,
    /// <summary>The response started and the connection closed (or reset) before its framing was complete.</summary>
    Cut,
    /// <summary>No progress within <see cref="Wire.ReadTimeout"/>.</summary>
    Hung,
    /// <summary>A complete response whose status, framing, length or SHA-256 is wrong: corruption.</summary>
    Corrupt,
}

/// <summary>What the client expects of a response body.</summary>
internal readonly record struct Expected(long Length, byte[] Sha256);

/// <summary>One client connection to the proxy and a strict HTTP/1.1 response reader over it.</summary>
internal sealed class Wire : IDisposable
{
    /// <summary>How long a response may make no progress: far beyond any answer the soak asks for (the origin answers
    /// at once; a restart takes a few seconds), far below the proxy's own timeouts (downstreamResponseTimeout 100 s).</summary>
    public static readonly TimeSpan ReadTimeout = TimeSpan.FromSeconds(30);

    // Largest response head accepted: the origin's heads are a few hundred bytes.
    private const int MaxHead = 16 * 1024;

    private readonly Socket _socket;
    private readonly byte[] _buffer = new byte[64 * 1024];
    private int _start;
    private int _end;

    private Wire(Socket socket) => _socket = socket;

    public int Requests { get; set; }

    public static async Task<Wire> ConnectAsync(int port, CancellationToken cancel)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        try
        {
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancel);
            timeout.CancelAfter(ReadTimeout);
            await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port), timeout.Token);
            return new Wire(socket);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    public async Task SendAsync(ReadOnlyMemory<byte> bytes, int pieceLength, TimeSpan pause, CancellationToken cancel)
    {
        while (!bytes.IsEmpty)
        {
            var piece = bytes[..Math.Min(pieceLength, bytes.Length)];
            await _socket.SendAsync(piece, SocketFlags.None, cancel);
            bytes = bytes[piece.Length..];
            if (!bytes.IsEmpty && pause > TimeSpan.Zero)
            {
                await Task.Delay(pause, cancel);
            }
        }
    }

    public void ShutdownSend()
    {
        try
        {
            _socket.Shutdown(SocketShutdown.Send);
        }
        catch (SocketException)
        {
        }
    }

    /// <summary>Whether the peer closes the connection (reads end) within <paramref name="within"/>, all input discarded.</summary>
    public async Task<bool> ClosedByPeerAsync(TimeSpan within, CancellationToken cancel)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancel);
        timeout.CancelAfter(within);
        try
        {
            while (await _socket.ReceiveAsync(_buffer, SocketFlags.None, timeout.Token) > 0)
            {
            }
            return true;
        }
        catch (SocketException)
        {
            return true;
        }
        catch (OperationCanceledException) when (!cancel.IsCancellationRequested)
        {
            return false;
        }
    }

    /// <summary>
    /// Reads one response. <paramref name="slowRead"/> reads the body in small pieces with pauses (a slow client).
    /// Returns the outcome, the status and whether the proxy said it closes the connection.
    /// </summary>
    public async Task<(Outcome Outcome, int Status, bool Close, string Detail)> ReadResponseAsync(Expected expected, bool slowRead, CancellationToken cancel)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancel);
        timeout.CancelAfter(ReadTimeout);
        var started = false;
        try
        {
            int headEnd;
            while ((headEnd = _buffer.AsSpan(_start, _end - _start).IndexOf("\r\n\r\n"u8)) < 0)
            {
                if (_end - _start > MaxHead)
                {
                    return (Outcome.Corrupt, 0, true, "response head too large");
                }
                if (!await FillAsync(timeout.Token))
                {
                    return (started || _end > _start ? Outcome.Cut : Outcome.NoAnswer, 0, true, "closed before a complete head");
                }
                started = true;
            }
            started = true;
            var head = Encoding.Latin1.GetString(_buffer, _start, headEnd);
            _start += headEnd + 4;
            var lines = head.Split("\r\n");
            var statusLine = lines[0].Split(' ', 3);
            if (statusLine.Length < 2 || statusLine[0] != "HTTP/1.1" || !int.TryParse(statusLine[1], NumberStyles.None, CultureInfo.InvariantCulture, out var status))
            {
                return (Outcome.Corrupt, 0, true, $"bad status line '{lines[0]}'");
            }
            long? length = null;
            var chunked = false;
            var close = false;
            foreach (var line in lines.AsSpan(1))
            {
                var colon = line.IndexOf(':');
                if (colon <= 0)
                {
                    return (Outcome.Corrupt, status, true, $"bad field line '{line}'");
                }
                var name = line[..colon];
                var value = line[(colon + 1)..].Trim();
                if (name.Equals("Content-Length", StringComparison.OrdinalIgnoreCase))
                {
                    if (length is not null || !long.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out var l))
                    {
                        return (Outcome.Corrupt, status, true, $"bad or repeated Content-Length '{value}'");
                    }
                    length = l;
                }
                else if (name.Equals("Transfer-Encoding", StringComparison.OrdinalIgnoreCase))
                {
                    if (!value.Equals("chunked", StringComparison.OrdinalIgnoreCase))
                    {
                        return (Outcome.Corrupt, status, true, $"unexpected Transfer-Encoding '{value}'");
                    }
                    chunked = true;
                }
                else if (name.Equals("Connection", StringComparison.OrdinalIgnoreCase) && value.Contains("close", StringComparison.OrdinalIgnoreCase))
                {
                    close = true;
                }
            }
            if (chunked && length is not null)
            {
                return (Outcome.Corrupt, status, true, "both Content-Length and chunked");
            }

            using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
            long received = 0;
            var complete = chunked
                ? await ReadChunkedAsync(hash, c => received += c, slowRead, timeout.Token)
                : length is { } n
                    ? await ReadExactlyAsync(n, hash, slowRead, timeout.Token)
                    : await ReadToEndAsync(hash, c => received += c, timeout.Token);
            if (!chunked && length is { } declared)
            {
                received = complete == true ? declared : -1;
            }
            if (complete is null)
            {
                return (Outcome.Corrupt, status, true, "bad chunked framing");
            }
            if (complete == false)
            {
                return (Outcome.Cut, status, true, "closed inside the body");
            }
            if (status is 502 or 503 or 504)
            {
                return (Outcome.ErrorAnswer, status, close, "");
            }
            if (status != 200)
            {
                return (Outcome.Corrupt, status, close, $"unexpected status {status}");
            }
            if (received != expected.Length)
            {
                return (Outcome.Corrupt, status, close, $"body of {received} bytes, expected {expected.Length}");
            }
            if (!hash.GetHashAndReset().AsSpan().SequenceEqual(expected.Sha256))
            {
                return (Outcome.Corrupt, status, close, $"SHA-256 of the {received}-byte body differs");
            }
            return (Outcome.Ok, status, close, "");
        }
        catch (OperationCanceledException) when (!cancel.IsCancellationRequested)
        {
            return (Outcome.Hung, 0, true, $"no progress for {ReadTimeout.TotalSeconds} s");
        }
        catch (SocketException e)
        {
            return (started ? Outcome.Cut : Outcome.NoAnswer, 0, true, e.SocketErrorCode.ToString());
        }
    }

    /// <summary>True at the end, false when the connection closed first.</summary>
    private async Task<bool?> ReadExactlyAsync(long length, IncrementalHash hash, bool slowRead, CancellationToken cancel)
    {
        while (length > 0)
        {
            if (_start == _end && !await FillAsync(cancel, slowRead))
            {
                return false;
            }
            var take = (int)Math.Min(length, _end - _start);
            hash.AppendData(_buffer, _start, take);
            _start += take;
            length -= take;
        }
        return true;
    }

    private async Task<bool?> ReadToEndAsync(IncrementalHash hash, Action<long> count, CancellationToken cancel)
    {
        while (true)
        {
            if (_start == _end && !await FillAsync(cancel))
            {
                return true;
            }
            hash.AppendData(_buffer, _start, _end - _start);
            count(_end - _start);
            _start = _end;
        }
    }

    /// <summary>RFC 9112 §7.1, strictly: hex sizes without extensions the origin never sends, CRLF after each chunk,
    /// an empty trailer section. Null on a framing error.</summary>
    private async Task<bool?> ReadChunkedAsync(IncrementalHash hash, Action<long> count, bool slowRead, CancellationToken cancel)
    {
        while (true)
        {
            var line = await ReadLineAsync(cancel);
            if (line is null)
            {
                return false;
            }
            var semicolon = line.IndexOf(';');
            var sizeText = semicolon < 0 ? line : line[..semicolon];
            if (sizeText.Length == 0 || !long.TryParse(sizeText, NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out var size) || size < 0)
            {
                return null;
            }
            if (size == 0)
            {
                // Trailer section: fields until an empty line.
                while (true)
                {
                    var trailer = await ReadLineAsync(cancel);
                    if (trailer is null)
                    {
                        return false;
                    }
                    if (trailer.Length == 0)
                    {
                        return true;
                    }
                }
            }
            var data = await ReadExactlyAsync(size, hash, slowRead, cancel);
            if (data != true)
            {
                return data;
            }
            count(size);
            var end = await ReadLineAsync(cancel);
            if (end is null)
            {
                return false;
            }
            if (end.Length != 0)
            {
                return null;
            }
        }
    }

    private async Task<string?> ReadLineAsync(CancellationToken cancel)
    {
        while (true)
        {
            var at = _buffer.AsSpan(_start, _end - _start).IndexOf("\r\n"u8);
            if (at >= 0)
            {
                var line = Encoding.Latin1.GetString(_buffer, _start, at);
                _start += at + 2;
                return line;
            }
            if (_end - _start > MaxHead || !await FillAsync(cancel))
            {
                return null;
            }
        }
    }

    /// <summary>Receives more; false at the end of the stream. A slow read takes at most 4 KiB, after a pause.</summary>
    private async Task<bool> FillAsync(CancellationToken cancel, bool slow = false)
    {
        if (_start > 0)
        {
            Buffer.BlockCopy(_buffer, _start, _buffer, 0, _end - _start);
            _end -= _start;
            _start = 0;
        }
        if (_end == _buffer.Length)
        {
            throw new InvalidOperationException("the read buffer is full");
        }
        if (slow)
        {
            await Task.Delay(SlowReadPause, cancel);
        }
        var room = _buffer.AsMemory(_end, slow ? Math.Min(SlowReadPiece, _buffer.Length - _end) : _buffer.Length - _end);
        var read = await _socket.ReceiveAsync(room, SocketFlags.None, cancel);
        _end += read;
        return read > 0;
    }

    /// <summary>A slow client reads 4 KiB every 2 ms at most, ~2 MB/s: a 1 MiB body takes about half a second, so the
    /// proxy's backpressure (it stops reading the origin while the client does not read) is exercised every time.</summary>
    private const int SlowReadPiece = 4096;

    private static readonly TimeSpan SlowReadPause = TimeSpan.FromMilliseconds(2);

    public void Dispose() => _socket.Dispose();
}
