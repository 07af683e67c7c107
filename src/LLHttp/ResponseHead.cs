
namespace LLHttp;

/// <summary>
/// A parsed response head. Scalars are copied; <see cref="ReasonPhrase"/> and <see cref="Headers"/> are spans into the
/// connection's receive buffer, valid until the next call to ReadResponseHeadAsync or ReadBodyAsync on that connection.
/// </summary>
public readonly struct ResponseHead
{
    private readonly ResponseHeadParser _parser;

    internal ResponseHead(ResponseHeadParser parser, ResponseBodyFraming framing, long contentLength, bool keepAlive)
    {
        _parser = parser;
        StatusCode = parser.StatusCode;
        MinorVersion = parser.MinorVersion;
        BodyFraming = framing;
        ContentLength = contentLength;
        KeepAlive = keepAlive;
    }

    public int StatusCode { get; }

    /// <summary>0 for HTTP/1.0, 1 for HTTP/1.1.</summary>
    public int MinorVersion { get; }

    /// <summary>A 1xx interim response (100, 103...): relay it if wanted, then read the head again.</summary>
    public bool IsInformational => StatusCode < 200;

    public ResponseBodyFraming BodyFraming { get; }

    /// <summary>The body length for <see cref="ResponseBodyFraming.ContentLength"/>, otherwise -1.</summary>
    public long ContentLength { get; }

    /// <summary>
    /// The connection may carry another request once this body is read: HTTP/1.1 without <c>Connection: close</c>, or
    /// HTTP/1.0 with <c>keep-alive</c>, and a framing that leaves the connection in sync (RFC 9112 §9.3, §6.3).
    /// </summary>
    public bool KeepAlive { get; }

    /// <summary>The origin sent <c>close</c> in Connection (RFC 9110 §7.6.1); a proxy may want to close its client too.</summary>
    public bool ConnectionClose => _parser.ConnectionClose;

    public ReadOnlySpan<byte> ReasonPhrase => _parser.Reason;

    public ResponseHeaders Headers => new(_parser);
}

/// <summary>Response header fields in arrival order, as spans into the receive buffer (see <see cref="ResponseHead"/>).</summary>
public readonly struct ResponseHeaders
{
    private readonly ResponseHeadParser _parser;

    internal ResponseHeaders(ResponseHeadParser parser) => _parser = parser;

    public int Count => _parser.Count;

    public ReadOnlySpan<byte> Name(int index) => _parser.Name(index);

    /// <summary>The field value with surrounding whitespace removed.</summary>
    public ReadOnlySpan<byte> Value(int index) => _parser.Value(index);

    /// <summary>First field named <paramref name="name"/> (ASCII case-insensitive).</summary>
    public bool TryGetValue(ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value)
    {
        for (int i = 0; i < _parser.Count; i++)
        {
            if (Ascii.EqualsIgnoreCase(_parser.Name(i), name))
            {
                value = _parser.Value(i);
                return true;
            }
        }

        value = default;
        return false;
    }

    /// <summary>
    /// True when a Connection field lists <paramref name="name"/>: such a field is hop-by-hop and a proxy must not
    /// forward it (RFC 9110 §7.6.1).
    /// </summary>
    public bool IsNominatedByConnection(ReadOnlySpan<byte> name)
    {
        for (int i = 0; i < _parser.Count; i++)
        {
            if (!_parser.IsConnectionField(i))
            {
                continue;
            }

            var tokens = new ListTokenizer(_parser.Value(i));
            while (tokens.TryNext(out var token))
            {
                if (Ascii.EqualsIgnoreCase(token, name))
                {
                    return true;
                }
            }
        }

        return false;
    }

    public Enumerator GetEnumerator() => new(_parser);

    public ref struct Enumerator
    {
        private readonly ResponseHeadParser _parser;
        private int _index;

        internal Enumerator(ResponseHeadParser parser)
        {
            _parser = parser;
            _index = -1;
        }

        public bool MoveNext() => ++_index < _parser.Count;

        public readonly HeaderField Current => new(_parser.Name(_index), _parser.Value(_index));
    }
}

public readonly ref struct HeaderField
{
    public HeaderField(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        Name = name;
        Value = value;
    }

    public ReadOnlySpan<byte> Name { get; }

    public ReadOnlySpan<byte> Value { get; }
}
