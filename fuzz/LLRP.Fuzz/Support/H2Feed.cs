using System.Buffers;
using System.Text;
using LLHttp2.Connection;
using LLHttp2.Frames;

namespace LLRP.Fuzz.Support;

/// <summary>What the HTTP/2 connection targets (server and client side) share: feeding pieces, and reading back what a connection wrote.</summary>
public static class H2Feed
{
    /// <summary>
    /// Feeds the pieces as they arrive (one Process per arrival, the unread rest a multi-segment sequence), checking
    /// after each that the stream table stays within <paramref name="maxStreams"/> and that a closed connection names its
    /// error; <paramref name="afterEach"/> plays the application between arrivals (optional).
    /// </summary>
    public static void Feed(Http2Connection connection, byte[][] pieces, int maxStreams, IBufferWriter<byte> output, Action? afterEach = null)
    {
        var arrived = new List<byte[]>();
        long consumed = 0;
        foreach (var piece in pieces)
        {
            arrived.Add(piece);
            var buffer = Pieces.Sequence(arrived).Slice(consumed);
            long before = buffer.Length;
            connection.Process(ref buffer, output);
            consumed += before - buffer.Length;
            Finding.Check(connection.ActiveStreams <= maxStreams, $"{connection.ActiveStreams} streams active, above the limit.");
            if (connection.State == Http2ConnectionState.Closed)
            {
                Finding.Check(connection.CloseError is not null, "Closed without an error.");
                break;
            }

            afterEach?.Invoke();
        }
    }

    /// <summary>The headers of the frames written, which must read back whole; then the final state and events.</summary>
    public static string Describe(Http2Connection connection, ReadOnlySpan<byte> written, string events)
    {
        var reader = new Http2FrameReader();
        var buffer = new ReadOnlySequence<byte>(written.ToArray());
        var text = new StringBuilder();
        while (reader.TryReadFrame(ref buffer, out var frame))
        {
            text.Append(frame.Header).Append(' ');
        }

        Finding.Check(buffer.IsEmpty, "The connection wrote a partial frame.");
        return $"{connection.State} {connection.ActiveStreams} {connection.CloseError?.Code}\n{text}\n{events}";
    }
}

/// <summary>The events both connection targets record (as one line to compare feedings), and what the application still owes.</summary>
public abstract class H2Recorder
{
    protected StringBuilder Log { get; } = new();

    public List<int> Ended { get; } = [];

    public HashSet<int> Reset { get; } = [];

    public List<(int, int)> Consumed { get; } = [];

    public string Events => Log.ToString();

    public void OnData(int streamId, ReadOnlySequence<byte> data, bool endStream)
    {
        Log.Append($"d{streamId}:{data.Length}:{endStream} ");
        Consumed.Add((streamId, (int)data.Length));
        if (endStream)
        {
            Ended.Add(streamId);
        }
    }

    public void OnStreamReset(int streamId, LLHttp2.Http2ErrorCode code, bool byPeer)
    {
        Log.Append($"r{streamId}:{code}:{byPeer} ");
        Reset.Add(streamId);
    }

    public void OnGoAway(int lastStreamId, LLHttp2.Http2ErrorCode code) => Log.Append($"g{lastStreamId}:{code} ");
}
