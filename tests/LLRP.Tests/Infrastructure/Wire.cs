using System.Text;

namespace LLRP.Tests.Infrastructure;

/// <summary>Bytes on the wire: requests are written as strings whose chars are the octets (Latin-1).</summary>
internal static class Wire
{
    /// <summary>Every wait in the suite is bounded by this, so a hang fails the test instead of CI.</summary>
    public static readonly TimeSpan Cap = TimeSpan.FromSeconds(10);

    public const string CanaryPath = "/__canary";
    public const string PingPath = "/__ping";

    /// <summary>Each char is one octet; chars above U+00FF are written as their UTF-8 bytes.</summary>
    public static byte[] Bytes(string s)
    {
        var output = new List<byte>(s.Length);
        Span<byte> utf8 = stackalloc byte[4];
        foreach (var rune in s.EnumerateRunes())
        {
            if (rune.Value <= 0xFF)
            {
                output.Add((byte)rune.Value);
            }
            else
            {
                var n = rune.EncodeToUtf8(utf8);
                for (var i = 0; i < n; i++)
                {
                    output.Add(utf8[i]);
                }
            }
        }
        return [.. output];
    }

    public static string Text(ReadOnlySpan<byte> bytes) => Encoding.Latin1.GetString(bytes);

    /// <summary>Control bytes escaped, for assertion messages.</summary>
    public static string Show(ReadOnlySpan<byte> bytes, int max = 600)
    {
        var sb = new StringBuilder();
        foreach (var b in bytes)
        {
            if (sb.Length >= max)
            {
                sb.Append("…(").Append(bytes.Length).Append(" bytes)");
                break;
            }
            sb.Append(b switch
            {
                (byte)'\r' => "\\r",
                (byte)'\n' => "\\n",
                (byte)'\t' => "\\t",
                < 0x20 or >= 0x7F => $"\\x{b:x2}",
                _ => ((char)b).ToString(),
            });
        }
        return sb.ToString();
    }

    public static string Show(string s, int max = 600) => Show(Bytes(s), max);

    public static byte[] Repeat(char c, int count) => Bytes(new string(c, count));

    /// <summary>A deterministic body of the given size (so an off-by-one shift is visible).</summary>
    public static byte[] Body(int size)
    {
        var body = new byte[size];
        for (var i = 0; i < size; i++)
        {
            body[i] = (byte)('a' + (i % 26));
        }
        return body;
    }

    public static string BodyText(int size) => Text(Body(size));

    public static CancellationToken Deadline(TimeSpan? cap = null) => new CancellationTokenSource(cap ?? Cap).Token;
}
