using System.Text;
using LLHttp2.Hpack;
using static LLHttp2.Tests.TestKit;

namespace LLHttp2.Tests;

/// <summary>RFC 7541 §5.2 and Appendix B: the Huffman code.</summary>
public class Rfc7541_5_2_Huffman
{
    [Theory]
    // A sample of Appendix B's "code as hex" and "len" columns, from each region of the table.
    [InlineData(0, 0x1ff8u, 13)]
    [InlineData(1, 0x7fffd8u, 23)]
    [InlineData(9, 0xffffeau, 24)]
    [InlineData(10, 0x3ffffffcu, 30)]
    [InlineData(22, 0x3ffffffeu, 30)]
    [InlineData(32, 0x14u, 6)]
    [InlineData('0', 0x0u, 5)]
    [InlineData('a', 0x3u, 5)]
    [InlineData('z', 0x7bu, 7)]
    [InlineData('~', 0x1ffdu, 13)]
    [InlineData(127, 0xffffffcu, 28)]
    [InlineData(128, 0xfffe6u, 20)]
    [InlineData(192, 0x3ffffe0u, 26)]
    [InlineData(203, 0x7ffffdeu, 27)]
    [InlineData(255, 0x3ffffeeu, 26)]
    [InlineData(Huffman.Eos, 0x3fffffffu, 30)]
    public void Codes_are_Appendix_B(int symbol, uint code, int length)
    {
        Assert.Equal(code, Huffman.GetCode(symbol));
        Assert.Equal(length, Huffman.GetCodeLength(symbol));
    }

    [Fact]
    public void The_lengths_fill_the_code_space_exactly()
    {
        // Kraft's equality: a complete prefix code, so no bit string is left without a meaning.
        double sum = Enumerable.Range(0, 257).Sum(s => Math.Pow(2, -Huffman.GetCodeLength(s)));
        Assert.Equal(1.0, sum, 12);
    }

    [Theory]
    [InlineData("www.example.com", "f1e3c2e5f23a6ba0ab90f4ff")] // C.4.1
    [InlineData("no-cache", "a8eb10649cbf")] // C.4.2
    [InlineData("custom-key", "25a849e95ba97d7f")] // C.4.3
    [InlineData("custom-value", "25a849e95bb8e8b4bf")]
    [InlineData("302", "6402")] // C.6.1
    [InlineData("307", "640eff")] // C.6.2
    [InlineData("private", "aec3771a4b")]
    [InlineData("Mon, 21 Oct 2013 20:13:21 GMT", "d07abe941054d444a8200595040b8166e082a62d1bff")]
    [InlineData("https://www.example.com", "9d29ad171863c78f0b97c8e9ae82ae43d3")]
    [InlineData("gzip", "9bd9ab")]
    [InlineData("foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1", "94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007")]
    [InlineData("", "")]
    public void Appendix_C_strings_both_ways(string text, string hex)
    {
        var source = Encoding.ASCII.GetBytes(text);
        Assert.Equal(hex.Length / 2, Huffman.GetEncodedLength(source));
        var encoded = new byte[hex.Length / 2];
        Assert.Equal(encoded.Length, Huffman.Encode(source, encoded));
        Assert.Equal(hex, ToHex(encoded));

        var decoded = new byte[source.Length];
        Assert.True(Huffman.TryDecode(Hex(hex), decoded, out int written));
        Assert.Equal(text, Encoding.ASCII.GetString(decoded, 0, written));
    }

    [Fact]
    public void All_256_byte_values_round_trip_alone_and_together()
    {
        for (int b = 0; b < 256; b++)
        {
            RoundTrip([(byte)b]);
            RoundTrip([(byte)b, (byte)b, (byte)b]);
        }

        var all = Enumerable.Range(0, 256).Select(i => (byte)i).ToArray();
        RoundTrip(all);
        RoundTrip(all.Reverse().ToArray());
        var random = new Random(7541);
        for (int i = 0; i < 200; i++)
        {
            var bytes = new byte[random.Next(0, 64)];
            random.NextBytes(bytes);
            RoundTrip(bytes);
        }
    }

    private static void RoundTrip(byte[] source)
    {
        var encoded = new byte[Huffman.GetEncodedLength(source)];
        Assert.Equal(encoded.Length, Huffman.Encode(source, encoded));
        var decoded = new byte[source.Length];
        Assert.True(Huffman.TryDecode(encoded, decoded, out int written));
        Assert.Equal(source, decoded[..written]);
    }

    [Theory]
    [InlineData("ffffffff")] // EOS (30 ones) and 2 bits of padding
    [InlineData("1fffffffff")] // 'a' then EOS
    [InlineData("ffffffffff")]
    public void EOS_in_a_string_is_COMPRESSION_ERROR(string hex) => AssertCompressionError(hex);

    [Theory]
    [InlineData("1fff")] // 'a' (5 bits) and 11 bits of ones
    [InlineData("ff")] // 8 ones: a prefix of a longer code, more than 7 bits
    [InlineData("fffe")]
    public void Padding_longer_than_7_bits_is_COMPRESSION_ERROR(string hex) => AssertCompressionError(hex);

    [Theory]
    [InlineData("18")] // 'a' then 000
    [InlineData("1e")] // 'a' then 110
    [InlineData("00")] // '0' then 000
    [InlineData("f1e3c2e5f23a6ba0ab90f4fe")] // www.example.com with its last padding bit 0
    public void Padding_that_is_not_all_ones_is_COMPRESSION_ERROR(string hex) => AssertCompressionError(hex);

    [Fact]
    public void A_destination_too_small_stops_decoding()
    {
        var encoded = Hex("f1e3c2e5f23a6ba0ab90f4ff");
        Assert.False(Huffman.TryDecode(encoded, new byte[14], out int written));
        Assert.Equal(14, written);
        Assert.True(Huffman.TryDecode(encoded, new byte[15], out written));
        Assert.Equal(15, written);
    }

    private static void AssertCompressionError(string hex)
    {
        var e = Assert.Throws<Http2Exception>(() => Huffman.TryDecode(Hex(hex), new byte[64], out _));
        Assert.Equal(Http2ErrorCode.CompressionError, e.Code);
    }
}
