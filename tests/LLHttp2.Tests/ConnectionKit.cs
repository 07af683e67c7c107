using System.Text;
using LLHttp2.Connection;
using LLHttp2.Frames;
using LLHttp2.Hpack;
using static LLHttp2.Tests.TestKit;

namespace LLHttp2.Tests;

/// <summary>Records what the connection tells the application, one line per event.</summary>
internal sealed class RecordingHandler : IHttp2ServerConnectionHandler
{
    public List<string> Events { get; } = [];

    public void OnField(int streamId, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed)
        => Events.Add($"field {streamId} {Encoding.Latin1.GetString(name)}: {Encoding.Latin1.GetString(value)}");

    public void OnHeaders(int streamId, bool isTrailers, bool endStream)
        => Events.Add($"{(isTrailers ? "trailers" : "headers")} {streamId}{(endStream ? " end" : "")}");

    public void OnData(int streamId, ReadOnlySequence<byte> data, bool endStream)
        => Events.Add($"data {streamId} {Encoding.Latin1.GetString(data.ToArray())}{(endStream ? " end" : "")}");

    public void OnStreamReset(int streamId, Http2ErrorCode code, bool byPeer)
        => Events.Add($"reset {streamId} {code}{(byPeer ? " by peer" : "")}");

    public void OnGoAway(int lastStreamId, Http2ErrorCode code) => Events.Add($"goaway {lastStreamId} {code}");
}

/// <summary>A client's bytes for a connection test, and the connection fed them at every split point.</summary>
internal static class ConnectionKit
{
    /// <summary>The server's SETTINGS with the default options, as every connection writes it first.</summary>
    public const string ServerSettings = "SETTINGS 3=100 4=65535 6=32768 2=0 8=1";

    public static byte[] Preface => Concat(Http2Preface.Client.ToArray(), Frame(Http2FrameType.Settings, 0, 0));

    public static byte[] Request(int streamId, bool endStream, params (string Name, string Value)[] fields)
        => Frame(Http2FrameType.Headers, Http2FrameFlags.EndHeaders | (endStream ? Http2FrameFlags.EndStream : 0), streamId, Block(fields));

    public static byte[] Get(int streamId, bool endStream = true, params (string Name, string Value)[] extra)
        => Request(streamId, endStream, [(":method", "GET"), (":scheme", "https"), (":path", "/"), (":authority", "a.example"), .. extra]);

    /// <summary>Literals without indexing and without Huffman, so every block stands alone.</summary>
    public static byte[] Block(params (string Name, string Value)[] fields)
    {
        var encoder = new HpackEncoder { UseHuffman = false };
        var writer = new ArrayBufferWriter<byte>();
        foreach (var (name, value) in fields)
        {
            // Indexing.WithoutIndexing still indexes exact static matches; that is fine, the static table is fixed.
            encoder.Encode(Encoding.Latin1.GetBytes(name), Encoding.Latin1.GetBytes(value), writer, HpackIndexing.WithoutIndexing);
        }

        return writer.WrittenSpan.ToArray();
    }

    public static byte[] Data(int streamId, string data, bool endStream = false)
        => Frame(Http2FrameType.Data, endStream ? Http2FrameFlags.EndStream : 0, streamId, Encoding.Latin1.GetBytes(data));

    public static byte[] Rst(int streamId, Http2ErrorCode code)
        => Frame(Http2FrameType.RstStream, 0, streamId, [0, 0, 0, (byte)code]);

    public static byte[] Ping(byte last, bool ack = false)
        => Frame(Http2FrameType.Ping, ack ? Http2FrameFlags.Ack : 0, 0, [0, 0, 0, 0, 0, 0, 0, last]);

    public static byte[] WindowUpdate(int streamId, int increment)
        => Frame(Http2FrameType.WindowUpdate, 0, streamId, [(byte)(increment >> 24), (byte)(increment >> 16), (byte)(increment >> 8), (byte)increment]);

    public static byte[] SettingsAck => Frame(Http2FrameType.Settings, Http2FrameFlags.Ack, 0);

    public sealed record Outcome(List<string> Frames, List<string> Events, Http2ConnectionState State, int ActiveStreams)
    {
        public override string ToString() => $"{State} {ActiveStreams}\n{string.Join("\n", Frames)}\n--\n{string.Join("\n", Events)}";
    }

    /// <summary>Feeds the input as the pieces arrive (<see cref="Feed"/>), then runs <paramref name="after"/> (the application's part).</summary>
    public static Outcome Run(byte[][] pieces, Http2ServerConnectionOptions? options = null, Action<Http2ServerConnection, IBufferWriter<byte>>? after = null)
    {
        var handler = new RecordingHandler();
        var connection = new Http2ServerConnection(handler, options);
        var output = new ArrayBufferWriter<byte>();
        Feed(connection, pieces, output);
        after?.Invoke(connection, output);
        return new Outcome(Frames(output.WrittenSpan.ToArray()), handler.Events, connection.State, connection.ActiveStreams);
    }

    /// <summary>Every split of the input must give the same frames, events and state as the whole.</summary>
    public static Outcome RunAllSplits(byte[] input, Http2ServerConnectionOptions? options = null, Action<Http2ServerConnection, IBufferWriter<byte>>? after = null)
        => SameForAllSplits(input, split => Run(split, options, after));

    /// <summary>
    /// Feeds the pieces as they arrive: one <see cref="Http2Connection.Process"/> per arrival, the unread bytes kept as
    /// a multi-segment sequence, until the connection closes (which must name its error).
    /// </summary>
    public static void Feed(Http2Connection connection, byte[][] pieces, IBufferWriter<byte> output)
    {
        var arrived = new List<byte[]>();
        long consumed = 0;
        foreach (var piece in pieces)
        {
            arrived.Add(piece);
            var buffer = Sequence(arrived).Slice(consumed);
            long before = buffer.Length;
            connection.Process(ref buffer, output);
            consumed += before - buffer.Length;
            if (connection.State == Http2ConnectionState.Closed)
            {
                Assert.NotNull(connection.CloseError);
                break;
            }
        }
    }

    /// <summary>Runs the input under every split (<see cref="TestKit.AllSplits"/>); each must print as the whole does.</summary>
    public static T SameForAllSplits<T>(byte[] input, Func<byte[][], T> run)
        where T : class
    {
        T? first = null;
        foreach (var split in AllSplits(input))
        {
            var outcome = run(split);
            if (first is null)
            {
                first = outcome;
            }
            else
            {
                Assert.Equal(first.ToString(), outcome.ToString());
            }
        }

        return first!;
    }

    /// <summary>The server's frames, one line each.</summary>
    public static List<string> Frames(byte[] output)
    {
        var reader = new Http2FrameReader();
        var buffer = new ReadOnlySequence<byte>(output);
        var frames = new List<string>();
        while (reader.TryReadFrame(ref buffer, out var frame))
        {
            frames.Add(frame.Type switch
            {
                Http2FrameType.Settings when frame.IsAck => "SETTINGS ACK",
                Http2FrameType.Settings => "SETTINGS" + SettingsText(frame),
                Http2FrameType.Ping => $"PING{(frame.IsAck ? " ACK" : "")} {frame.PingData}",
                Http2FrameType.RstStream => $"RST_STREAM {frame.StreamId} {frame.ErrorCode}",
                Http2FrameType.GoAway => $"GOAWAY {frame.LastStreamId} {frame.ErrorCode}",
                Http2FrameType.WindowUpdate => $"WINDOW_UPDATE {frame.StreamId} {frame.WindowSizeIncrement}",
                Http2FrameType.Data => $"DATA {frame.StreamId} {Encoding.Latin1.GetString(frame.Payload.ToArray())}{(frame.EndStream ? " end" : "")}",
                _ => $"{frame.Type} {frame.StreamId}{(frame.EndStream ? " end" : "")}",
            });
        }

        Assert.Equal(0, buffer.Length);
        return frames;
    }

    private static string SettingsText(in Http2Frame frame)
    {
        var text = new StringBuilder();
        var settings = frame.GetSettings();
        while (settings.TryRead(out var setting))
        {
            text.Append($" {(int)setting.Id}={setting.Value}");
        }

        return text.ToString();
    }
}
