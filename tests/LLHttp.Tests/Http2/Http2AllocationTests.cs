using System.Buffers.Binary;
using System.Net;
using System.Net.Sockets;
using LLHttp.Http2;
using LLHttp2.Frames;
using Xunit;
using static LLHttp.Tests.Http2.H2Kit;

namespace LLHttp.Tests.Http2;

/// <summary>
/// A request on a warm HTTP/2 connection allocates nothing: the stream object, its field lists, its ring and its
/// awaitables are reused, and so are the connection's output buffers. The server here allocates nothing per request
/// either (it answers from fixed buffers), so the process-wide count measures the client.
/// </summary>
[Collection(nameof(Http2AllocationTests))]
public class Http2AllocationTests
{
    private const int Warmup = 300;
    private const int Measured = 2000;

    [Fact]
    public async Task Requests_on_a_warm_connection_allocate_nothing()
    {
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen();
        using var stop = new CancellationTokenSource();
        var serving = Task.Run(() => ServeAsync(listener, stop.Token));
        // The server's socket operations take no token (a cancellable one registers per operation); it ends when the
        // client closes the connection.
        try
        {
            // Default options: the head and body timeouts are armed and disarmed on every wait.
            using var connection = await LLHttp2Connection.ConnectAsync(listener.LocalEndPoint!);
            var buffer = new byte[64];
            await RunAsync(connection, buffer, Warmup).WaitAsync(Bound);
            // The count is process-wide: work other tests left behind (a server shutting down) may allocate during a
            // round, so the least of three rounds is the client's.
            long allocated = long.MaxValue;
            for (int round = 0; round < 3; round++)
            {
                long before = GC.GetTotalAllocatedBytes(precise: true);
                await RunAsync(connection, buffer, Measured).WaitAsync(Bound);
                allocated = Math.Min(allocated, GC.GetTotalAllocatedBytes(precise: true) - before);
            }

            // Nothing per request: 2,000 requests may not even allocate one object each. What is left is the runtime's
            // own (thread pool, timers), bounded and independent of the request count.
            Assert.True(allocated < Measured, $"{allocated} bytes for {Measured} requests");

        }
        finally
        {
            stop.Cancel();
            listener.Dispose();
            await serving.WaitAsync(Bound).ContinueWith(_ => { }, TaskScheduler.Default);
        }
    }

    private static async Task RunAsync(LLHttp2Connection connection, byte[] buffer, int count)
    {
        for (int i = 0; i < count; i++)
        {
            Assert.True(connection.TryOpenStream(out var stream));
            stream.StartRequest("GET"u8, "http"u8, "origin"u8, "/items?id=1"u8);
            stream.AddHeader("x-request-id"u8, "0123456789"u8);
            stream.SendRequest();
            var head = await stream.ReadResponseHeadAsync();
            if (head.StatusCode != 200)
            {
                throw new InvalidOperationException("Unexpected status.");
            }

            int total = 0;
            int n;
            while ((n = await stream.ReadBodyAsync(buffer)) != 0)
            {
                total += n;
            }

            if (total != 5)
            {
                throw new InvalidOperationException("Unexpected body.");
            }

            stream.Dispose();
        }
    }

    /// <summary>
    /// Answers every request HEADERS with HEADERS :status 200 and DATA "hello" END_STREAM, acknowledges SETTINGS, from
    /// fixed buffers: one long-running method, so its awaits allocate nothing after the first.
    /// </summary>
    private static async Task ServeAsync(Socket listener, CancellationToken cancellationToken)
    {
        using var socket = await listener.AcceptAsync(cancellationToken);
        var input = new byte[1 << 16];
        var output = new byte[1 << 16];
        int start = 0;
        int end = 0;
        bool prefaceRead = false;
        Http2FrameWriterHelper.Settings(output, out int written);
        await socket.SendAsync(output.AsMemory(0, written), SocketFlags.None, cancellationToken);
        while (true)
        {
            int n = await socket.ReceiveAsync(input.AsMemory(end), SocketFlags.None, CancellationToken.None);
            if (n == 0)
            {
                return;
            }

            end += n;
            written = 0;
            if (!prefaceRead && end - start >= 24)
            {
                start += 24;
                prefaceRead = true;
            }

            while (prefaceRead && end - start >= 9)
            {
                int length = (input[start] << 16) | (input[start + 1] << 8) | input[start + 2];
                if (end - start < 9 + length)
                {
                    break;
                }

                var type = (Http2FrameType)input[start + 3];
                var flags = (Http2FrameFlags)input[start + 4];
                int streamId = BinaryPrimitives.ReadInt32BigEndian(input.AsSpan(start + 5)) & int.MaxValue;
                if (type == Http2FrameType.Settings && (flags & Http2FrameFlags.Ack) == 0)
                {
                    written += Http2FrameWriterHelper.Header(output.AsSpan(written), 0, Http2FrameType.Settings, Http2FrameFlags.Ack, 0);
                }
                else if (type == Http2FrameType.Headers)
                {
                    written += Http2FrameWriterHelper.Header(output.AsSpan(written), 1, Http2FrameType.Headers, Http2FrameFlags.EndHeaders, streamId);
                    output[written++] = 0x88;
                    written += Http2FrameWriterHelper.Header(output.AsSpan(written), 5, Http2FrameType.Data, Http2FrameFlags.EndStream, streamId);
                    "hello"u8.CopyTo(output.AsSpan(written));
                    written += 5;
                }

                start += 9 + length;
            }

            if (start == end)
            {
                start = end = 0;
            }

            if (written != 0)
            {
                await socket.SendAsync(output.AsMemory(0, written), SocketFlags.None, CancellationToken.None);
            }
        }
    }

    private static class Http2FrameWriterHelper
    {
        public static void Settings(byte[] output, out int written) => written = Header(output, 0, Http2FrameType.Settings, 0, 0);

        public static int Header(Span<byte> output, int length, Http2FrameType type, Http2FrameFlags flags, int streamId)
        {
            output[0] = (byte)(length >> 16);
            output[1] = (byte)(length >> 8);
            output[2] = (byte)length;
            output[3] = (byte)type;
            output[4] = (byte)flags;
            BinaryPrimitives.WriteInt32BigEndian(output[5..], streamId);
            return 9;
        }
    }
}

/// <summary>The count is process-wide: no other test may run meanwhile.</summary>
[CollectionDefinition(nameof(Http2AllocationTests), DisableParallelization = true)]
public sealed class Http2AllocationCollection
{
}
