namespace LLHttp.Http1;

internal static class HttpChars
{
    public const byte CR = (byte)'\r';
    public const byte LF = (byte)'\n';
    public const byte SP = (byte)' ';
    public const byte HTAB = (byte)'\t';

    // RFC 9110 §5.6.2: token = 1*tchar.
    public static readonly SearchValues<byte> Tchar =
        SearchValues.Create("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"u8);

    // RFC 9110 §5.5: field-value is VCHAR / obs-text with SP and HTAB inside; CR, LF and NUL MUST be rejected, and a proxy
    // has no reason to relay the other controls either.
    public static readonly SearchValues<byte> InvalidFieldValue = SearchValues.Create(Controls(includeSpace: false, includeTab: false));

    // RFC 9112 §3.2 / §3.2.2: request-target and Host contain no whitespace or controls (a CR or LF here is request splitting).
    public static readonly SearchValues<byte> InvalidTarget = SearchValues.Create(Controls(includeSpace: true, includeTab: true));

    private static byte[] Controls(bool includeSpace, bool includeTab)
    {
        var list = new List<byte>();
        for (int b = 0; b < 0x20; b++)
        {
            if (b != HTAB || includeTab)
            {
                list.Add((byte)b);
            }
        }

        if (includeSpace)
        {
            list.Add(SP);
        }

        list.Add(0x7F);
        return [.. list];
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool IsToken(ReadOnlySpan<byte> s) => s.Length != 0 && !s.ContainsAnyExcept(Tchar);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool IsOws(byte b) => b is SP or HTAB;

    public static ReadOnlySpan<byte> TrimOws(ReadOnlySpan<byte> s)
    {
        int start = 0;
        while (start < s.Length && IsOws(s[start]))
        {
            start++;
        }

        int end = s.Length;
        while (end > start && IsOws(s[end - 1]))
        {
            end--;
        }

        return s[start..end];
    }
}

/// <summary>
/// Walks an RFC 9110 §5.6.1 list (<c>#element</c>): comma separated, OWS trimmed, empty elements skipped as the RFC requires.
/// </summary>
internal ref struct ListTokenizer
{
    private ReadOnlySpan<byte> _rest;
    private bool _done;

    public ListTokenizer(ReadOnlySpan<byte> value)
    {
        _rest = value;
        _done = false;
    }

    public bool TryNext(out ReadOnlySpan<byte> element)
    {
        while (!_done)
        {
            int comma = _rest.IndexOf((byte)',');
            ReadOnlySpan<byte> raw;
            if (comma < 0)
            {
                raw = _rest;
                _done = true;
            }
            else
            {
                raw = _rest[..comma];
                _rest = _rest[(comma + 1)..];
            }

            element = HttpChars.TrimOws(raw);
            if (!element.IsEmpty)
            {
                return true;
            }
        }

        element = default;
        return false;
    }
}
