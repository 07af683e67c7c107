using System.Buffers;

namespace LLRP.Fuzz.Support;

/// <summary>
/// Cuts an input into the pieces a network could deliver it in. The cut points come from a hash of the input, so each
/// input always splits the same way (a crash replays) while different inputs exercise different splits.
/// </summary>
public static class Pieces
{
    /// <summary>Up to three cut points, so up to four pieces; an input of 0 or 1 byte stays whole.</summary>
    public static byte[][] Split(ReadOnlySpan<byte> data)
    {
        if (data.Length < 2)
        {
            return [data.ToArray()];
        }
        var hash = Hash(data);
        var cuts = new SortedSet<int>();
        for (var i = 0; i < 3; i++)
        {
            cuts.Add(1 + (int)(hash % (uint)(data.Length - 1)));
            hash = (hash * 2654435761u) ^ (hash >> 13);
        }
        var pieces = new List<byte[]>();
        var start = 0;
        foreach (var cut in cuts)
        {
            pieces.Add(data[start..cut].ToArray());
            start = cut;
        }
        pieces.Add(data[start..].ToArray());
        return [.. pieces];
    }

    /// <summary>One sequence whose segments are <paramref name="pieces"/>, as a pipe holding several reads hands it out.</summary>
    public static ReadOnlySequence<byte> Sequence(IReadOnlyList<byte[]> pieces)
    {
        if (pieces.Count == 0)
        {
            return ReadOnlySequence<byte>.Empty;
        }
        var first = new Segment(pieces[0], 0);
        var last = first;
        for (var i = 1; i < pieces.Count; i++)
        {
            last = last.Append(pieces[i]);
        }
        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }

    // FNV-1a: small, fast and stable across runs (string.GetHashCode is randomised per process).
    private static uint Hash(ReadOnlySpan<byte> data)
    {
        var hash = 2166136261u;
        foreach (var b in data)
        {
            hash = (hash ^ b) * 16777619u;
        }
        return hash;
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
