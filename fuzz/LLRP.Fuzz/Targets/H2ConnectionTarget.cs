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
        var arrived = new List<byte[]>();
        long consumed = 0;
        foreach (var piece in pieces)
        {
            arrived.Add(piece);
            var buffer = Pieces.Sequence(arrived).Slice(consumed);
            long before = buffer.Length;
            connection.Process(ref buffer, output);
            consumed += before - buffer.Length;
            Finding.Check(connection.ActiveStreams <= Options.MaxConcurrentStreams, $"{connection.ActiveStreams} streams active, above the limit.");
            if (connection.State == Http2ConnectionState.Closed)
            {
                Finding.Check(connection.CloseError is not null, "Closed without an error.");
                break;
            }

            if (respond)
            {
                Respond(connection, handler, output);
            }
        }

        var frames = Frames(output.WrittenSpan.ToArray());
        return $"{connection.State} {connection.ActiveStreams} {connection.CloseError?.Code}\n{frames}\n{handler.Events}";
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

    private static string Frames(byte[] written)
    {
        var reader = new Http2FrameReader();
        var buffer = new ReadOnlySequence<byte>(written);
        var text = new StringBuilder();
        while (reader.TryReadFrame(ref buffer, out var frame))
        {
            text.Append(frame.Header).Append(' ');
        }

        Finding.Check(buffer.IsEmpty, "The connection wrote a partial frame.");
        return text.ToString();
    }

    private sealed class Recorder : IHttp2ServerConnectionHandler
    {
        private readonly StringBuilder _events = new();

        public List<int> Ended { get; } = [];

        public HashSet<int> Reset { get; } = [];

        public List<(int, int)> Consumed { get; } = [];

        public string Events => _events.ToString();

        public void OnField(int streamId, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed)
            => _events.Append($"f{streamId}:{Convert.ToHexString(name)}={Convert.ToHexString(value)} ");

        public void OnHeaders(int streamId, bool isTrailers, bool endStream)
        {
            _events.Append($"h{streamId}:{isTrailers}:{endStream} ");
            if (endStream)
            {
                Ended.Add(streamId);
            }
        }

        public void OnData(int streamId, ReadOnlySequence<byte> data, bool endStream)
        {
            _events.Append($"d{streamId}:{data.Length}:{endStream} ");
            Consumed.Add((streamId, (int)data.Length));
            if (endStream)
            {
                Ended.Add(streamId);
            }
        }

        public void OnStreamReset(int streamId, Http2ErrorCode code, bool byPeer)
        {
            _events.Append($"r{streamId}:{code}:{byPeer} ");
            Reset.Add(streamId);
        }

        public void OnGoAway(int lastStreamId, Http2ErrorCode code) => _events.Append($"g{lastStreamId}:{code} ");
    }
}
