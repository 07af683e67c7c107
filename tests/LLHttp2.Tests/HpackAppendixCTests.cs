using LLHttp2.Hpack;
using static LLHttp2.Tests.HpackKit;
using static LLHttp2.Tests.TestKit;

namespace LLHttp2.Tests;

/// <summary>
/// RFC 7541 Appendix C.2-C.6: each block decoded to its header list and encoded from it to the exact bytes, with the
/// dynamic table (newest first) and its size after each block, on the decoder's and the encoder's side.
/// </summary>
public class Rfc7541_AppendixC
{
    internal sealed record Step(string Hex, Field[] Fields, (string, string)[] Table, int Size);

    private static void Run(int tableSize, bool huffman, HpackIndexing indexing, params Step[] steps)
    {
        var decoder = new HpackDecoder(tableSize);
        var encoder = new HpackEncoder(tableSize) { UseHuffman = huffman };
        foreach (var step in steps)
        {
            var block = Hex(step.Hex);
            Assert.Equal(step.Fields, Decode(decoder, block));
            AssertTable(step, decoder.DynamicTable);

            Assert.Equal(ToHex(block), ToHex(Encode(encoder, step.Fields, indexing)));
            AssertTable(step, encoder.DynamicTable);
        }
    }

    private static void AssertTable(Step step, HpackDynamicTable table)
    {
        var (entries, size) = TableOf(table);
        Assert.Equal(step.Table, entries);
        Assert.Equal(step.Size, size);
    }

    [Fact]
    public void C_2_1_literal_with_indexing()
        => Run(4096, false, HpackIndexing.Auto, new Step(
            "400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572",
            [new("custom-key", "custom-header")],
            [("custom-key", "custom-header")], 55));

    [Fact]
    public void C_2_2_literal_without_indexing()
        => Run(4096, false, HpackIndexing.WithoutIndexing, new Step(
            "040c 2f73 616d 706c 652f 7061 7468",
            [new(":path", "/sample/path")],
            [], 0));

    [Fact]
    public void C_2_3_literal_never_indexed()
        => Run(4096, false, HpackIndexing.Auto, new Step(
            "1008 7061 7373 776f 7264 0673 6563 7265 74",
            [new("password", "secret", NeverIndexed: true)],
            [], 0));

    [Fact]
    public void C_2_4_indexed()
        => Run(4096, false, HpackIndexing.Auto, new Step("82", [new(":method", "GET")], [], 0));

    private static readonly Field[] Request1 = [new(":method", "GET"), new(":scheme", "http"), new(":path", "/"), new(":authority", "www.example.com")];
    private static readonly Field[] Request2 = [.. Request1, new("cache-control", "no-cache")];
    private static readonly Field[] Request3 = [new(":method", "GET"), new(":scheme", "https"), new(":path", "/index.html"), new(":authority", "www.example.com"), new("custom-key", "custom-value")];

    private static readonly (string, string)[] RequestTable1 = [(":authority", "www.example.com")];
    private static readonly (string, string)[] RequestTable2 = [("cache-control", "no-cache"), .. RequestTable1];
    private static readonly (string, string)[] RequestTable3 = [("custom-key", "custom-value"), .. RequestTable2];

    [Fact]
    public void C_3_requests_without_Huffman()
        => Run(4096, false, HpackIndexing.Auto,
            new Step("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d", Request1, RequestTable1, 57),
            new Step("8286 84be 5808 6e6f 2d63 6163 6865", Request2, RequestTable2, 110),
            new Step("8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65", Request3, RequestTable3, 164));

    [Fact]
    public void C_4_requests_with_Huffman()
        => Run(4096, true, HpackIndexing.Auto,
            new Step("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff", Request1, RequestTable1, 57),
            new Step("8286 84be 5886 a8eb 1064 9cbf", Request2, RequestTable2, 110),
            new Step("8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf", Request3, RequestTable3, 164));

    private const string Date1 = "Mon, 21 Oct 2013 20:13:21 GMT";
    private const string Date2 = "Mon, 21 Oct 2013 20:13:22 GMT";
    private const string Location = "https://www.example.com";
    private const string Cookie = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1";

    private static readonly Field[] Response1 = [new(":status", "302"), new("cache-control", "private"), new("date", Date1), new("location", Location)];
    private static readonly Field[] Response2 = [new(":status", "307"), new("cache-control", "private"), new("date", Date1), new("location", Location)];
    private static readonly Field[] Response3 = [new(":status", "200"), new("cache-control", "private"), new("date", Date2), new("location", Location), new("content-encoding", "gzip"), new("set-cookie", Cookie)];

    private static readonly (string, string)[] ResponseTable1 = [("location", Location), ("date", Date1), ("cache-control", "private"), (":status", "302")];
    private static readonly (string, string)[] ResponseTable2 = [(":status", "307"), ("location", Location), ("date", Date1), ("cache-control", "private")];
    private static readonly (string, string)[] ResponseTable3 = [("set-cookie", Cookie), ("content-encoding", "gzip"), ("date", Date2)];

    [Fact]
    public void C_5_responses_without_Huffman_with_eviction()
        => Run(256, false, HpackIndexing.Auto,
            new Step(
                """
                4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133
                2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d
                """,
                Response1, ResponseTable1, 222),
            new Step("4803 3330 37c1 c0bf", Response2, ResponseTable2, 222),
            new Step(
                """
                88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d
                54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049
                5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31
                """,
                Response3, ResponseTable3, 215));

    [Fact]
    public void C_6_responses_with_Huffman_with_eviction()
        => Run(256, true, HpackIndexing.Auto,
            new Step(
                """
                4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
                2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3
                """,
                Response1, ResponseTable1, 222),
            new Step("4883 640e ffc1 c0bf", Response2, ResponseTable2, 222),
            new Step(
                """
                88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab
                77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f
                9587 3160 65c0 03ed 4ee5 b106 3d50 07
                """,
                Response3, ResponseTable3, 215));
}
