using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;
using LLHttp2.Frames;

using Xunit;

namespace LLHttp.Tests.Http2;

/// <summary>One frame as the scripted server read it.</summary>
internal sealed record H2Frame(Http2FrameType Type, Http2FrameFlags Flags, int StreamId, byte[] Payload);

/// <summary>
/// A hand-driven HTTP/2 server over a loopback socket for behaviour Kestrel never shows (GOAWAY below open streams,
/// malformed frames, silence). Every read is bounded: a script that waits for a frame that never comes fails, it does
/// not hang.
/// </summary>
internal sealed class ScriptedH2Server : IAsyncDisposable
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(20);
    private readonly TcpListener _listener;
    private Socket? _socket;
    private readonly byte[] _buffer = new byte[1 << 20];
    private int _start;
    private int _end;

    public ScriptedH2Server()
    {
        _listener = new TcpListener(IPAddress.Loopback, 0);
        _listener.Start();
    }

    public IPEndPoint EndPoint => (IPEndPoint)_listener.LocalEndpoint;

    /// <summary>Accepts the client, reads its preface and SETTINGS; sends ours and, unless told not to, the ACK.</summary>
    public async Task AcceptAsync(bool acknowledge = true, int? maxConcurrentStreams = null)
    {
        _socket = await _listener.AcceptSocketAsync().WaitAsync(Bound);
        await FillAsync(Http2Preface.Client.Length);
        _start += Http2Preface.Client.Length;
        var settings = await ReadFrameAsync();
        Assert.Equal(Http2FrameType.Settings, settings.Type);
        byte[] ours = maxConcurrentStreams is int max
            ? Frame(Http2FrameType.Settings, 0, 0, [0, 3, (byte)(max >> 24), (byte)(max >> 16), (byte)(max >> 8), (byte)max])
            : Frame(Http2FrameType.Settings, 0, 0, []);
        await SendAsync(acknowledge ? [.. ours, .. Frame(Http2FrameType.Settings, Http2FrameFlags.Ack, 0, [])] : ours);
    }

    /// <summary>The next frame of <paramref name="type"/>, skipping others (SETTINGS ACK, WINDOW_UPDATE...).</summary>
    public async Task<H2Frame> ReadFrameAsync(Http2FrameType type)
    {
        for (int i = 0; i < 10_000; i++)
        {
            var frame = await ReadFrameAsync();
            if (frame.Type == type)
            {
                return frame;
            }
        }

        throw new InvalidOperationException($"No {type} frame.");
    }

    public async Task<H2Frame> ReadFrameAsync()
    {
        await FillAsync(9);
        int length = (_buffer[_start] << 16) | (_buffer[_start + 1] << 8) | _buffer[_start + 2];
        await FillAsync(9 + length);
        var frame = new H2Frame(
            (Http2FrameType)_buffer[_start + 3], (Http2FrameFlags)_buffer[_start + 4],
            BinaryPrimitives.ReadInt32BigEndian(_buffer.AsSpan(_start + 5)) & int.MaxValue,
            _buffer.AsSpan(_start + 9, length).ToArray());
        _start += 9 + length;
        return frame;
    }

    /// <summary>True when the client closed the connection (reads to the end, bounded).</summary>
    public async Task<bool> ClosedByClientAsync()
    {
        try
        {
            while (true)
            {
                int n = await _socket!.ReceiveAsync(_buffer.AsMemory(), SocketFlags.None).AsTask().WaitAsync(Bound);
                if (n == 0)
                {
                    return true;
                }
            }
        }
        catch (SocketException)
        {
            return true;
        }
    }

    public Task SendAsync(byte[] bytes) => _socket!.SendAsync(bytes, SocketFlags.None).WaitAsync(Bound);

    public void Close() => _socket?.Dispose();

    public static byte[] Frame(Http2FrameType type, Http2FrameFlags flags, int streamId, byte[] payload)
    {
        var frame = new byte[9 + payload.Length];
        frame[0] = (byte)(payload.Length >> 16);
        frame[1] = (byte)(payload.Length >> 8);
        frame[2] = (byte)payload.Length;
        frame[3] = (byte)type;
        frame[4] = (byte)flags;
        BinaryPrimitives.WriteInt32BigEndian(frame.AsSpan(5), streamId);
        payload.CopyTo(frame, 9);
        return frame;
    }

    /// <summary>HEADERS with :status 200 (static index 8) and END_HEADERS.</summary>
    public static byte[] Ok(int streamId, bool endStream = false)
        => Frame(Http2FrameType.Headers, Http2FrameFlags.EndHeaders | (endStream ? Http2FrameFlags.EndStream : 0), streamId, [0x88]);

    public static byte[] Data(int streamId, string text, bool endStream)
        => Frame(Http2FrameType.Data, endStream ? Http2FrameFlags.EndStream : 0, streamId, System.Text.Encoding.ASCII.GetBytes(text));

    public static byte[] GoAway(int lastStreamId, uint code)
    {
        var payload = new byte[8];
        BinaryPrimitives.WriteInt32BigEndian(payload, lastStreamId);
        BinaryPrimitives.WriteUInt32BigEndian(payload.AsSpan(4), code);
        return Frame(Http2FrameType.GoAway, 0, 0, payload);
    }

    public static byte[] RstStream(int streamId, uint code)
    {
        var payload = new byte[4];
        BinaryPrimitives.WriteUInt32BigEndian(payload, code);
        return Frame(Http2FrameType.RstStream, 0, streamId, payload);
    }

    public ValueTask DisposeAsync()
    {
        _socket?.Dispose();
        _listener.Stop();
        return default;
    }

    private async Task FillAsync(int count)
    {
        if (_end - _start >= count)
        {
            return;
        }

        if (_start != 0)
        {
            _buffer.AsSpan(_start, _end - _start).CopyTo(_buffer);
            _end -= _start;
            _start = 0;
        }

        while (_end < count)
        {
            int n = await _socket!.ReceiveAsync(_buffer.AsMemory(_end), SocketFlags.None).AsTask().WaitAsync(Bound);
            if (n == 0)
            {
                throw new EndOfStreamException("The client closed the connection.");
            }

            _end += n;
        }
    }
}
