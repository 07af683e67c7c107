namespace LLHttp.Syntax;

/// <summary>
/// The RFC 9110 / 9112 character classes, for both sides of the wire: the proxy's request parsing and LLHttp's
/// response parsing and request writing.
/// </summary>
public static class HttpChars
{
    public const byte CR = (byte)'\r';
    public const byte LF = (byte)'\n';
    public const byte SP = (byte)' ';
    public const byte HTAB = (byte)'\t';

    // RFC 9110 §5.6.2: token = 1*tchar.
    private static readonly SearchValues<byte> s_tchar =
        SearchValues.Create("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"u8);

    // RFC 9110 §5.5: field-value is VCHAR / obs-text with SP and HTAB inside; CR, LF and NUL MUST be rejected, and a proxy
    // has no reason to relay the other controls either.
    private static readonly SearchValues<byte> s_invalidFieldValue = SearchValues.Create(Controls(includeSpace: false, includeTab: false));

    // RFC 9112 §3.2: a request-target and a Host never hold whitespace or controls (a CR or LF there is request
    // splitting). This is the floor LLHttp enforces on whatever its caller hands it.
    private static readonly SearchValues<byte> s_whitespaceOrControl = SearchValues.Create(Controls(includeSpace: true, includeTab: true));

    // RFC 3986 §3.3-3.4 as RFC 9112 §3.2 uses it: what a received request-target may hold (printable ASCII without SP;
    // '#' never travels in a request). Stricter than the floor above, for a recipient that forwards the target.
    private static readonly SearchValues<byte> s_targetChars = SearchValues.Create(
        "!$%&'()*+,-./0123456789:;=?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~\"<>"u8);

    // RFC 3986 §3.2.2-3.2.3 as used by RFC 9110 §7.2 Host: reg-name / IP-literal / IPv4, then ":" port.
    // No userinfo ('@'), path ('/'), query or fragment: those make a received Host invalid (RFC 9112 §3.2).
    private static readonly SearchValues<byte> s_hostChars =
        SearchValues.Create("-._~!$&'()*+,;=:[]%0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"u8);

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
    public static bool IsTokenChar(byte b) => s_tchar.Contains(b);

    /// <summary>RFC 9110 §5.6.2: <c>1*tchar</c> (method, field name, transfer coding, chunk-ext-name).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool IsToken(ReadOnlySpan<byte> s) => s.Length != 0 && !s.ContainsAnyExcept(s_tchar);

    /// <summary>RFC 9110 §5.5: VCHAR, obs-text, SP and HTAB only (no CR, LF, NUL or other control).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool IsFieldValue(ReadOnlySpan<byte> s) => !s.ContainsAny(s_invalidFieldValue);

    /// <summary>One byte of a field value or trailer value (RFC 9110 §5.5): not a control other than HTAB.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static bool IsFieldValueChar(byte b) => b == HTAB || (b >= 0x20 && b != 0x7F);

    /// <summary>Non-empty and free of whitespace and controls: the floor for a target or authority written to the wire.</summary>
    public static bool IsWithoutWhitespaceOrControl(ReadOnlySpan<byte> s) => s.Length != 0 && !s.ContainsAny(s_whitespaceOrControl);

    /// <summary>A received request-target: printable RFC 3986 characters only (RFC 9112 §3.2).</summary>
    public static bool IsRequestTarget(ReadOnlySpan<byte> s) => s.Length != 0 && !s.ContainsAnyExcept(s_targetChars);

    /// <summary>A received Host or absolute-form authority: uri-host [ ":" port ] characters only (RFC 9110 §7.2).</summary>
    public static bool IsHost(ReadOnlySpan<byte> s) => !s.ContainsAnyExcept(s_hostChars);

    /// <summary>OWS / BWS byte (RFC 9110 §5.6.3).</summary>
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

    /// <summary>The value of a HEXDIG (RFC 5234 §B.1, either case), or -1.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int HexValue(byte b)
    {
        uint d = (uint)(b - '0');
        if (d <= 9)
        {
            return (int)d;
        }

        uint l = (uint)((b | 0x20) - 'a');
        return l <= 5 ? (int)(l + 10) : -1;
    }
}
