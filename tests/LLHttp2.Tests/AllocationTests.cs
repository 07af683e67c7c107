using LLHttp2.Connection;
using LLHttp2.Frames;
using LLHttp2.Hpack;
using static LLHttp2.Tests.TestKit;

namespace LLHttp2.Tests;

/// <summary>The steady state allocates nothing: frames read, field blocks decoded and encoded, frames written.</summary>
public class AllocationTests
{
    private struct NoOpHandler : IHpackFieldHandler
    {
        public int Count;

        public void OnField(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed) => Count += name.Length + value.Length;
    }

    [Fact]
    public void Reading_writing_decoding_and_encoding_allocate_nothing()
    {
        var frames = Concat(
            Frame(Http2FrameType.Headers, Http2FrameFlags.Padded, 1, Concat([2], Hex("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff"), [0, 0])),
            Frame(Http2FrameType.Continuation, Http2FrameFlags.EndHeaders, 1, 0x82),
            Frame(Http2FrameType.Settings, 0, 0, 0, 4, 0, 1, 0, 0),
            Frame(Http2FrameType.Ping, 0, 0, new byte[8]),
            Frame(Http2FrameType.WindowUpdate, 0, 1, 0, 0, 1, 0));
        var sequence = Sequence([frames[..5], frames[5..30], frames[30..]]);
        var reader = new Http2FrameReader();
        var decoder = new HpackDecoder();
        var encoder = new HpackEncoder();
        var block = Hex("8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf");
        Decode(decoder, Hex("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff 8286 84be 5886 a8eb 1064 9cbf"));
        var output = new byte[4096];

        void Once()
        {
            var buffer = sequence;
            while (reader.TryReadFrame(ref buffer, out var frame))
            {
                if (frame.Type == Http2FrameType.Settings)
                {
                    var settings = frame.GetSettings();
                    while (settings.TryRead(out _))
                    {
                    }
                }
            }

            var handler = new NoOpHandler();
            decoder.Decode(block, ref handler);
            int written = encoder.BeginBlock(output);
            encoder.TryEncode(":authority"u8, "www.example.com"u8, output.AsSpan(written), out int n);
            written += n;
            encoder.TryEncode("x-request-id"u8, "0123456789"u8, output.AsSpan(written), out n);
            written += n;
            Http2FrameWriter.WriteHeaders(output.AsSpan(1024), 1, output.AsSpan(0, written), endStream: true, 16384);
            Http2FrameWriter.WriteWindowUpdate(output.AsSpan(2048), 0, 100);
        }

        Once();
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 100; i++)
        {
            Once();
        }

        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
    }

    private sealed class NoOpConnectionHandler : IHttp2ServerConnectionHandler
    {
        public long Count;

        public void OnField(int streamId, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed) => Count += name.Length;

        public void OnHeaders(int streamId, bool isTrailers, bool endStream) => Count++;

        public void OnData(int streamId, ReadOnlySequence<byte> data, bool endStream) => Count += data.Length;

        public void OnStreamReset(int streamId, Http2ErrorCode code, bool byPeer) => Count++;

        public void OnGoAway(int lastStreamId, Http2ErrorCode code) => Count++;
    }

    [Fact]
    public void A_connection_in_steady_state_allocates_nothing_per_request()
    {
        // Each round: a request with a body and trailers, a PING, the response, the body consumed.
        var requests = new byte[201][];
        for (int i = 0; i < requests.Length; i++)
        {
            int id = (2 * i) + 1;
            requests[i] = Concat(
                ConnectionKit.Get(id, endStream: false, ("content-length", "5")),
                ConnectionKit.Data(id, "hello"),
                ConnectionKit.Request(id, true, ("x-checksum", "1")),
                ConnectionKit.Ping(1),
                ConnectionKit.WindowUpdate(0, 5));
        }

        var handler = new NoOpConnectionHandler();
        var connection = new Http2ServerConnection(handler);
        var output = new ArrayBufferWriter<byte>(64 * 1024);
        var preface = new ReadOnlySequence<byte>(ConnectionKit.Preface);
        connection.Process(ref preface, output);

        void Round(int i)
        {
            int id = (2 * i) + 1;
            var input = new ReadOnlySequence<byte>(requests[i]);
            connection.Process(ref input, output);
            connection.SendHeaders(id, [0x88], endStream: false, output);
            connection.SendData(id, "world"u8, endStream: true, output);
            connection.ConsumeData(id, 5, output);
            connection.OnOutputFlushed();
            output.ResetWrittenCount();
        }

        Round(0);
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 1; i < requests.Length; i++)
        {
            Round(i);
        }

        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
        Assert.Equal(Http2ConnectionState.Open, connection.State);
        Assert.Equal(0, connection.ActiveStreams);
    }

    private sealed class NoOpClientHandler : IHttp2ClientConnectionHandler
    {
        public long Count;
        public int Blocks;
        public int PingAcks;
        public int Resets;

        public void OnResponseField(int streamId, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed) => Count += name.Length;

        public void OnResponseHeaders(int streamId, int status, bool endStream) => Blocks++;

        public void OnData(int streamId, ReadOnlySequence<byte> data, bool endStream) => Count += data.Length;

        public void OnStreamReset(int streamId, Http2ErrorCode code, bool byPeer) => Resets++;

        public void OnGoAway(int lastStreamId, Http2ErrorCode code) => Resets++;

        public void OnPingAck(ulong data) => PingAcks++;
    }

    [Fact]
    public void A_client_connection_in_steady_state_allocates_nothing_per_request()
    {
        // Each round: a request with a body and trailers, an informational and a final response with a body and
        // trailers, a PING both ways, the body consumed.
        var responses = new byte[201][];
        for (int i = 0; i < responses.Length; i++)
        {
            int id = (2 * i) + 1;
            responses[i] = Concat(
                ClientKit.Response(id, false, (":status", "103"), ("link", "</style.css>")),
                ClientKit.Ok(id, false, ("content-length", "5"), ("server", "scripted")),
                ConnectionKit.Data(id, "hello"),
                ClientKit.Response(id, true, ("x-checksum", "1")),
                ConnectionKit.Ping(1),
                ConnectionKit.Ping(2, ack: true),
                ConnectionKit.WindowUpdate(0, 5));
        }

        var handler = new NoOpClientHandler();
        var client = new Http2ClientConnection(handler);
        var output = new ArrayBufferWriter<byte>(64 * 1024);
        var settings = new ReadOnlySequence<byte>(ClientKit.ServerPreface);
        client.Process(ref settings, output);

        void Round(int i)
        {
            Assert.True(client.TryOpenStream(out int id));
            var fields = client.BeginRequestHeaders(id, "POST"u8, "https"u8, "a.example"u8, "/upload"u8);
            fields.Add("content-type"u8, "text/plain"u8);
            fields.Add("authorization"u8, "Bearer x"u8);
            client.SendRequestHeaders(ref fields, endStream: false, output);
            client.SendData(id, "world"u8, endStream: false, output);
            var trailers = client.BeginTrailers(id);
            trailers.Add("x-sum"u8, "5"u8);
            client.SendTrailers(ref trailers, output);
            client.SendPing(2, output);
            var input = new ReadOnlySequence<byte>(responses[i]);
            client.Process(ref input, output);
            client.ConsumeData(id, 5, output);
            client.OnOutputFlushed();
            output.ResetWrittenCount();
        }

        Round(0);
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 1; i < responses.Length; i++)
        {
            Round(i);
        }

        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
        Assert.Equal(Http2ConnectionState.Open, client.State);
        Assert.Equal(0, client.ActiveStreams);
        Assert.Equal(201 * 3, handler.Blocks);
        Assert.Equal(201, handler.PingAcks);
        Assert.Equal(0, handler.Resets);
    }

    private static void Decode(HpackDecoder decoder, byte[] block)
    {
        var handler = new NoOpHandler();
        decoder.Decode(block, ref handler);
    }
}
