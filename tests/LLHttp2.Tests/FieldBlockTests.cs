using LLHttp2.Frames;
using LLHttp2.Hpack;
using static LLHttp2.Tests.TestKit;

namespace LLHttp2.Tests;

/// <summary>RFC 9113 §4.3: a field block in HEADERS and CONTINUATION fragments, joined and decoded, under every split.</summary>
public class Rfc9113_4_3_FieldBlocks
{
    private static readonly byte[] Block = Hex("8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf");

    private static readonly byte[] Frames = Concat(
        Frame(Http2FrameType.Headers, Http2FrameFlags.Padded | Http2FrameFlags.EndStream, 1, Concat([3], Block[..5], [0, 0, 0])),
        Frame(Http2FrameType.Continuation, 0, 1, Block[5..6]),
        Frame(Http2FrameType.Continuation, 0, 1),
        Frame(Http2FrameType.Continuation, Http2FrameFlags.EndHeaders, 1, Block[6..]),
        Frame(Http2FrameType.Data, Http2FrameFlags.EndStream, 3));

    [Fact]
    public void Fragments_joined_under_every_split_decode_to_the_fields()
    {
        var expected = new List<Field>
        {
            new(":method", "GET"), new(":scheme", "https"), new(":path", "/index.html"), new("custom-key", "custom-value"),
        };
        foreach (var split in AllSplits(Frames))
        {
            var reader = new Http2FrameReader();
            var block = new Http2FieldBlockBuffer();
            var decoder = new HpackDecoder();
            HpackKit.Decode(decoder, Hex("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff")); // :authority as entry 62 for bf
            HpackKit.Decode(decoder, Hex("4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf")); // then 63
            var fields = new List<Field>();
            var arrived = new List<byte[]>();
            long consumed = 0;
            foreach (var piece in split)
            {
                arrived.Add(piece);
                var buffer = Sequence(arrived).Slice(consumed);
                long before = buffer.Length;
                while (reader.TryReadFrame(ref buffer, out var frame))
                {
                    if (frame.Type is Http2FrameType.Headers or Http2FrameType.Continuation && block.Add(frame))
                    {
                        fields.AddRange(HpackKit.Decode(decoder, block.Block.ToArray()));
                    }
                }

                consumed += before - buffer.Length;
            }

            Assert.Equal(Frames.Length, consumed);
            Assert.Equal([.. expected.Take(3), new(":authority", "www.example.com"), expected[3]], fields);
        }
    }

    [Fact]
    public void A_block_beyond_its_bound_is_a_connection_ENHANCE_YOUR_CALM()
    {
        var block = new Http2FieldBlockBuffer(maxLength: 10);
        var reader = new Http2FrameReader();
        var buffer = new ReadOnlySequence<byte>(Concat(Frame(Http2FrameType.Headers, 0, 1, new byte[6]), Frame(Http2FrameType.Continuation, 0, 1, new byte[4]), Frame(Http2FrameType.Continuation, 0, 1, new byte[1])));
        Assert.True(reader.TryReadFrame(ref buffer, out var frame));
        Assert.False(block.Add(frame));
        Assert.True(reader.TryReadFrame(ref buffer, out frame));
        Assert.False(block.Add(frame));
        Assert.Equal(10, block.Block.Length);
        Assert.True(reader.TryReadFrame(ref buffer, out frame));
        var e = Assert.Throws<Http2Exception>(() => block.Add(frame));
        Assert.Equal(Http2ErrorCode.EnhanceYourCalm, e.Code);
        Assert.True(e.IsConnectionError);
    }

    [Fact]
    public void Each_HEADERS_starts_a_new_block()
    {
        var block = new Http2FieldBlockBuffer();
        foreach (var bytes in new[] { Frame(Http2FrameType.Headers, Http2FrameFlags.EndHeaders, 1, 0x82), Frame(Http2FrameType.Headers, Http2FrameFlags.EndHeaders, 3, 0x84) })
        {
            var buffer = new ReadOnlySequence<byte>(bytes);
            Assert.True(new Http2FrameReader().TryReadFrame(ref buffer, out var frame));
            Assert.True(block.Add(frame));
            Assert.Equal(bytes[^1..], block.Block.ToArray());
        }

        var data = new ReadOnlySequence<byte>(Frame(Http2FrameType.Data, 0, 1));
        Assert.True(new Http2FrameReader().TryReadFrame(ref data, out var dataFrame));
        Assert.Throws<ArgumentException>(() => block.Add(dataFrame));
    }
}
