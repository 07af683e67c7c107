using System.Text;
using LLHttp2.Connection;
using LLHttp2.Hpack;

namespace LLHttp2.Tests;

/// <summary>
/// Our client connection against our server connection in memory: many requests, more at once than the server allows
/// (so some wait for a slot), each with a body larger than a stream window and the connection window, echoed back as
/// large; every byte must arrive, in order, on the right stream, and both ends stay open with no stream left.
/// </summary>
public class ClientServerRoundTripTests
{
    private const int Requests = 12;
    private const int BodyLength = 150_000;

    /// <summary>What both ends record: bodies as they arrive, what to consume, which streams ended, anything wrong.</summary>
    private abstract class Side
    {
        public Dictionary<int, MemoryStream> Bodies { get; } = [];

        public Dictionary<int, string> Paths { get; } = [];

        public List<int> Ended { get; } = [];

        public List<(int, int)> Consumed { get; } = [];

        public List<string> Errors { get; } = [];

        public void OnData(int streamId, ReadOnlySequence<byte> data, bool endStream)
        {
            foreach (var segment in data)
            {
                Bodies[streamId].Write(segment.Span);
            }

            Consumed.Add((streamId, (int)data.Length));
            if (endStream)
            {
                Ended.Add(streamId);
            }
        }

        public void OnStreamReset(int streamId, Http2ErrorCode code, bool byPeer) => Errors.Add($"reset {streamId} {code}");

        public void OnGoAway(int lastStreamId, Http2ErrorCode code) => Errors.Add($"goaway {code}");

        /// <summary>The request's :path, echoed by the server as x-path.</summary>
        protected void OnField(int streamId, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, ReadOnlySpan<byte> pathName)
        {
            if (name.SequenceEqual(pathName))
            {
                Paths[streamId] = Encoding.Latin1.GetString(value);
            }
        }
    }

    private sealed class Server : Side, IHttp2ServerConnectionHandler
    {
        public void OnField(int streamId, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed) => OnField(streamId, name, value, ":path"u8);

        public void OnHeaders(int streamId, bool isTrailers, bool endStream) => Bodies.TryAdd(streamId, new MemoryStream());
    }

    private sealed class Client : Side, IHttp2ClientConnectionHandler
    {
        public void OnResponseField(int streamId, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed) => OnField(streamId, name, value, "x-path"u8);

        public void OnResponseHeaders(int streamId, int status, bool endStream)
        {
            Assert.Equal(200, status);
            Bodies[streamId] = new MemoryStream();
        }

        public void OnPingAck(ulong data) => Errors.Add("unexpected ping ack");
    }

    private static byte[] Body(int n) => Enumerable.Range(0, BodyLength).Select(i => (byte)((i * 7) + n)).ToArray();

    [Fact]
    public void Many_streams_with_bodies_beyond_the_windows_both_ways()
    {
        var serverSide = new Server();
        var server = new Http2ServerConnection(serverSide, new Http2ServerConnectionOptions { MaxConcurrentStreams = 5 });
        var clientSide = new Client();
        var client = new Http2ClientConnection(clientSide);
        var toServer = new ArrayBufferWriter<byte>();
        var toClient = new ArrayBufferWriter<byte>();
        var responseEncoder = new HpackEncoder();
        var block = new ArrayBufferWriter<byte>();

        client.Start(toServer);
        server.Start(toClient);
        Deliver(toServer, server, toClient);
        Deliver(toClient, client, toServer);

        var requestOf = new Dictionary<int, int>();
        var requestSent = new Dictionary<int, int>();
        var responseSent = new Dictionary<int, int>();
        int opened = 0;
        for (int round = 0; round < 10_000 && clientSide.Ended.Count < Requests; round++)
        {
            // The client: new requests while the server's limit allows, bodies as the windows allow, data consumed.
            while (opened < Requests && client.TryOpenStream(out int id))
            {
                var fields = client.BeginRequestHeaders(id, "POST"u8, "https"u8, "a.example"u8, Encoding.Latin1.GetBytes($"/{opened}"));
                fields.Add("content-type"u8, "application/octet-stream"u8);
                client.SendRequestHeaders(ref fields, endStream: false, toServer);
                requestOf[id] = opened++;
                requestSent[id] = 0;
            }

            foreach (var (id, n) in requestOf)
            {
                if (requestSent[id] < BodyLength)
                {
                    var body = Body(n);
                    requestSent[id] += client.SendData(id, body.AsSpan(requestSent[id]), endStream: true, toServer);
                }
            }

            foreach (var (id, length) in clientSide.Consumed)
            {
                client.ConsumeData(id, length, toServer);
            }

            clientSide.Consumed.Clear();
            Deliver(toServer, server, toClient);

            // The server: consumes what arrived, answers each request that ended with its body echoed.
            foreach (var (id, length) in serverSide.Consumed)
            {
                server.ConsumeData(id, length, toClient);
            }

            serverSide.Consumed.Clear();
            foreach (int id in serverSide.Ended)
            {
                block.ResetWrittenCount();
                responseEncoder.BeginBlock(block);
                responseEncoder.Encode(":status"u8, "200"u8, block);
                responseEncoder.Encode("x-path"u8, Encoding.Latin1.GetBytes(serverSide.Paths[id]), block);
                server.SendHeaders(id, block.WrittenSpan, endStream: false, toClient);
                responseSent[id] = 0;
            }

            serverSide.Ended.Clear();
            foreach (var (id, sent) in responseSent)
            {
                if (sent < BodyLength)
                {
                    var echo = serverSide.Bodies[id].ToArray();
                    responseSent[id] += server.SendData(id, echo.AsSpan(sent), endStream: true, toClient);
                }
            }

            Deliver(toClient, client, toServer);
        }

        Assert.Empty(serverSide.Errors);
        Assert.Empty(clientSide.Errors);
        Assert.Equal(Requests, clientSide.Ended.Count);
        foreach (var (id, n) in requestOf)
        {
            Assert.Equal($"/{n}", clientSide.Paths[id]);
            Assert.True(Body(n).AsSpan().SequenceEqual(clientSide.Bodies[id].ToArray()), $"stream {id}");
        }

        Assert.Equal(5u, client.PeerMaxConcurrentStreams);
        Assert.Equal(Http2ConnectionState.Open, client.State);
        Assert.Equal(Http2ConnectionState.Open, server.State);
        Assert.Equal(0, client.ActiveStreams);
        Assert.Equal(0, server.ActiveStreams);
        Assert.False(client.IsAwaitingSettingsAck);
        Assert.False(server.IsAwaitingSettingsAck);
    }

    /// <summary>Hands what one side wrote to the other, as one read, and reports the writer drained.</summary>
    private static void Deliver(ArrayBufferWriter<byte> written, Http2Connection to, ArrayBufferWriter<byte> answers)
    {
        var input = new ReadOnlySequence<byte>(written.WrittenSpan.ToArray());
        written.ResetWrittenCount();
        to.Process(ref input, answers);
        Assert.Equal(0, input.Length);
        to.OnOutputFlushed();
    }
}
