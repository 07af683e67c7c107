namespace LLHttp2.Hpack;

/// <summary>RFC 7541 Appendix A: the 61 entries of the static table, index 1 to 61.</summary>
public static class HpackStaticTable
{
    public const int Count = 61;

    private static readonly (byte[] Name, byte[] Value)[] s_entries =
    [
        (":authority"u8.ToArray(), []),
        (":method"u8.ToArray(), "GET"u8.ToArray()),
        (":method"u8.ToArray(), "POST"u8.ToArray()),
        (":path"u8.ToArray(), "/"u8.ToArray()),
        (":path"u8.ToArray(), "/index.html"u8.ToArray()),
        (":scheme"u8.ToArray(), "http"u8.ToArray()),
        (":scheme"u8.ToArray(), "https"u8.ToArray()),
        (":status"u8.ToArray(), "200"u8.ToArray()),
        (":status"u8.ToArray(), "204"u8.ToArray()),
        (":status"u8.ToArray(), "206"u8.ToArray()),
        (":status"u8.ToArray(), "304"u8.ToArray()),
        (":status"u8.ToArray(), "400"u8.ToArray()),
        (":status"u8.ToArray(), "404"u8.ToArray()),
        (":status"u8.ToArray(), "500"u8.ToArray()),
        ("accept-charset"u8.ToArray(), []),
        ("accept-encoding"u8.ToArray(), "gzip, deflate"u8.ToArray()),
        ("accept-language"u8.ToArray(), []),
        ("accept-ranges"u8.ToArray(), []),
        ("accept"u8.ToArray(), []),
        ("access-control-allow-origin"u8.ToArray(), []),
        ("age"u8.ToArray(), []),
        ("allow"u8.ToArray(), []),
        ("authorization"u8.ToArray(), []),
        ("cache-control"u8.ToArray(), []),
        ("content-disposition"u8.ToArray(), []),
        ("content-encoding"u8.ToArray(), []),
        ("content-language"u8.ToArray(), []),
        ("content-length"u8.ToArray(), []),
        ("content-location"u8.ToArray(), []),
        ("content-range"u8.ToArray(), []),
        ("content-type"u8.ToArray(), []),
        ("cookie"u8.ToArray(), []),
        ("date"u8.ToArray(), []),
        ("etag"u8.ToArray(), []),
        ("expect"u8.ToArray(), []),
        ("expires"u8.ToArray(), []),
        ("from"u8.ToArray(), []),
        ("host"u8.ToArray(), []),
        ("if-match"u8.ToArray(), []),
        ("if-modified-since"u8.ToArray(), []),
        ("if-none-match"u8.ToArray(), []),
        ("if-range"u8.ToArray(), []),
        ("if-unmodified-since"u8.ToArray(), []),
        ("last-modified"u8.ToArray(), []),
        ("link"u8.ToArray(), []),
        ("location"u8.ToArray(), []),
        ("max-forwards"u8.ToArray(), []),
        ("proxy-authenticate"u8.ToArray(), []),
        ("proxy-authorization"u8.ToArray(), []),
        ("range"u8.ToArray(), []),
        ("referer"u8.ToArray(), []),
        ("refresh"u8.ToArray(), []),
        ("retry-after"u8.ToArray(), []),
        ("server"u8.ToArray(), []),
        ("set-cookie"u8.ToArray(), []),
        ("strict-transport-security"u8.ToArray(), []),
        ("transfer-encoding"u8.ToArray(), []),
        ("user-agent"u8.ToArray(), []),
        ("vary"u8.ToArray(), []),
        ("via"u8.ToArray(), []),
        ("www-authenticate"u8.ToArray(), []),
    ];

    // The indexes (0-based) of the entries by name length, so that a lookup compares only names of the right length.
    private static readonly int[][] s_byNameLength = BuildByNameLength();

    private static int[][] BuildByNameLength()
    {
        int longest = s_entries.Max(e => e.Name.Length);
        var byLength = new int[longest + 1][];
        for (int length = 0; length <= longest; length++)
        {
            byLength[length] = Enumerable.Range(0, s_entries.Length).Where(i => s_entries[i].Name.Length == length).ToArray();
        }

        return byLength;
    }

    /// <summary>The name of entry <paramref name="index"/> (1..61).</summary>
    public static ReadOnlySpan<byte> GetName(int index) => s_entries[index - 1].Name;

    /// <summary>The value of entry <paramref name="index"/> (1..61); empty for the entries that only name a field.</summary>
    public static ReadOnlySpan<byte> GetValue(int index) => s_entries[index - 1].Value;

    /// <summary>
    /// The index of the entry with this name and value (<paramref name="exact"/> true), or else of the first entry with
    /// this name (exact false); 0 when no entry has the name. Only the entries whose name has this length are compared.
    /// </summary>
    public static int Find(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, out bool exact)
    {
        exact = false;
        if (name.Length >= s_byNameLength.Length)
        {
            return 0;
        }

        int nameIndex = 0;
        foreach (int i in s_byNameLength[name.Length])
        {
            var entry = s_entries[i];
            if (!name.SequenceEqual(entry.Name))
            {
                continue;
            }

            if (value.SequenceEqual(entry.Value))
            {
                exact = true;
                return i + 1;
            }

            if (nameIndex == 0)
            {
                nameIndex = i + 1;
            }
        }

        return nameIndex;
    }
}
