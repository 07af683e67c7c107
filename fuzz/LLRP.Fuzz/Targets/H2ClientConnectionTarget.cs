using System.Buffers;
using System.Text;
using LLHttp2;
using LLHttp2.Connection;
using LLHttp2.Frames;
using LLRP.Fuzz.Support;

namespace LLRP.Fuzz.Targets;

/// <summary>
/// LLHttp2's client connection over arbitrary bytes from a server, with three requests open (a GET ended, a POST whose
/// body is still to come, a HEAD), fed whole and as pieces arriving one after another (the unread rest a
/// multi-segment sequence). Both feedings must give the same frames written, the same events and the same final state;
/// no exception may escape <see cref="Http2Connection.Process"/> (it turns protocol errors into RST_STREAM or GOAWAY);
/// the stream table stays within its limit; every frame written reads back. A third feeding plays the application
/// (request bodies and trailers as the windows allow, consumed data, new requests while the server allows them, a
/// cancelled stream, a PING) and must not throw.
/// </summary>
internal static class H2ClientConnectionTarget
{
    private static readonly Http2ClientConnectionOptions Options = new() { MaxConcurrentStreams = 4 };

    public static void Run(ReadOnlySpan<byte> input)
    {
        var bytes = input.ToArray();
        var whole = Feed([bytes], respond: false);
        var split = Feed(Pieces.Split(bytes), respond: false);
        Finding.Check(whole == split, $"The client connection fed whole and in pieces disagrees:\n{whole}\nagainst\n{split}");
        Feed(Pieces.Split(bytes), respond: true);
    }

    private static string Feed(byte[][] pieces, bool respond)
    {
        var handler = new Recorder();
        var client = new Http2ClientConnection(handler, Options);
        var output = new ArrayBufferWriter<byte>();
        client.Start(output);
        Request(client, "GET"u8, endStream: true, output);
        int post = Request(client, "POST"u8, endStream: false, output);
        Request(client, "HEAD"u8, endStream: true, output);

        int round = 0;
        H2Feed.Feed(client, pieces, Options.MaxConcurrentStreams, output, respond ? () => Play(client, handler, post, round++, output) : null);
        var written = output.WrittenSpan;
        Finding.Check(written.StartsWith(Http2Preface.Client), "The client preface is not first.");
        return H2Feed.Describe(client, written[Http2Preface.Length..], handler.Events);
    }

    private static int Request(Http2ClientConnection client, ReadOnlySpan<byte> method, bool endStream, IBufferWriter<byte> output)
    {
        Finding.Check(client.TryOpenStream(out int id), "A stream could not be opened on a new connection.");
        var fields = client.BeginRequestHeaders(id, method, "https"u8, "a.example"u8, "/"u8);
        fields.Add("accept"u8, "*/*"u8);
        client.SendRequestHeaders(ref fields, endStream, output);
        return id;
    }

    /// <summary>The application's part: consumes data, sends the POST's body and trailers, opens and cancels streams.</summary>
    private static void Play(Http2ClientConnection client, Recorder handler, int post, int round, IBufferWriter<byte> output)
    {
        foreach (var (id, length) in handler.Consumed)
        {
            client.ConsumeData(id, length, output);
        }

        handler.Consumed.Clear();
        if (!handler.Reset.Contains(post) && client.GetSendWindow(post) > 0 && handler.BodySent < 3)
        {
            handler.BodySent += client.SendData(post, "abc"u8[handler.BodySent..], endStream: false, output);
            if (handler.BodySent == 3)
            {
                var trailers = client.BeginTrailers(post);
                trailers.Add("x-sum"u8, "3"u8);
                client.SendTrailers(ref trailers, output);
            }
        }

        if (client.CanOpenStream)
        {
            int id = Request(client, "GET"u8, endStream: true, output);
            if (round % 2 == 1)
            {
                client.ResetStream(id, output);
            }
        }

        if (!client.IsAwaitingPingAck)
        {
            client.SendPing((ulong)round, output);
        }
    }

    private sealed class Recorder : H2Recorder, IHttp2ClientConnectionHandler
    {
        public int BodySent { get; set; }

        public void OnResponseField(int streamId, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed)
            => Log.Append($"f{streamId}:{Convert.ToHexString(name)}={Convert.ToHexString(value)} ");

        public void OnResponseHeaders(int streamId, int status, bool endStream) => Log.Append($"h{streamId}:{status}:{endStream} ");

        public void OnPingAck(ulong data) => Log.Append($"p{data} ");
    }
}
