namespace LLHttp.Syntax;

/// <summary>
/// Walks a Connection field value (RFC 9110 §7.6.1: a list of connection options). <c>close</c> and <c>keep-alive</c>
/// are recorded as flags; every other option names a field that is hop-by-hop for this message.
/// </summary>
public ref struct ConnectionOptions
{
    private ListTokenizer _options;

    public ConnectionOptions(ReadOnlySpan<byte> value) => _options = new ListTokenizer(value);

    /// <summary>A <c>close</c> option was passed (RFC 9112 §9.6: the connection ends after this exchange).</summary>
    public bool Close { get; private set; }

    /// <summary>A <c>keep-alive</c> option was passed (what an HTTP/1.0 peer sends to keep the connection, RFC 9112 §9.3).</summary>
    public bool KeepAlive { get; private set; }

    /// <summary>The next option that is neither <c>close</c> nor <c>keep-alive</c>: a field name.</summary>
    public bool TryNextFieldName(out ReadOnlySpan<byte> name)
    {
        while (_options.TryNext(out name))
        {
            if (Ascii.EqualsIgnoreCase(name, "close"u8))
            {
                Close = true;
            }
            else if (Ascii.EqualsIgnoreCase(name, "keep-alive"u8))
            {
                KeepAlive = true;
            }
            else
            {
                return true;
            }
        }

        return false;
    }
}
