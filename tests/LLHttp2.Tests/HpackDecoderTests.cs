using LLHttp2.Hpack;
using static LLHttp2.Tests.HpackKit;
using static LLHttp2.Tests.TestKit;

namespace LLHttp2.Tests;

/// <summary>RFC 7541 decoding rules beyond Appendix C: indexes, size updates (§4.2, §6.3), errors, and the header list bound.</summary>
public class Rfc7541_Decoder
{
    private static Http2Exception AssertCompressionError(HpackDecoder decoder, string hex)
    {
        var e = Assert.Throws<Http2Exception>(() => Decode(decoder, Hex(hex)));
        Assert.Equal(Http2ErrorCode.CompressionError, e.Code);
        Assert.True(e.IsConnectionError);
        return e;
    }

    [Theory]
    [InlineData("80")] // §6.1: index 0
    [InlineData("be")] // index 62 with an empty dynamic table
    [InlineData("ff80808080808000")] // integer too long
    [InlineData("ff")] // ends within an integer
    [InlineData("4005")] // literal name: string ends before its length
    [InlineData("4001")] // literal name with no value
    [InlineData("410561")] // value of 5 bytes, 1 present
    [InlineData("41")] // indexed name, no value
    [InlineData("4081ff0161")] // Huffman name that is EOS-padding only, 8 bits
    [InlineData("0f2f")] // literal without indexing, name index 62 beyond the table
    public void Malformed_blocks_are_COMPRESSION_ERROR(string hex) => AssertCompressionError(new HpackDecoder(), hex);

    [Fact]
    public void The_static_table_is_Appendix_A()
    {
        Assert.Equal(61, HpackStaticTable.Count);
        var fields = Decode(new HpackDecoder(), Enumerable.Range(1, 61).Select(i => (byte)(0x80 | i)).ToArray());
        Assert.Equal(new Field(":authority", ""), fields[0]);
        Assert.Equal(new Field(":status", "500"), fields[13]);
        Assert.Equal(new Field("accept-encoding", "gzip, deflate"), fields[15]);
        Assert.Equal(new Field("www-authenticate", ""), fields[60]);
    }

    [Fact]
    public void A_literal_may_name_the_entry_its_insertion_evicts()
    {
        // §4.4: the name is an entry that adding the new one evicts; the new entry still has that name.
        var decoder = new HpackDecoder(headerTableSizeLimit: 64);
        Decode(decoder, Hex("40 03 616263 01 78")); // abc: x, 36 bytes
        var fields = Decode(decoder, Hex("7e 0a 30313233343536373839")); // name index 62 (abc), 10-byte value: 45 bytes, evicts abc
        Assert.Equal([new Field("abc", "0123456789")], fields);
        var (entries, size) = TableOf(decoder.DynamicTable);
        Assert.Equal([("abc", "0123456789")], entries);
        Assert.Equal(45, size);
    }

    [Fact]
    public void An_entry_larger_than_the_table_empties_it()
    {
        var decoder = new HpackDecoder(headerTableSizeLimit: 40);
        Decode(decoder, Hex("40 01 61 01 62")); // a: b, 34
        var fields = Decode(decoder, Hex("40 01 61 0a 30313233343536373839"));
        Assert.Single(fields);
        Assert.Equal(0, decoder.DynamicTable.Count);
        Assert.Equal(0, decoder.DynamicTable.Size);
    }

    [Fact]
    public void Size_updates_only_at_the_start_of_a_block()
    {
        var decoder = new HpackDecoder();
        Assert.Empty(Decode(decoder, Hex("3fe11f 20 3fe11f"))); // to 4096, 0, 4096: several are allowed
        AssertCompressionError(decoder, "82 20");
    }

    [Fact]
    public void A_size_update_above_SETTINGS_HEADER_TABLE_SIZE_is_COMPRESSION_ERROR()
    {
        var decoder = new HpackDecoder(headerTableSizeLimit: 4096);
        AssertCompressionError(decoder, "3fe21f"); // 4097
        Assert.Empty(Decode(new HpackDecoder(4096), Hex("3fe11f")));
    }

    [Fact]
    public void A_size_update_evicts()
    {
        var decoder = new HpackDecoder();
        Decode(decoder, Hex("40 01 61 01 62 40 01 63 01 64")); // a: b, c: d (34 each)
        Assert.Equal(2, decoder.DynamicTable.Count);
        Decode(decoder, Hex("3f03")); // 34
        Assert.Equal([("c", "d")], TableOf(decoder.DynamicTable).Entries);
        Decode(decoder, Hex("20"));
        Assert.Equal(0, decoder.DynamicTable.Count);
    }

    [Fact]
    public void A_lowered_limit_requires_a_size_update_first_in_the_next_block()
    {
        var decoder = new HpackDecoder();
        decoder.SetHeaderTableSizeLimit(100);
        AssertCompressionError(decoder, "82");
        var raised = new HpackDecoder();
        raised.SetHeaderTableSizeLimit(100);
        AssertCompressionError(raised, "3f46"); // 101: above the new limit
        var good = new HpackDecoder();
        good.SetHeaderTableSizeLimit(100);
        Assert.Single(Decode(good, Hex("3f45 82"))); // 100, then a field
        Assert.Single(Decode(good, Hex("82"))); // only the first block owed it
    }

    [Fact]
    public void A_raised_limit_grows_the_table()
    {
        var decoder = new HpackDecoder(headerTableSizeLimit: 64);
        Decode(decoder, Hex("40 01 61 01 62"));
        decoder.SetHeaderTableSizeLimit(8192);
        Decode(decoder, Hex("3fe13f")); // 8192
        Assert.Equal(8192, decoder.DynamicTable.MaxSize);
        Assert.Equal([("a", "b")], TableOf(decoder.DynamicTable).Entries);
        var value = new string('v', 5000);
        Decode(decoder, [.. Hex("40 01 63 7f 89 26"), .. Bytes(value)]);
        Assert.Equal([("c", value), ("a", "b")], TableOf(decoder.DynamicTable).Entries);
    }

    [Fact]
    public void Never_indexed_is_reported_to_the_handler()
    {
        var fields = Decode(new HpackDecoder(), Hex("1f08 06 736563726574 0f09 01 61")); // 1f08: never indexed, name 23 (authorization); 0f09: without indexing, name 24 (cache-control)
        Assert.Equal([new Field("authorization", "secret", true), new Field("cache-control", "a")], fields);
    }

    [Fact]
    public void Entries_that_wrap_the_ring_read_back_whole()
    {
        // Many insertions of varying sizes go round the ring many times; every entry must read back exactly.
        var decoder = new HpackDecoder(headerTableSizeLimit: 300);
        var encoder = new HpackEncoder(300, 300);
        var random = new Random(9113);
        for (int i = 0; i < 500; i++)
        {
            var field = new Field("k" + random.Next(1000), new string((char)('a' + (i % 26)), random.Next(0, 120)));
            var block = Encode(encoder, [field]);
            Assert.Equal([field], Decode(decoder, block));
            var (entries, size) = TableOf(decoder.DynamicTable);
            Assert.Equal(TableOf(encoder.DynamicTable).Entries, entries);
            Assert.True(size <= 300);
            Assert.Equal(field.Name, entries[0].Name);
            Assert.Equal(field.Value, entries[0].Value);
        }
    }
}

/// <summary>The header list bound (RFC 9113 §6.5.2 SETTINGS_MAX_HEADER_LIST_SIZE), enforced while a block is decoded.</summary>
public class Rfc7541_HeaderListBound
{
    private sealed class CountingHandler : IHpackFieldHandler
    {
        public int Count { get; private set; }

        public void OnField(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed) => Count++;
    }

    [Fact]
    public void An_HPACK_bomb_fails_at_the_field_that_passes_the_bound()
    {
        // One 4,000-byte entry, then 10,000 one-byte references to it: 40 MB of header list from 10 KB of block.
        var decoder = new HpackDecoder(headerTableSizeLimit: 4096, maxHeaderListSize: 16384);
        var value = new string('x', 4000);
        var first = Encode(new HpackEncoder(), [new Field("a", value)]);
        var block = first.Concat(Enumerable.Repeat((byte)0xbe, 10_000)).ToArray();
        var handler = new CountingHandler();
        var e = Assert.Throws<Http2Exception>(() => decoder.Decode(block, ref handler));
        Assert.Equal(Http2ErrorCode.CompressionError, e.Code);

        // Each field counts 1 + 4,000 + 32 bytes; the fifth passes 16,384, so four were handed over.
        Assert.Equal(4, handler.Count);
    }

    [Fact]
    public void A_list_of_exactly_the_bound_is_accepted()
    {
        // 32 + name 1 + value 99 = 132 per field.
        var fields = Enumerable.Range(0, 4).Select(_ => new Field("a", new string('y', 99))).ToArray();
        var block = Encode(new HpackEncoder(), fields, HpackIndexing.WithoutIndexing);
        Assert.Equal(4, Decode(new HpackDecoder(maxHeaderListSize: 4 * 132), block).Count);
        Assert.Throws<Http2Exception>(() => Decode(new HpackDecoder(maxHeaderListSize: (4 * 132) - 1), block));
    }

    [Fact]
    public void A_long_raw_literal_is_refused_before_it_is_read()
    {
        // The literal's length alone passes the bound; the block even ends before the value's bytes do.
        var decoder = new HpackDecoder(maxHeaderListSize: 1000);
        var e = Assert.Throws<Http2Exception>(() => Decode(decoder, Hex("40 01 61 7f e9 07"))); // value of 1,104 bytes, none present
        Assert.Equal(Http2ErrorCode.CompressionError, e.Code);
    }

    [Fact]
    public void A_Huffman_literal_is_bounded_while_it_is_decoded()
    {
        // 3,000 '0's Huffman-code to 1,875 bytes; the bound of 1,000 stops the decoding at what is left for the value.
        var encoded = new byte[Huffman.GetEncodedLength(Bytes(new string('0', 3000)))];
        Huffman.Encode(Bytes(new string('0', 3000)), encoded);
        var length = new byte[HpackInteger.MaxLength];
        int n = HpackInteger.Encode(encoded.Length, 7, 0x80, length);
        var block = Hex("00 01 61").Concat(length[..n]).Concat(encoded).ToArray();
        Assert.Throws<Http2Exception>(() => Decode(new HpackDecoder(maxHeaderListSize: 1000), block));
        Assert.Single(Decode(new HpackDecoder(maxHeaderListSize: 3033), block));
    }

    [Fact]
    public void The_bound_is_per_block()
    {
        var decoder = new HpackDecoder(maxHeaderListSize: 200);
        var block = Encode(new HpackEncoder(), [new Field("a", new string('z', 150))], HpackIndexing.WithoutIndexing);
        for (int i = 0; i < 10; i++)
        {
            Assert.Single(Decode(decoder, block));
        }
    }
}
