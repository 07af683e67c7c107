using System.Buffers;
using System.Text;
using LLHttp2;
using LLHttp2.Connection;
using LLHttp2.Frames;
using LLRP.Fuzz.Support;

namespace LLRP.Fuzz.Targets;

/// <summary>
/// LLHttp2's server connection over arbitrary bytes after the client preface, fed whole and as pieces arriving one
/// after another (the unread rest a multi-segment sequence). Both feedings must give the same frames written, the
/// same events and the same final state; no exception may escape <see cref="Http2ServerConnection.Process"/> (it
/// turns protocol errors into RST_STREAM or GOAWAY); the stream table stays within the concurrency limit; every
/// frame written reads back. A third feeding plays the application (responses, consumed data) and must not throw.
/// </summary>
internal static class H2ConnectionTarget
{
    private static readonly Http2ServerConnectionOptions Options = new() { MaxConcurrentStreams = 4 };

    public static void Run(ReadOnlySpan<byte> input)
    {
        var bytes = new byte[Http2Preface.Length + input.Length];
        Http2Preface.Client.CopyTo(bytes);
        input.CopyTo(bytes.AsSpan(Http2Preface.Length));

        var whole = Feed([bytes], respond: false);
        var split = Feed(Pieces.Split(bytes), respond: false);
        Finding.Check(whole == split, $"The connection fed whole and in pieces disagrees:\n{whole}\nagainst\n{split}");
        Feed(Pieces.Split(bytes), respond: true);
    }

    private static string Feed(byte[][] pieces, bool respond)
    {
        var handler = new Recorder();
        var connection = new Http2ServerConnection(handler, Options);
        var output = new ArrayBufferWriter<byte>();
        H2Feed.Feed(connection, pieces, Options.MaxConcurrentStreams, output, respond ? () => Respond(connection, handler, output) : null);
        return H2Feed.Describe(connection, output.WrittenSpan, handler.Events);
    }

    /// <summary>The application's part: answers every request whose body ended, and consumes all data delivered.</summary>
    private static void Respond(Http2ServerConnection connection, Recorder handler, IBufferWriter<byte> output)
    {
        foreach (var (id, length) in handler.Consumed)
        {
            connection.ConsumeData(id, length, output);
        }

        handler.Consumed.Clear();
        foreach (var id in handler.Ended)
        {
            if (!handler.Reset.Contains(id))
            {
                connection.SendHeaders(id, [0x88], endStream: false, output);
                connection.SendData(id, "ok"u8, endStream: true, output);
            }
        }

        handler.Ended.Clear();
    }

    private sealed class Recorder : H2Recorder, IHttp2ServerConnectionHandler
    {
        public void OnField(int streamId, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed)
            => Log.Append($"f{streamId}:{Convert.ToHexString(name)}={Convert.ToHexString(value)} ");

        public void OnHeaders(int streamId, bool isTrailers, bool endStream)
        {
            Log.Append($"h{streamId}:{isTrailers}:{endStream} ");
            if (endStream)
            {
                Ended.Add(streamId);
            }
        }
    }
}
