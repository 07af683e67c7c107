using System.Buffers;
using LLHttp2;
using LLHttp2.Frames;
using LLRP.Fuzz.Support;

namespace LLRP.Fuzz.Targets;

/// <summary>
/// LLHttp2's frame reader over arbitrary bytes, read as one buffer and as pieces arriving one after another (the unread
/// rest kept as a multi-segment sequence, as a pipe hands it over). Both readings must give the same frames, stream
/// errors and final verdict; every frame must keep within its header's length and the frame size, a SETTINGS
/// frame's pairs must read, and a frame of a type the writers produce, written again, must read back the same.
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

        var description = $"{header}:{Convert.ToHexString(frame.Payload.ToArray())}:{frame.PingData:x}";
        CheckRewrite(frame);
        return description;
    }

    /// <summary>
    /// The writers' differential: a frame of a type the writers produce, written again from what the reader made of
    /// it, reads back as the same frame (padding and priority fields, which the writers never send, aside).
    /// </summary>
    private static void CheckRewrite(in Http2Frame frame)
    {
        var writer = new ArrayBufferWriter<byte>();
        var payload = frame.Payload.ToArray();
        switch (frame.Type)
        {
            case Http2FrameType.Data:
                Http2FrameWriter.WriteData(writer, frame.StreamId, payload, frame.EndStream);
                break;
            case Http2FrameType.Headers when frame.EndHeaders:
                Http2FrameWriter.WriteHeaders(writer, frame.StreamId, payload, frame.EndStream, 16384);
                break;
            case Http2FrameType.RstStream:
                Http2FrameWriter.WriteRstStream(writer, frame.StreamId, frame.ErrorCode);
                break;
            case Http2FrameType.Settings when frame.IsAck:
                Http2FrameWriter.WriteSettingsAck(writer);
                break;
            case Http2FrameType.Settings:
                var pairs = new List<Http2Setting>();
                var settings = frame.GetSettings();
                while (settings.TryRead(out var setting))
                {
                    pairs.Add(setting);
                }

                Http2FrameWriter.WriteSettings(writer, pairs.ToArray());
                break;
            case Http2FrameType.Ping:
                Http2FrameWriter.WritePing(writer, frame.PingData, frame.IsAck);
                break;
            case Http2FrameType.GoAway:
                Http2FrameWriter.WriteGoAway(writer, frame.LastStreamId, frame.ErrorCode, payload);
                break;
            case Http2FrameType.WindowUpdate:
                Http2FrameWriter.WriteWindowUpdate(writer, frame.StreamId, frame.WindowSizeIncrement);
                break;
            default:
                return;
        }

        var buffer = new ReadOnlySequence<byte>(writer.WrittenMemory);
        Finding.Check(new Http2FrameReader().TryReadFrame(ref buffer, out var again) && buffer.IsEmpty, $"{frame.Header} written again does not read back as one frame.");
        // Only the flags that mean something for the type survive (RFC 9113 §4.1: the others are ignored, sent as 0).
        var flags = frame.Type switch
        {
            Http2FrameType.Data => Http2FrameFlags.EndStream,
            Http2FrameType.Headers => Http2FrameFlags.EndStream | Http2FrameFlags.EndHeaders,
            Http2FrameType.Settings or Http2FrameType.Ping => Http2FrameFlags.Ack,
            _ => Http2FrameFlags.None,
        };
        Finding.Check(
            again.Type == frame.Type && again.StreamId == frame.StreamId && again.PingData == frame.PingData
                && (again.Header.Flags & flags) == (frame.Header.Flags & flags) && again.Payload.ToArray().AsSpan().SequenceEqual(payload),
            $"{frame.Header} written again reads back as {again.Header}.");
    }
}
