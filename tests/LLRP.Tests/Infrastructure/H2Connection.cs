using System.Buffers.Binary;
using System.Net.Sockets;
using System.Text;

namespace LLRP.Tests.Infrastructure;

/// <summary>An HTTP/2 frame as read from the proxy (RFC 9113 §4.1).</summary>
public sealed record H2Frame(byte Type, byte Flags, int StreamId, byte[] Payload)
{
    public const byte Data = 0x0, Headers = 0x1, RstStream = 0x3, Settings = 0x4, Ping = 0x6, GoAway = 0x7, WindowUpdate = 0x8, Continuation = 0x9;
    public const byte EndStream = 0x1, EndHeaders = 0x4, Ack = 0x1;

    /// <summary>GOAWAY's and RST_STREAM's error code.</summary>
    public int ErrorCode => Type == GoAway ? BinaryPrimitives.ReadInt32BigEndian(Payload.AsSpan(4)) : BinaryPrimitives.ReadInt32BigEndian(Payload);

    public override string ToString() => $"type {Type} flags {Flags} stream {StreamId} length {Payload.Length}";
}

/// <summary>
/// A prior-knowledge HTTP/2 client connection (h2c) written by hand, for what a real client library never sends:
/// malformed fields, framing that disagrees with Content-Length, floods of resets and CONTINUATION frames. Field blocks
/// are HPACK literals without indexing and without Huffman coding (RFC 7541 §6.2.2), which every decoder reads.
/// </summary>
public sealed class H2Connection : IAsyncDisposable
{
    private readonly TcpClient _tcp;
    private readonly NetworkStream _stream;

    private H2Connection(TcpClient tcp)
    {
        _tcp = tcp;
        _stream = tcp.GetStream();
    }

    /// <summary>Connects, sends the preface and an empty SETTINGS, and acknowledges the proxy's SETTINGS.</summary>
    public static async Task<H2Connection> OpenAsync(Uri proxy)
    {
        var tcp = new TcpClient();
        await tcp.ConnectAsync(proxy.Host, proxy.Port);
        var connection = new H2Connection(tcp);
        await connection.WriteRawAsync([.. "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"u8, .. Frame(H2Frame.Settings, 0, 0, [])]);
        var settings = await connection.ReadFrameAsync();
        if (settings?.Type != H2Frame.Settings)
        {
            throw new InvalidOperationException($"expected the proxy's SETTINGS, got {settings}");
        }
        await connection.WriteRawAsync(Frame(H2Frame.Settings, H2Frame.Ack, 0, []));
        return connection;
    }

    /// <summary>One frame's bytes.</summary>
    public static byte[] Frame(byte type, byte flags, int streamId, ReadOnlySpan<byte> payload)
    {
        var frame = new byte[9 + payload.Length];
        frame[0] = (byte)(payload.Length >> 16);
        frame[1] = (byte)(payload.Length >> 8);
        frame[2] = (byte)payload.Length;
        frame[3] = type;
        frame[4] = flags;
        BinaryPrimitives.WriteInt32BigEndian(frame.AsSpan(5), streamId);
        payload.CopyTo(frame.AsSpan(9));
        return frame;
    }

    /// <summary>A field block of literal fields, in the order given (pseudo-header fields first, RFC 9113 §8.3).</summary>
    public static byte[] Block(params (string Name, string Value)[] fields)
    {
        var block = new List<byte>();
        foreach (var (name, value) in fields)
        {
            block.Add(0x00);
            AddString(block, name);
            AddString(block, value);
        }
        return [.. block];
    }

    /// <summary>The pseudo-header fields of a request to <paramref name="path"/> on this connection, then <paramref name="fields"/>.</summary>
    public static byte[] Request(string method, string path, params (string Name, string Value)[] fields) =>
        Block([(":method", method), (":scheme", "http"), (":path", path), (":authority", "h2.example"), .. fields]);

    private static void AddString(List<byte> block, string text)
    {
        var bytes = Encoding.Latin1.GetBytes(text);
        // RFC 7541 §5.1: a 7-bit prefix integer (H = 0).
        if (bytes.Length < 127)
        {
            block.Add((byte)bytes.Length);
        }
        else
        {
            block.Add(127);
            var rest = bytes.Length - 127;
            while (rest >= 128)
            {
                block.Add((byte)((rest & 0x7f) | 0x80));
                rest >>= 7;
            }
            block.Add((byte)rest);
        }
        block.AddRange(bytes);
    }

    public Task WriteRawAsync(byte[] bytes) => _stream.WriteAsync(bytes, Wire.Deadline()).AsTask();

    public Task WriteFrameAsync(byte type, byte flags, int streamId, byte[] payload) => WriteRawAsync(Frame(type, flags, streamId, payload));

    /// <summary>The next frame, or null when the proxy closed the connection (or reset it).</summary>
    public async Task<H2Frame?> ReadFrameAsync(TimeSpan? cap = null)
    {
        var token = Wire.Deadline(cap);
        var header = new byte[9];
        try
        {
            if (!await ReadExactlyAsync(header, token))
            {
                return null;
            }
            var length = (header[0] << 16) | (header[1] << 8) | header[2];
            var payload = new byte[length];
            if (!await ReadExactlyAsync(payload, token))
            {
                return null;
            }
            return new H2Frame(header[3], header[4], BinaryPrimitives.ReadInt32BigEndian(header.AsSpan(5)) & 0x7fffffff, payload);
        }
        catch (IOException)
        {
            return null;
        }
    }

    private async Task<bool> ReadExactlyAsync(byte[] buffer, CancellationToken token)
    {
        var read = 0;
        while (read < buffer.Length)
        {
            var n = await _stream.ReadAsync(buffer.AsMemory(read), token);
            if (n == 0)
            {
                return false;
            }
            read += n;
        }
        return true;
    }

    /// <summary>
    /// Frames until one on <paramref name="streamId"/> ends it (a frame with END_STREAM, or RST_STREAM), the connection
    /// ends (GOAWAY or closed), or the cap: the stream's frames and the connection's last GOAWAY, if any.
    /// </summary>
    public async Task<(List<H2Frame> Stream, H2Frame? GoAway, bool Closed)> ReadStreamAsync(int streamId)
    {
        var frames = new List<H2Frame>();
        while (true)
        {
            var frame = await ReadFrameAsync();
            if (frame is null)
            {
                return (frames, null, true);
            }
            if (frame.Type == H2Frame.GoAway)
            {
                return (frames, frame, false);
            }
            if (frame.StreamId != streamId)
            {
                continue;
            }
            frames.Add(frame);
            if (frame.Type == H2Frame.RstStream || ((frame.Flags & H2Frame.EndStream) != 0 && frame.Type is H2Frame.Data or H2Frame.Headers))
            {
                return (frames, null, false);
            }
        }
    }

    /// <summary>Reads until the proxy closes the connection (or the cap): every GOAWAY seen on the way.</summary>
    public async Task<(List<H2Frame> GoAways, bool Closed)> ReadUntilClosedAsync(TimeSpan? cap = null)
    {
        var goAways = new List<H2Frame>();
        var deadline = DateTime.UtcNow + (cap ?? Wire.Cap);
        while (DateTime.UtcNow < deadline)
        {
            H2Frame? frame;
            try
            {
                frame = await ReadFrameAsync(TimeSpan.FromMilliseconds(Math.Max(1, (deadline - DateTime.UtcNow).TotalMilliseconds)));
            }
            catch (OperationCanceledException)
            {
                return (goAways, false);
            }
            if (frame is null)
            {
                return (goAways, true);
            }
            if (frame.Type == H2Frame.GoAway)
            {
                goAways.Add(frame);
            }
        }
        return (goAways, false);
    }

    public ValueTask DisposeAsync()
    {
        _tcp.Dispose();
        return default;
    }
}
