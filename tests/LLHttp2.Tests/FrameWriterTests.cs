using LLHttp2.Frames;
using static LLHttp2.Tests.TestKit;

namespace LLHttp2.Tests;

/// <summary>The frame writers (RFC 9113 §6): exact bytes, and each frame read back by the reader.</summary>
public class FrameWriterTests
{
    private static Http2Frame ReadBack(byte[] bytes, out ReadOnlySequence<byte> rest)
    {
        rest = new ReadOnlySequence<byte>(bytes);
        Assert.True(new Http2FrameReader().TryReadFrame(ref rest, out var frame));
        return frame;
    }

    [Fact]
    public void DATA_with_and_without_END_STREAM()
    {
        var writer = new ArrayBufferWriter<byte>();
        Http2FrameWriter.WriteData(writer, 1, "hi"u8, endStream: true);
        Http2FrameWriter.WriteData(writer, 3, ReadOnlySpan<byte>.Empty, endStream: false);
        Assert.Equal("000002000100000001" + "6869" + "000000000000000003", ToHex(writer.WrittenSpan));
    }

    [Fact]
    public void HEADERS_within_the_frame_size_is_one_frame()
    {
        var writer = new ArrayBufferWriter<byte>();
        Http2FrameWriter.WriteHeaders(writer, 1, Hex("8286"), endStream: true, maxFrameSize: 16384);
        Assert.Equal("000002010500000001" + "8286", ToHex(writer.WrittenSpan));
        var frame = ReadBack(writer.WrittenSpan.ToArray(), out _);
        Assert.True(frame.EndHeaders && frame.EndStream);
    }

    [Theory]
    [InlineData(0, 1)]
    [InlineData(16384, 1)]
    [InlineData(16385, 2)]
    [InlineData(40000, 3)]
    [InlineData(3 * 16384, 3)]
    public void A_larger_field_block_is_split_into_CONTINUATION_frames(int blockLength, int frames)
    {
        var block = Enumerable.Range(0, blockLength).Select(i => (byte)i).ToArray();
        var writer = new ArrayBufferWriter<byte>();
        Http2FrameWriter.WriteHeaders(writer, 5, block, endStream: true, maxFrameSize: 16384);
        Assert.Equal(Http2FrameWriter.GetHeadersLength(blockLength, 16384), writer.WrittenCount);

        // Every split of a 40 KB block is too slow to run; the whole, and splits around each frame boundary.
        var bytes = writer.WrittenSpan.ToArray();
        var results = ReadIncrementally([bytes]).Cast<FrameSnapshot>().ToList();
        for (int boundary = 0; boundary < bytes.Length; boundary += Http2FrameHeader.Size + 16384)
        {
            for (int at = Math.Max(1, boundary - 1); at <= Math.Min(bytes.Length - 1, boundary + Http2FrameHeader.Size + 1); at++)
            {
                Assert.Equal(results, ReadIncrementally([bytes[..at], bytes[at..]]).Cast<FrameSnapshot>());
            }
        }

        Assert.Equal(frames, results.Count);
        Assert.Equal(Http2FrameType.Headers, results[0].Type);
        Assert.All(results.Skip(1), r => Assert.Equal(Http2FrameType.Continuation, r.Type));
        Assert.All(results, r => Assert.Equal(5, r.StreamId));
        Assert.Equal(Http2FrameFlags.EndStream | (frames == 1 ? Http2FrameFlags.EndHeaders : 0), results[0].Flags);
        Assert.Equal(Http2FrameFlags.EndHeaders, results[^1].Flags & Http2FrameFlags.EndHeaders);
        Assert.All(results.Skip(1).SkipLast(1), r => Assert.Equal(Http2FrameFlags.None, r.Flags));
        Assert.Equal(ToHex(block), string.Concat(results.Select(r => r.Payload)));
    }

    [Fact]
    public void RST_STREAM_SETTINGS_PING_GOAWAY_WINDOW_UPDATE_bytes()
    {
        var writer = new ArrayBufferWriter<byte>();
        Http2FrameWriter.WriteRstStream(writer, 3, Http2ErrorCode.Cancel);
        Http2FrameWriter.WriteSettings(writer, [new(Http2SettingId.MaxConcurrentStreams, 100), new(Http2SettingId.InitialWindowSize, 0x7fffffff)]);
        Http2FrameWriter.WriteSettingsAck(writer);
        Http2FrameWriter.WritePing(writer, 0x0102030405060708, ack: false);
        Http2FrameWriter.WritePing(writer, 0x0102030405060708, ack: true);
        Http2FrameWriter.WriteGoAway(writer, 7, Http2ErrorCode.ProtocolError, "x"u8);
        Http2FrameWriter.WriteWindowUpdate(writer, 0, 0x7fffffff);
        Http2FrameWriter.WriteWindowUpdate(writer, 9, 1);
        Assert.Equal(
            "000004030000000003" + "00000008"
            + "00000c040000000000" + "000300000064" + "00047fffffff"
            + "000000040100000000"
            + "000008060000000000" + "0102030405060708"
            + "000008060100000000" + "0102030405060708"
            + "000009070000000000" + "00000007" + "00000001" + "78"
            + "000004080000000000" + "7fffffff"
            + "000004080000000009" + "00000001",
            ToHex(writer.WrittenSpan));

        var results = ReadAllSplits(writer.WrittenSpan.ToArray()).Cast<FrameSnapshot>().ToList();
        Assert.Equal(
            [Http2FrameType.RstStream, Http2FrameType.Settings, Http2FrameType.Settings, Http2FrameType.Ping, Http2FrameType.Ping, Http2FrameType.GoAway, Http2FrameType.WindowUpdate, Http2FrameType.WindowUpdate],
            results.Select(r => r.Type));
    }

    [Fact]
    public void Span_writers_refuse_a_destination_too_small()
    {
        var small = new byte[8];
        Assert.Throws<ArgumentException>(() => Http2FrameWriter.WriteData(small, 1, ReadOnlySpan<byte>.Empty, false));
        Assert.Throws<ArgumentException>(() => Http2FrameWriter.WriteRstStream(small, 1, Http2ErrorCode.Cancel));
        Assert.Throws<ArgumentException>(() => Http2FrameWriter.WriteSettingsAck(small));
        Assert.Throws<ArgumentException>(() => Http2FrameWriter.WritePing(small, 0, false));
        Assert.Throws<ArgumentException>(() => Http2FrameWriter.WriteGoAway(small, 0, 0, ReadOnlySpan<byte>.Empty));
        Assert.Throws<ArgumentException>(() => Http2FrameWriter.WriteWindowUpdate(small, 0, 1));
        Assert.Throws<ArgumentException>(() => Http2FrameWriter.WriteHeaders(new byte[10], 1, "ab"u8, false, 16384));
        Assert.Equal(11, Http2FrameWriter.WriteHeaders(new byte[11], 1, "ab"u8, false, 16384));
    }

    [Fact]
    public void Writers_refuse_what_no_peer_may_receive()
    {
        var buffer = new byte[64];
        Assert.Throws<ArgumentException>(() => Http2FrameWriter.WriteData(buffer, 0, ReadOnlySpan<byte>.Empty, false));
        Assert.Throws<ArgumentException>(() => Http2FrameWriter.WriteHeaders(buffer, 0, ReadOnlySpan<byte>.Empty, false, 16384));
        Assert.Throws<ArgumentException>(() => Http2FrameWriter.WriteHeaders(buffer, 1, ReadOnlySpan<byte>.Empty, false, 100));
        Assert.Throws<ArgumentException>(() => Http2FrameWriter.WriteRstStream(buffer, 0, Http2ErrorCode.Cancel));
        Assert.Throws<ArgumentException>(() => Http2FrameWriter.WriteWindowUpdate(buffer, 1, 0));
        Assert.Throws<ArgumentException>(() => Http2FrameWriter.WriteWindowUpdate(buffer, -1, 1));
        Assert.Throws<ArgumentException>(() => Http2FrameWriter.WriteGoAway(buffer, -1, 0, ReadOnlySpan<byte>.Empty));
    }
}
