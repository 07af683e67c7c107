using System.Buffers;
using LLHttp2;
using LLHttp2.Frames;
using LLRP.Fuzz.Support;

namespace LLRP.Fuzz.Targets;

/// <summary>
/// LLHttp2's frame reader over arbitrary bytes, read as one buffer and as pieces arriving one after another (the unread
/// rest kept as a multi-segment sequence, as a pipe hands it over). Both readings must give the same frames, stream
/// errors and final verdict; every frame must keep within its header's length and the frame size, and a SETTINGS
/// frame's pairs must read.
/// </summary>
internal static class H2FramesTarget
{
    public static void Run(ReadOnlySpan<byte> input)
    {
        var whole = Read([input.ToArray()]);
        var split = Read(Pieces.Split(input));
        Finding.Check(whole.SequenceEqual(split), $"Frames read whole and in pieces disagree:\n{string.Join(" ", whole)}\nagainst\n{string.Join(" ", split)}");
    }

    private static List<string> Read(byte[][] pieces)
    {
        var reader = new Http2FrameReader();
        var results = new List<string>();
        var arrived = new List<byte[]>();
        long consumed = 0;
        foreach (var piece in pieces)
        {
            arrived.Add(piece);
            var buffer = Pieces.Sequence(arrived).Slice(consumed);
            while (true)
            {
                long before = buffer.Length;
                try
                {
                    if (!reader.TryReadFrame(ref buffer, out var frame))
                    {
                        break;
                    }

                    results.Add(Describe(frame, reader));
                }
                catch (Http2Exception e) when (!e.IsConnectionError)
                {
                    results.Add($"stream-error:{e.Code}:{e.StreamId}");
                }
                catch (Http2Exception e)
                {
                    results.Add($"connection-error:{e.Code}");
                    return results;
                }

                Finding.Check(buffer.Length < before, "A frame or stream error consumed no bytes.");
                consumed += before - buffer.Length;
            }
        }

        results.Add($"need-more:{arrived.Sum(p => p.Length) - consumed}");
        return results;
    }

    private static string Describe(in Http2Frame frame, Http2FrameReader reader)
    {
        var header = frame.Header;
        Finding.Check(header.Length <= reader.MaxFrameSize, $"{header} exceeds the frame size {reader.MaxFrameSize}.");
        Finding.Check(frame.Payload.Length <= header.Length, $"{header} has a payload of {frame.Payload.Length} bytes.");
        Finding.Check(header.StreamId >= 0, $"{header} has a negative stream.");
        Finding.Check(header.Type <= Http2FrameType.Continuation, $"{header} is of an unknown type, which must be skipped.");
        if (header.Type == Http2FrameType.Settings && !frame.IsAck)
        {
            var settings = frame.GetSettings();
            int pairs = 0;
            while (settings.TryRead(out _))
            {
                pairs++;
            }

            Finding.Check(pairs * 6 == header.Length, $"{header} gave {pairs} pairs.");
        }

        return $"{header}:{Convert.ToHexString(frame.Payload.ToArray())}:{frame.PingData:x}";
    }
}
