using System.Buffers.Binary;
using System.Net.Security;
using System.Net.Sockets;
using System.Text;
using LLHttp2.Hpack;

namespace LLRP.Tests.Infrastructure;

/// <summary>An HTTP/2 frame as read from the proxy (RFC 9113 §4.1).</summary>
public sealed record H2Frame(byte Type, byte Flags, int StreamId, byte[] Payload)
{
    public const byte Data = 0x0, Headers = 0x1, RstStream = 0x3, Settings = 0x4, Ping = 0x6, GoAway = 0x7, WindowUpdate = 0x8, Continuation = 0x9;
    public const byte EndStream = 0x1, EndHeaders = 0x4, Ack = 0x1, Padded = 0x8;

    /// <summary>RFC 9113 §7's codes the tests name.</summary>
    public const int NoError = 0x0, ProtocolError = 0x1, InternalError = 0x2, FlowControlError = 0x3, SettingsTimeout = 0x4, StreamClosed = 0x5, FrameSizeError = 0x6,
        RefusedStream = 0x7, Cancel = 0x8, CompressionError = 0x9, EnhanceYourCalm = 0xb;

    /// <summary>GOAWAY's and RST_STREAM's error code.</summary>
    public int ErrorCode => Type == GoAway ? BinaryPrimitives.ReadInt32BigEndian(Payload.AsSpan(4)) : BinaryPrimitives.ReadInt32BigEndian(Payload);

    /// <summary>GOAWAY's last stream id (RFC 9113 §6.8).</summary>
    public int LastStreamId => BinaryPrimitives.ReadInt32BigEndian(Payload) & 0x7fffffff;

    /// <summary>A HEADERS frame's decoded fields (its CONTINUATION frames joined), in order; null for other frames.</summary>
    public IReadOnlyList<(string Name, string Value)>? Fields { get; init; }

    /// <summary>A response HEADERS frame's :status, or 0.</summary>
    public int Status => Fields?.FirstOrDefault(f => f.Name == ":status") is { Name: not null } status ? int.Parse(status.Value) : 0;

    public override string ToString() =>
        $"type {Type} flags {Flags} stream {StreamId} length {Payload.Length}" +
        (Type is GoAway or RstStream && Payload.Length >= 4 ? $" error 0x{ErrorCode:x}" : "") +
        (Fields is not null ? $" [{string.Join(", ", Fields.Select(f => $"{f.Name}: {f.Value}"))}]" : "");
}

/// <summary>
/// A prior-knowledge HTTP/2 client connection (h2c) written by hand, for what a real client library never sends:
/// malformed fields, framing that disagrees with Content-Length, floods of resets and CONTINUATION frames. Field blocks
/// are HPACK literals without indexing and without Huffman coding (RFC 7541 §6.2.2), which every decoder reads.
/// </summary>
public sealed class H2Connection : IAsyncDisposable
{
    private readonly TcpClient _tcp;
    private readonly Stream _stream;
    // The proxy's field blocks, decoded in the order they arrive: the dynamic table is the proxy's encoder's mirror (RFC 7541 §2.3.2).
    private readonly HpackDecoder _decoder = new(maxHeaderListSize: 1024 * 1024);

    private H2Connection(TcpClient tcp, Stream stream, bool tls)
    {
        _tcp = tcp;
        _stream = stream;
        Tls = tls;
    }

    /// <summary>The connection speaks TLS (ALPN h2): its requests' :scheme is https (Kestrel refuses another, RFC 9113 §8.3.1).</summary>
    public bool Tls { get; }

    /// <summary><see cref="Request"/> with this connection's :scheme.</summary>
    public byte[] RequestBlock(string method, string path, params (string Name, string Value)[] fields) =>
        Block([(":method", method), (":scheme", Tls ? "https" : "http"), (":path", path), (":authority", "h2.example"), .. fields]);

    /// <summary>The proxy's SETTINGS frame as read on open.</summary>
    public H2Frame? ProxySettings { get; private set; }

    /// <summary>Connects, sends the preface and an empty SETTINGS, and acknowledges the proxy's SETTINGS.</summary>
    public static Task<H2Connection> OpenAsync(Uri proxy) => OpenAsync(proxy, tls: false);

    /// <summary>
    /// Connects (over TLS with ALPN h2 when <paramref name="tls"/>), sends the preface and a SETTINGS frame with
    /// <paramref name="settings"/>, and reads the proxy's SETTINGS; acknowledges it unless <paramref name="ackSettings"/> is
    /// false. <paramref name="connectionWindowIncrement"/>: a WINDOW_UPDATE on stream 0 after the SETTINGS.
    /// <paramref name="receiveBufferSize"/>: the socket's receive buffer, set before connecting (a small one makes a
    /// client that does not read fill the proxy's output soon).
    /// </summary>
    public static async Task<H2Connection> OpenAsync(Uri proxy, bool tls, (ushort Id, uint Value)[]? settings = null, bool ackSettings = true,
        int connectionWindowIncrement = 0, int receiveBufferSize = 0)
    {
        var tcp = new TcpClient();
        if (receiveBufferSize > 0)
        {
            tcp.ReceiveBufferSize = receiveBufferSize;
        }
        await tcp.ConnectAsync(proxy.Host, proxy.Port, Wire.Deadline());
        Stream stream = tcp.GetStream();
        if (tls)
        {
            var ssl = new SslStream(stream, leaveInnerStreamOpen: false);
            await ssl.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
            {
                TargetHost = "localhost",
                ApplicationProtocols = [SslApplicationProtocol.Http2],
                RemoteCertificateValidationCallback = (_, _, _, _) => true,
            }, Wire.Deadline());
            if (ssl.NegotiatedApplicationProtocol != SslApplicationProtocol.Http2)
            {
                throw new InvalidOperationException($"ALPN chose {ssl.NegotiatedApplicationProtocol}, not h2");
            }
            stream = ssl;
        }
        var connection = new H2Connection(tcp, stream, tls);
        byte[] opening = [.. "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"u8, .. Frame(H2Frame.Settings, 0, 0, SettingsPayload(settings ?? []))];
        if (connectionWindowIncrement > 0)
        {
            opening = [.. opening, .. WindowUpdate(0, connectionWindowIncrement)];
        }
        await connection.WriteRawAsync(opening);
        var proxySettings = await connection.ReadFrameAsync();
        if (proxySettings?.Type != H2Frame.Settings || (proxySettings.Flags & H2Frame.Ack) != 0)
        {
            throw new InvalidOperationException($"expected the proxy's SETTINGS, got {proxySettings}");
        }
        connection.ProxySettings = proxySettings;
        if (ackSettings)
        {
            await connection.WriteRawAsync(Frame(H2Frame.Settings, H2Frame.Ack, 0, []));
        }
        return connection;
    }

    /// <summary>RFC 9113 §6.5.2 identifiers the tests use.</summary>
    public const ushort SettingsHeaderTableSize = 0x1, SettingsMaxConcurrentStreams = 0x3, SettingsInitialWindowSize = 0x4, SettingsMaxFrameSize = 0x5;

    /// <summary>The most a flow-control window may be (RFC 9113 §6.9.1).</summary>
    public const int MaxWindow = int.MaxValue;

    /// <summary>A SETTINGS payload: 6 bytes per pair (RFC 9113 §6.5.1).</summary>
    public static byte[] SettingsPayload(params (ushort Id, uint Value)[] pairs)
    {
        var payload = new byte[6 * pairs.Length];
        for (var i = 0; i < pairs.Length; i++)
        {
            BinaryPrimitives.WriteUInt16BigEndian(payload.AsSpan(6 * i), pairs[i].Id);
            BinaryPrimitives.WriteUInt32BigEndian(payload.AsSpan(6 * i + 2), pairs[i].Value);
        }
        return payload;
    }

    /// <summary>A WINDOW_UPDATE frame (RFC 9113 §6.9).</summary>
    public static byte[] WindowUpdate(int streamId, int increment)
    {
        var payload = new byte[4];
        BinaryPrimitives.WriteInt32BigEndian(payload, increment);
        return Frame(H2Frame.WindowUpdate, 0, streamId, payload);
    }

    /// <summary>An RST_STREAM frame (RFC 9113 §6.4).</summary>
    public static byte[] Reset(int streamId, int errorCode)
    {
        var payload = new byte[4];
        BinaryPrimitives.WriteInt32BigEndian(payload, errorCode);
        return Frame(H2Frame.RstStream, 0, streamId, payload);
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
            var frame = new H2Frame(header[3], header[4], BinaryPrimitives.ReadInt32BigEndian(header.AsSpan(5)) & 0x7fffffff, payload);
            return frame.Type == H2Frame.Headers ? await DecodeHeadersAsync(frame, cap) : frame;
        }
        catch (IOException)
        {
            return null;
        }
        catch (ObjectDisposedException)
        {
            return null;
        }
    }

    // A HEADERS frame and its CONTINUATION frames (RFC 9113 §6.10) as one frame with the fields decoded; END_STREAM is HEADERS'.
    private async Task<H2Frame?> DecodeHeadersAsync(H2Frame headers, TimeSpan? cap)
    {
        var flags = headers.Flags;
        var fragment = headers.Payload.AsSpan();
        if ((flags & H2Frame.Padded) != 0)
        {
            fragment = fragment[1..^fragment[0]];
        }
        if ((flags & 0x20) != 0)
        {
            // PRIORITY flag: 5 bytes of priority fields (RFC 9113 §6.2), ignored.
            fragment = fragment[5..];
        }
        byte[] block = fragment.ToArray();
        while ((flags & H2Frame.EndHeaders) == 0)
        {
            var next = await ReadFrameAsync(cap);
            if (next is null || next.Type != H2Frame.Continuation || next.StreamId != headers.StreamId)
            {
                throw new InvalidOperationException($"HEADERS without END_HEADERS followed by {next}");
            }
            block = [.. block, .. next.Payload];
            flags |= (byte)(next.Flags & H2Frame.EndHeaders);
        }
        var collector = new FieldCollector { Fields = [] };
        _decoder.Decode(block, ref collector);
        return headers with { Flags = flags, Payload = block, Fields = collector.Fields };
    }

    private struct FieldCollector : IHpackFieldHandler
    {
        public List<(string Name, string Value)> Fields;

        public readonly void OnField(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed) =>
            Fields.Add((Encoding.Latin1.GetString(name), Encoding.Latin1.GetString(value)));
    }

    /// <summary>
    /// Frames until <paramref name="streamId"/>'s response is complete (END_STREAM or RST_STREAM), the connection ends, or
    /// the cap, with the stream's DATA joined: its response, and any GOAWAY read on the way.
    /// </summary>
    public async Task<H2Response> ReadResponseAsync(int streamId)
    {
        var (frames, goAway, closed) = await ReadStreamAsync(streamId);
        return new H2Response(frames, goAway, closed);
    }

    /// <summary>Sends the frames of one request (HEADERS, and DATA when <paramref name="body"/> is not null) with END_STREAM at the end.</summary>
    public Task SendRequestAsync(int streamId, byte[] block, byte[]? body = null) =>
        WriteRawAsync(body is null
            ? Frame(H2Frame.Headers, H2Frame.EndHeaders | H2Frame.EndStream, streamId, block)
            : [.. Frame(H2Frame.Headers, H2Frame.EndHeaders, streamId, block), .. Frame(H2Frame.Data, H2Frame.EndStream, streamId, body)]);

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

    /// <summary>
    /// Reads frames in bulk (no field block is decoded: for floods of control frames) until <paramref name="until"/> frames
    /// of <paramref name="type"/> with <paramref name="flags"/> were read, the connection ends, or the cap: how many, and
    /// the GOAWAYs seen; <paramref name="onGoAway"/> is called at each GOAWAY with the count so far.
    /// </summary>
    public async Task<(int Count, List<H2Frame> GoAways, bool Closed)> CountFramesAsync(byte type, byte flags, int until, Action<int>? onGoAway = null,
        TimeSpan? cap = null)
    {
        var token = Wire.Deadline(cap);
        var buffer = new byte[256 * 1024];
        int start = 0, end = 0, count = 0;
        var goAways = new List<H2Frame>();
        while (count < until)
        {
            // Whole frames in [start, end).
            while (end - start >= 9)
            {
                var length = (buffer[start] << 16) | (buffer[start + 1] << 8) | buffer[start + 2];
                if (end - start < 9 + length)
                {
                    break;
                }
                var frameType = buffer[start + 3];
                if (frameType == type && (buffer[start + 4] & flags) == flags)
                {
                    count++;
                }
                else if (frameType == H2Frame.GoAway)
                {
                    goAways.Add(new H2Frame(frameType, buffer[start + 4], 0, buffer.AsSpan(start + 9, length).ToArray()));
                    onGoAway?.Invoke(count);
                }
                start += 9 + length;
            }
            if (start > 0)
            {
                Buffer.BlockCopy(buffer, start, buffer, 0, end - start);
                end -= start;
                start = 0;
            }
            if (count >= until)
            {
                break;
            }
            int n;
            try
            {
                n = await _stream.ReadAsync(buffer.AsMemory(end), token);
            }
            catch (OperationCanceledException)
            {
                return (count, goAways, false);
            }
            catch (IOException)
            {
                return (count, goAways, true);
            }
            if (n == 0)
            {
                return (count, goAways, true);
            }
            end += n;
        }
        return (count, goAways, false);
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
        _stream.Dispose();
        _tcp.Dispose();
        return default;
    }
}

/// <summary>One stream's response as read: its frames, the HEADERS, the body of its DATA frames, and how the read ended.</summary>
public sealed record H2Response(List<H2Frame> Frames, H2Frame? GoAway, bool Closed)
{
    public H2Frame? Head => Frames.FirstOrDefault(f => f.Type == H2Frame.Headers);

    public int Status => Head?.Status ?? 0;

    public H2Frame? Reset => Frames.FirstOrDefault(f => f.Type == H2Frame.RstStream);

    public byte[] Body => [.. Frames.Where(f => f.Type == H2Frame.Data).SelectMany(f => f.Payload)];

    /// <summary>The stream ended with END_STREAM (not reset, not cut off).</summary>
    public bool Complete => Frames.Count > 0 && Frames[^1].Type is H2Frame.Data or H2Frame.Headers && (Frames[^1].Flags & H2Frame.EndStream) != 0;

    public string Describe() => $"[{string.Join(" | ", Frames)}]{(GoAway is not null ? $" GOAWAY {GoAway}" : "")}{(Closed ? " closed" : "")}";
}
