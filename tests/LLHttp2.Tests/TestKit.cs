using LLHttp2.Frames;

namespace LLHttp2.Tests;

/// <summary>Builds frames and feeds them to a reader at every split point, as the bytes of a connection arrive.</summary>
internal static class TestKit
{
    public static byte[] Hex(string hex) => Convert.FromHexString(hex.Replace(" ", "", StringComparison.Ordinal).Replace("\n", "", StringComparison.Ordinal).Replace("\r", "", StringComparison.Ordinal));

    public static string ToHex(ReadOnlySpan<byte> bytes) => Convert.ToHexString(bytes).ToLowerInvariant();

    public static byte[] Frame(byte type, byte flags, int streamId, params byte[] payload)
    {
        var frame = new byte[Http2FrameHeader.Size + payload.Length];
        frame[0] = (byte)(payload.Length >> 16);
        frame[1] = (byte)(payload.Length >> 8);
        frame[2] = (byte)payload.Length;
        frame[3] = type;
        frame[4] = flags;
        frame[5] = (byte)(streamId >> 24);
        frame[6] = (byte)(streamId >> 16);
        frame[7] = (byte)(streamId >> 8);
        frame[8] = (byte)streamId;
        payload.CopyTo(frame, Http2FrameHeader.Size);
        return frame;
    }

    public static byte[] Frame(Http2FrameType type, Http2FrameFlags flags, int streamId, params byte[] payload)
        => Frame((byte)type, (byte)flags, streamId, payload);

    public static byte[] Concat(params byte[][] parts) => parts.SelectMany(p => p).ToArray();

    /// <summary>The arrivals of one input: all at once, in two pieces at every split point, and one byte at a time.</summary>
    public static IEnumerable<byte[][]> AllSplits(byte[] bytes)
    {
        yield return [bytes];
        for (int i = 1; i < bytes.Length; i++)
        {
            yield return [bytes[..i], bytes[i..]];
        }

        yield return bytes.Select(b => new[] { b }).ToArray();
    }

    /// <summary>A sequence with one segment per piece (empty pieces included), as a pipe hands over what arrived.</summary>
    public static ReadOnlySequence<byte> Sequence(IReadOnlyList<byte[]> pieces)
    {
        if (pieces.Count == 0)
        {
            return ReadOnlySequence<byte>.Empty;
        }

        var first = new Segment(pieces[0], 0);
        var last = first;
        for (int i = 1; i < pieces.Count; i++)
        {
            last = last.Append(pieces[i]);
        }

        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }

    public sealed record FrameSnapshot(Http2FrameType Type, Http2FrameFlags Flags, int StreamId, string Payload, ulong Value);

    public static FrameSnapshot Snapshot(in Http2Frame frame)
        => new(frame.Type, frame.Header.Flags, frame.StreamId, ToHex(frame.Payload.ToArray()), frame.PingData);

    /// <summary>
    /// Reads every frame as the pieces arrive one after another (after each arrival, frames until "need more"), with
    /// the unread bytes kept as a multi-segment sequence; a stream error is recorded and reading goes on.
    /// </summary>
    public static List<object> ReadIncrementally(byte[][] pieces, Http2FrameReader? reader = null)
    {
        reader ??= new Http2FrameReader();
        var results = new List<object>();
        var arrived = new List<byte[]>();
        long consumed = 0;
        foreach (var piece in pieces)
        {
            arrived.Add(piece);
            var buffer = Sequence(arrived).Slice(consumed);
            while (true)
            {
                long before = buffer.Length;
                try
                {
                    if (!reader.TryReadFrame(ref buffer, out var frame))
                    {
                        break;
                    }

                    results.Add(Snapshot(frame));
                }
                catch (Http2Exception e) when (!e.IsConnectionError)
                {
                    results.Add(new ErrorSnapshot(e.Code, e.IsConnectionError, e.StreamId));
                }

                consumed += before - buffer.Length;
                Assert.True(before > buffer.Length || buffer.Length == 0, "a frame was yielded without consuming bytes");
            }
        }

        Assert.Equal(pieces.Sum(p => p.Length), consumed);
        return results;
    }

    public sealed record ErrorSnapshot(Http2ErrorCode Code, bool IsConnectionError, int StreamId);

    /// <summary>Reads the input under every split; every split must yield the same frames (and stream errors) as the whole.</summary>
    public static List<object> ReadAllSplits(byte[] bytes, Func<Http2FrameReader>? newReader = null)
    {
        List<object>? first = null;
        foreach (var split in AllSplits(bytes))
        {
            var result = ReadIncrementally(split, newReader?.Invoke());
            if (first is null)
            {
                first = result;
            }
            else
            {
                Assert.Equal(first, result);
            }
        }

        return first!;
    }

    /// <summary>Every split must end in the same connection error, thrown once the offending frame is visible.</summary>
    public static Http2Exception AssertConnectionErrorAllSplits(byte[] bytes, Http2ErrorCode code, Func<Http2FrameReader>? newReader = null)
    {
        Http2Exception? first = null;
        foreach (var split in AllSplits(bytes))
        {
            var e = Assert.Throws<Http2Exception>(() => ReadIncrementally(split, newReader?.Invoke()));
            Assert.Equal(code, e.Code);
            Assert.True(e.IsConnectionError, e.Message);
            first ??= e;
        }

        return first!;
    }

    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        public Segment(ReadOnlyMemory<byte> memory, long runningIndex)
        {
            Memory = memory;
            RunningIndex = runningIndex;
        }

        public Segment Append(ReadOnlyMemory<byte> memory)
        {
            var next = new Segment(memory, RunningIndex + Memory.Length);
            Next = next;
            return next;
        }
    }
}
