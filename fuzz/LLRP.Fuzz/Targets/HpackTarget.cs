using System.Buffers;
using LLHttp2;
using LLHttp2.Hpack;
using LLRP.Fuzz.Support;

namespace LLRP.Fuzz.Targets;

/// <summary>
/// LLHttp2's HPACK decoder over arbitrary bytes: the input cut into up to four field blocks decoded in order on one
/// connection's decoder (a COMPRESSION_ERROR ends the connection). Differential: the lists decoded are encoded again
/// by our encoder (Huffman on and off) and decoded by a fresh decoder, which must read back the same fields, keep
/// every never-indexed field never indexed, and end with the same dynamic table as the encoder's.
/// </summary>
internal static class HpackTarget
{
    private const int MaxHeaderListSize = 16 * 1024;

    public static void Run(ReadOnlySpan<byte> input)
    {
        var decoder = new HpackDecoder(HpackDecoder.DefaultHeaderTableSize, MaxHeaderListSize);
        var lists = new List<List<Field>>();
        foreach (var block in Pieces.Split(input))
        {
            var collector = new Collector();
            try
            {
                decoder.Decode(block, ref collector);
            }
            catch (Http2Exception e)
            {
                Finding.Check(e.Code == Http2ErrorCode.CompressionError && e.IsConnectionError, $"The decoder failed with {e.Code}, not a connection COMPRESSION_ERROR.");
                break;
            }

            Finding.Check(decoder.DynamicTable.Size <= decoder.DynamicTable.MaxSize, $"Dynamic table of {decoder.DynamicTable.Size} bytes above its maximum {decoder.DynamicTable.MaxSize}.");
            Finding.Check(collector.Fields.Sum(f => (long)f.Name.Length + f.Value.Length + 32) <= MaxHeaderListSize, "A decoded list passes the header list bound.");
            lists.Add(collector.Fields);
        }

        RoundTrip(lists, huffman: true);
        RoundTrip(lists, huffman: false);
    }

    private static void RoundTrip(List<List<Field>> lists, bool huffman)
    {
        var encoder = new HpackEncoder { UseHuffman = huffman };
        var decoder = new HpackDecoder(HpackDecoder.DefaultHeaderTableSize, MaxHeaderListSize);
        foreach (var fields in lists)
        {
            var writer = new ArrayBufferWriter<byte>();
            encoder.BeginBlock(writer);
            foreach (var field in fields)
            {
                encoder.Encode(field.Name, field.Value, writer, field.NeverIndexed ? HpackIndexing.NeverIndexed : HpackIndexing.Auto);
            }

            var collector = new Collector();
            decoder.Decode(writer.WrittenSpan, ref collector);
            Finding.Check(collector.Fields.Count == fields.Count, $"{fields.Count} fields encoded, {collector.Fields.Count} decoded back.");
            for (int i = 0; i < fields.Count; i++)
            {
                var (sent, back) = (fields[i], collector.Fields[i]);
                Finding.Check(sent.Name.AsSpan().SequenceEqual(back.Name) && sent.Value.AsSpan().SequenceEqual(back.Value), $"Field {i} decoded back differently.");
                Finding.Check(!sent.NeverIndexed || back.NeverIndexed, $"Field {i} lost its never-indexed representation.");
            }

            Finding.Check(SameTable(encoder.DynamicTable, decoder.DynamicTable), "Encoder and decoder dynamic tables differ.");
        }
    }

    private static bool SameTable(HpackDynamicTable a, HpackDynamicTable b)
    {
        if (a.Count != b.Count || a.Size != b.Size)
        {
            return false;
        }

        for (int i = 1; i <= a.Count; i++)
        {
            a.Get(i, out var nameA, out var valueA);
            b.Get(i, out var nameB, out var valueB);
            if (!nameA.SequenceEqual(nameB) || !valueA.SequenceEqual(valueB))
            {
                return false;
            }
        }

        return true;
    }

    private readonly record struct Field(byte[] Name, byte[] Value, bool NeverIndexed);

    private struct Collector : IHpackFieldHandler
    {
        public Collector() => Fields = [];

        public List<Field> Fields { get; }

        public readonly void OnField(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed)
            => Fields.Add(new Field(name.ToArray(), value.ToArray(), neverIndexed));
    }
}
