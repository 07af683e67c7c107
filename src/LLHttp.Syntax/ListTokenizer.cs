namespace LLHttp.Syntax;

/// <summary>
/// Walks an RFC 9110 §5.6.1 list (<c>#element</c>: Connection, Transfer-Encoding, Content-Length...): comma separated,
/// OWS trimmed.
/// </summary>
public ref struct ListTokenizer
{
    private ReadOnlySpan<byte> _rest;
    private readonly bool _yieldEmpty;
    private bool _done;

    /// <param name="value">The field value.</param>
    /// <param name="yieldEmpty">
    /// RFC 9110 §5.6.1 tells a recipient to skip empty elements (false). A caller that refuses them where framing is at
    /// stake (a Transfer-Encoding of ", chunked" is read differently by different servers) passes true to see them.
    /// </param>
    public ListTokenizer(ReadOnlySpan<byte> value, bool yieldEmpty = false)
    {
        _rest = value;
        _yieldEmpty = yieldEmpty;
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
            if (!element.IsEmpty || _yieldEmpty)
            {
                return true;
            }
        }

        element = default;
        return false;
    }
}
