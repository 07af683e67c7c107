using LLHttp2.Hpack;
using static LLHttp2.Tests.HpackKit;
using static LLHttp2.Tests.TestKit;

namespace LLHttp2.Tests;

/// <summary>The encoder's choices beyond Appendix C, and encoder/decoder round trips.</summary>
public class Rfc7541_Encoder
{
    [Theory]
    [InlineData("authorization", "Bearer a-long-token-of-many-bytes")]
    [InlineData("proxy-authorization", "Basic dXNlcjpwYXNz")]
    [InlineData("cookie", "sid=1234567")]
    [InlineData("set-cookie", "a=b")]
    public void Sensitive_fields_are_never_indexed(string name, string value)
    {
        var encoder = new HpackEncoder();
        var block = Encode(encoder, [new Field(name, value)]);
        Assert.Equal(0x10, block[0] & 0xF0);
        Assert.Equal(0, encoder.DynamicTable.Count);
        Assert.Equal([new Field(name, value, NeverIndexed: true)], Decode(new HpackDecoder(), block));
    }

    [Fact]
    public void A_long_cookie_is_indexed()
    {
        var encoder = new HpackEncoder();
        Encode(encoder, [new Field("cookie", "session=0123456789abcdefghij")]);
        Assert.Equal(1, encoder.DynamicTable.Count);
        Assert.False(HpackEncoder.IsSensitive("cookie"u8, "session=0123456789abcdefghij"u8));
        Assert.True(HpackEncoder.IsSensitive("cookie"u8, "0123456789012345678"u8));
    }

    [Fact]
    public void An_exact_match_in_the_dynamic_table_is_indexed()
    {
        var encoder = new HpackEncoder { UseHuffman = false };
        Encode(encoder, [new Field("x-a", "1"), new Field("x-b", "2")]);
        Assert.Equal("bfbe", ToHex(Encode(encoder, [new Field("x-a", "1"), new Field("x-b", "2")])));
        // a name in the dynamic table only is used as the literal's name
        Assert.Equal("7e01" + "33", ToHex(Encode(encoder, [new Field("x-b", "3")])));
    }

    [Fact]
    public void A_field_larger_than_the_table_is_a_literal_without_indexing()
    {
        var encoder = new HpackEncoder(headerTableSize: 64) { UseHuffman = false };
        Encode(encoder, [new Field("a", "b")]);
        var block = Encode(encoder, [new Field("x", new string('v', 40))]);
        Assert.Equal(0x00, block[0]);
        Assert.Equal([("a", "b")], TableOf(encoder.DynamicTable).Entries);
    }

    [Fact]
    public void Never_indexed_is_kept_even_for_a_static_exact_match()
    {
        var encoder = new HpackEncoder();
        var block = Encode(encoder, [new Field(":method", "GET", NeverIndexed: true)]);
        Assert.Equal("12", ToHex(block[..1])); // never indexed, name index 2
    }

    [Fact]
    public void Table_size_changes_are_signalled_at_the_next_block_start()
    {
        var encoder = new HpackEncoder();
        var decoder = new HpackDecoder();
        encoder.SetPeerHeaderTableSize(0);
        encoder.SetPeerHeaderTableSize(1024);
        var block = Encode(encoder, [new Field("a", "b")]);
        Assert.Equal("20" + "3fe107", ToHex(block[..4])); // 0 (the smallest), then 1024 (the final)
        Assert.Equal([new Field("a", "b")], Decode(decoder, block));
        Assert.Equal(1024, decoder.DynamicTable.MaxSize);

        // once signalled, nothing more; a size above the cap is capped
        Assert.Equal("bebe", ToHex(Encode(encoder, [new Field("a", "b"), new Field("a", "b")])));
        encoder.SetPeerHeaderTableSize(uint.MaxValue);
        Assert.Equal("3fe11f", ToHex(Encode(encoder, [])));
        Assert.Equal(HpackEncoder.DefaultMaxHeaderTableSize, encoder.DynamicTable.MaxSize);
    }

    [Fact]
    public void A_field_before_BeginBlock_with_a_change_pending_is_refused()
    {
        var encoder = new HpackEncoder();
        encoder.SetPeerHeaderTableSize(100);
        Assert.Throws<InvalidOperationException>(() => encoder.TryEncode("a"u8, "b"u8, new byte[64], out _));
    }

    [Fact]
    public void A_destination_too_small_writes_nothing_and_changes_nothing()
    {
        var encoder = new HpackEncoder { UseHuffman = false };
        Assert.False(encoder.TryEncode("custom-key"u8, "custom-value"u8, new byte[24], out int written));
        Assert.Equal(0, written);
        Assert.Equal(0, encoder.DynamicTable.Count);
        Assert.True(encoder.TryEncode("custom-key"u8, "custom-value"u8, new byte[25], out written));
        Assert.Equal(25, written);
        Assert.False(encoder.TryEncode("custom-key"u8, "custom-value"u8, Span<byte>.Empty, out _));
    }

    [Fact]
    public void Random_header_lists_round_trip_through_one_connection()
    {
        var random = new Random(7541);
        var encoder = new HpackEncoder(4096, 4096);
        var decoder = new HpackDecoder(4096, 1 << 20);
        string[] names = [":method", ":path", "accept", "cookie", "x-trace", "authorization", "user-agent", "x-" + new string('n', 40)];
        for (int block = 0; block < 300; block++)
        {
            var fields = new List<Field>();
            for (int i = random.Next(0, 12); i > 0; i--)
            {
                var value = new byte[random.Next(0, random.Next(2) == 0 ? 8 : 300)];
                random.NextBytes(value);
                fields.Add(new Field(names[random.Next(names.Length)], System.Text.Encoding.Latin1.GetString(value), random.Next(10) == 0));
            }

            if (random.Next(20) == 0)
            {
                encoder.SetPeerHeaderTableSize((uint)random.Next(0, 5000));
            }

            encoder.UseHuffman = random.Next(3) != 0;
            var decoded = Decode(decoder, Encode(encoder, fields));
            Assert.Equal(fields.Select(f => (f.Name, f.Value)), decoded.Select(f => (f.Name, f.Value)));
            Assert.All(decoded.Zip(fields), pair => Assert.True(!pair.Second.NeverIndexed || pair.First.NeverIndexed));
            Assert.Equal(TableOf(encoder.DynamicTable).Entries, TableOf(decoder.DynamicTable).Entries);
        }
    }
}
