using System.Text;
using LLHttp2.Hpack;

namespace LLHttp2.Tests;

internal readonly record struct Field(string Name, string Value, bool NeverIndexed = false)
{
    public override string ToString() => $"{Name}: {Value}{(NeverIndexed ? " (never indexed)" : "")}";
}

/// <summary>Collects decoded fields (Latin-1, so every byte value survives).</summary>
internal struct FieldCollector : IHpackFieldHandler
{
    public FieldCollector() => Fields = [];

    public List<Field> Fields { get; }

    public readonly void OnField(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed)
        => Fields.Add(new Field(Encoding.Latin1.GetString(name), Encoding.Latin1.GetString(value), neverIndexed));
}

internal static class HpackKit
{
    public static byte[] Bytes(string s) => Encoding.Latin1.GetBytes(s);

    public static List<Field> Decode(HpackDecoder decoder, byte[] block)
    {
        var collector = new FieldCollector();
        decoder.Decode(block, ref collector);
        return collector.Fields;
    }

    /// <summary>The dynamic table, newest first, with its size.</summary>
    public static (List<(string Name, string Value)> Entries, int Size) TableOf(HpackDynamicTable table)
    {
        var entries = new List<(string, string)>();
        for (int i = 1; i <= table.Count; i++)
        {
            table.Get(i, out var name, out var value);
            entries.Add((Encoding.Latin1.GetString(name), Encoding.Latin1.GetString(value)));
        }

        return (entries, table.Size);
    }

    public static byte[] Encode(HpackEncoder encoder, IEnumerable<Field> fields, HpackIndexing indexing = HpackIndexing.Auto)
    {
        var writer = new ArrayBufferWriter<byte>();
        encoder.BeginBlock(writer);
        foreach (var field in fields)
        {
            encoder.Encode(Bytes(field.Name), Bytes(field.Value), writer, field.NeverIndexed ? HpackIndexing.NeverIndexed : indexing);
        }

        return writer.WrittenSpan.ToArray();
    }
}
