using LLHttp2.Hpack;
using static LLHttp2.Tests.TestKit;

namespace LLHttp2.Tests;

/// <summary>RFC 7541 §5.1 integers, with Appendix C.1's examples.</summary>
public class Rfc7541_5_1_Integers
{
    [Theory]
    [InlineData(10, 5, "0a")] // C.1.1
    [InlineData(1337, 5, "1f9a0a")] // C.1.2
    [InlineData(42, 8, "2a")] // C.1.3
    public void Appendix_C_1_examples_both_ways(int value, int prefixBits, string hex)
    {
        var buffer = new byte[8];
        int written = HpackInteger.Encode(value, prefixBits, 0, buffer);
        Assert.Equal(hex, ToHex(buffer.AsSpan(0, written)));
        Assert.Equal(written, HpackInteger.GetEncodedLength(value, prefixBits));

        Assert.True(HpackInteger.TryDecode(Hex(hex), prefixBits, out int decoded, out int consumed));
        Assert.Equal(value, decoded);
        Assert.Equal(written, consumed);
    }

    [Fact]
    public void Every_prefix_round_trips_values_at_the_bounds_and_keeps_the_flag_bits()
    {
        for (int prefixBits = 1; prefixBits <= 8; prefixBits++)
        {
            int mask = (1 << prefixBits) - 1;
            byte flags = (byte)(0xFF << prefixBits);
            foreach (int value in new[] { 0, 1, mask - 1, mask, mask + 1, mask + 127, mask + 128, 16383, 1 << 21, int.MaxValue - 1, int.MaxValue })
            {
                if (value < 0)
                {
                    continue;
                }

                var buffer = new byte[HpackInteger.MaxLength + 1];
                int written = HpackInteger.Encode(value, prefixBits, flags, buffer);
                Assert.True(written <= HpackInteger.MaxLength);
                Assert.Equal(flags, buffer[0] & flags);
                Assert.True(HpackInteger.TryDecode(buffer, prefixBits, out int decoded, out int consumed), $"{value} prefix {prefixBits}");
                Assert.Equal((value, written), (decoded, consumed));

                // Cut anywhere inside, the integer is incomplete, never wrong.
                for (int cut = 0; cut < written; cut++)
                {
                    Assert.False(HpackInteger.TryDecode(buffer.AsSpan(0, cut), prefixBits, out _, out _));
                }
            }
        }
    }

    [Theory]
    [InlineData(5, "1fe1ffffff07")] // 31 + 2^31 - 31 = 2^31
    [InlineData(8, "ff81ffffff07")] // 255 + ... > 2^31-1
    [InlineData(1, "01ffffffff0f")]
    [InlineData(7, "7f8080808080808000")] // redundant zero continuation bytes beyond 5
    [InlineData(4, "0f808080808080")] // a sixth continuation byte is refused before the integer ends
    public void Integers_beyond_the_bounds_are_COMPRESSION_ERROR(int prefixBits, string hex)
    {
        var e = Assert.Throws<Http2Exception>(() => HpackInteger.TryDecode(Hex(hex), prefixBits, out _, out _));
        Assert.Equal(Http2ErrorCode.CompressionError, e.Code);
        Assert.True(e.IsConnectionError);
    }

    [Fact]
    public void The_largest_value_takes_at_most_5_continuation_bytes()
    {
        var buffer = new byte[HpackInteger.MaxLength];
        Assert.Equal(HpackInteger.MaxLength, HpackInteger.Encode(int.MaxValue, 1, 0, buffer));
        Assert.Throws<ArgumentException>(() => HpackInteger.Encode(-1, 5, 0, buffer));
        Assert.Throws<ArgumentException>(() => HpackInteger.Encode(1337, 5, 0, new byte[2]));
    }
}
