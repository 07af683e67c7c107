namespace LLHttp;

/// <summary>
/// Incremental parser of one response head (status line + fields) held contiguously at the start of a buffer.
/// Each complete line is parsed exactly once, so a head arriving byte by byte costs O(n), not O(n²).
/// Results are offsets into the buffer: nothing is copied and nothing is allocated.
/// </summary>
internal sealed class ResponseHeadParser
{
    /// <summary>
    /// The field table's first size: 16 fields, more than most responses carry (nginx's and Kestrel's plain answers
    /// carry 4-6). It doubles up to maxHeaderCount when a head has more, and keeps that size, so a connection pays for
    /// the largest head it has seen, not for the limit: an idle pooled connection would otherwise hold 2 KB for the
    /// default 100.
    /// </summary>
    internal const int InitialFieldCapacity = 16;

    private readonly int _maxHeadLength;
    private readonly int _maxHeaderCount;
    private FieldRange[] _fields;

    private byte[] _buffer = [];
    private int _lineStart;
    private int _scanFrom;
    private bool _statusLineDone;
    private int _count;
    private int _reasonStart;
    private int _reasonLength;
    private bool _chunkedSeen;

    public ResponseHeadParser(int maxHeadLength, int maxHeaderCount)
    {
        _maxHeadLength = maxHeadLength;
        _maxHeaderCount = maxHeaderCount;
        _fields = new FieldRange[Math.Min(InitialFieldCapacity, maxHeaderCount)];
    }

    public int StatusCode { get; private set; }
    public byte MinorVersion { get; private set; }
    public int HeadLength { get; private set; }
    public int Count => _count;
    public long ContentLength { get; private set; }
    public bool HasContentLength { get; private set; }
    public bool HasTransferEncoding { get; private set; }
    public bool ConnectionClose { get; private set; }
    public bool ConnectionKeepAlive { get; private set; }

    public ReadOnlySpan<byte> Reason => _buffer.AsSpan(_reasonStart, _reasonLength);

    public ReadOnlySpan<byte> Name(int index)
    {
        ref readonly FieldRange f = ref _fields[(uint)index < (uint)_count ? index : ThrowIndex()];
        return _buffer.AsSpan(f.NameStart, f.NameLength);
    }

    public ReadOnlySpan<byte> Value(int index)
    {
        ref readonly FieldRange f = ref _fields[(uint)index < (uint)_count ? index : ThrowIndex()];
        return _buffer.AsSpan(f.ValueStart, f.ValueLength);
    }

    public bool IsConnectionField(int index) => _fields[index].IsConnection;

    public void Reset()
    {
        _lineStart = 0;
        _scanFrom = 0;
        _statusLineDone = false;
        _count = 0;
        _reasonStart = 0;
        _reasonLength = 0;
        _chunkedSeen = false;
        StatusCode = 0;
        MinorVersion = 0;
        HeadLength = 0;
        ContentLength = -1;
        HasContentLength = false;
        HasTransferEncoding = false;
        ConnectionClose = false;
        ConnectionKeepAlive = false;
    }

    /// <summary>
    /// Parses what <paramref name="buffer"/>[0..<paramref name="length"/>) adds since the last call.
    /// Returns true once the empty line ending the head has been consumed (<see cref="HeadLength"/> is then set).
    /// </summary>
    public bool TryParse(byte[] buffer, int length)
    {
        _buffer = buffer;
        while (true)
        {
            int lf = buffer.AsSpan(_scanFrom, length - _scanFrom).IndexOf(HttpChars.LF);
            if (lf < 0)
            {
                _scanFrom = length;
                if (length >= _maxHeadLength)
                {
                    ThrowHelper.Throw(LLHttpError.ResponseHeadTooLarge, "Response head exceeds MaxResponseHeadersLength");
                }

                return false;
            }

            lf += _scanFrom;
            int next = lf + 1;
            if (next > _maxHeadLength)
            {
                ThrowHelper.Throw(LLHttpError.ResponseHeadTooLarge, "Response head exceeds MaxResponseHeadersLength");
            }

            // RFC 9112 §2.2 lets a recipient accept a bare LF as a line terminator; a proxy must not, because the next hop
            // may disagree about where the line ends (response splitting).
            if (lf == _lineStart || buffer[lf - 1] != HttpChars.CR)
            {
                ThrowHelper.Throw(
                    _statusLineDone ? LLHttpError.MalformedHeader : LLHttpError.MalformedStatusLine,
                    "Bare LF in response head",
                    buffer.AsSpan(_lineStart, next - _lineStart));
            }

            var line = buffer.AsSpan(_lineStart, lf - 1 - _lineStart);
            if (!_statusLineDone)
            {
                ParseStatusLine(line);
                _statusLineDone = true;
            }
            else if (line.IsEmpty)
            {
                HeadLength = next;
                _scanFrom = _lineStart = next;
                return true;
            }
            else
            {
                ParseField(line, _lineStart);
            }

            _scanFrom = _lineStart = next;
        }
    }

    private void ParseStatusLine(ReadOnlySpan<byte> line)
    {
        // RFC 9112 §4: status-line = HTTP-version SP status-code SP [ reason-phrase ].
        // "HTTP/1.1 200" without the second SP is tolerated: common in the wild and unambiguous.
        if (line.Length < 12 || line[8] != HttpChars.SP || (line.Length > 12 && line[12] != HttpChars.SP))
        {
            ThrowHelper.Throw(LLHttpError.MalformedStatusLine, "Malformed status line", line);
        }

        if (!line.StartsWith("HTTP/1."u8) || (line[7] != (byte)'0' && line[7] != (byte)'1'))
        {
            ThrowHelper.Throw(LLHttpError.MalformedStatusLine, "Unsupported HTTP version", line);
        }

        uint d0 = (uint)(line[9] - '0'), d1 = (uint)(line[10] - '0'), d2 = (uint)(line[11] - '0');
        int status = (int)((d0 * 100) + (d1 * 10) + d2);

        // RFC 9110 §15: values outside 100..599 are invalid.
        if (d0 > 9 || d1 > 9 || d2 > 9 || status < 100 || status > 599)
        {
            ThrowHelper.Throw(LLHttpError.MalformedStatusLine, "Invalid status code", line);
        }

        if (line.Length > 13)
        {
            // RFC 9112 §4: reason-phrase = 1*( HTAB / SP / VCHAR / obs-text ).
            var reason = line[13..];
            if (!HttpChars.IsFieldValue(reason))
            {
                ThrowHelper.Throw(LLHttpError.MalformedStatusLine, "Invalid character in reason phrase", line);
            }

            _reasonStart = _lineStart + 13;
            _reasonLength = reason.Length;
        }

        StatusCode = status;
        MinorVersion = (byte)(line[7] - '0');
    }

    private void ParseField(ReadOnlySpan<byte> line, int lineOffset)
    {
        // RFC 9112 §5.2: a proxy MUST either reject obs-fold or unfold it; rejecting is simpler and safer.
        if (HttpChars.IsOws(line[0]))
        {
            ThrowHelper.Throw(LLHttpError.MalformedHeader, "Obsolete line folding in response header", line);
        }

        int colon = line.IndexOf((byte)':');

        // RFC 9112 §5.1: no whitespace is allowed between the field name and the colon; a server MUST reject it and a
        // proxy MUST remove it. Rejecting covers both, and the tchar check catches it along with every other bad byte.
        if (colon <= 0 || !HttpChars.IsToken(line[..colon]))
        {
            ThrowHelper.Throw(LLHttpError.MalformedHeader, "Malformed response header name", line);
        }

        int valueStart = colon + 1;
        while (valueStart < line.Length && HttpChars.IsOws(line[valueStart]))
        {
            valueStart++;
        }

        int valueEnd = line.Length;
        while (valueEnd > valueStart && HttpChars.IsOws(line[valueEnd - 1]))
        {
            valueEnd--;
        }

        var value = line[valueStart..valueEnd];
        if (!HttpChars.IsFieldValue(value))
        {
            ThrowHelper.Throw(LLHttpError.MalformedHeader, "Invalid character in response header value", line);
        }

        if (_count == _fields.Length)
        {
            if (_count == _maxHeaderCount)
            {
                ThrowHelper.Throw(LLHttpError.TooManyHeaders, "Response has more than MaxResponseHeaderCount headers");
            }
            Array.Resize(ref _fields, Math.Min(_count * 2, _maxHeaderCount));
        }

        var name = line[..colon];
        ref FieldRange f = ref _fields[_count++];
        f.NameStart = lineOffset;
        f.NameLength = colon;
        f.ValueStart = lineOffset + valueStart;
        f.ValueLength = value.Length;
        f.IsConnection = false;

        switch (name.Length)
        {
            case 10 when Ascii.EqualsIgnoreCase(name, "Connection"u8):
                f.IsConnection = true;
                ParseConnection(value);
                break;
            case 14 when Ascii.EqualsIgnoreCase(name, "Content-Length"u8):
                ParseContentLength(value);
                break;
            case 17 when Ascii.EqualsIgnoreCase(name, "Transfer-Encoding"u8):
                ParseTransferEncoding(value);
                break;
        }
    }

    private void ParseConnection(ReadOnlySpan<byte> value)
    {
        // RFC 9110 §7.6.1: Connection is a token list; "close" anywhere in it counts. The names it lists are looked up
        // later (ResponseHead.IsNominatedByConnection).
        var options = new ConnectionOptions(value);
        while (options.TryNextFieldName(out _))
        {
        }

        ConnectionClose |= options.Close;
        ConnectionKeepAlive |= options.KeepAlive;
    }

    private void ParseContentLength(ReadOnlySpan<byte> value)
    {
        // A client reading a response takes RFC 9110 §8.6's leniency: identical repeated values are that one value;
        // anything else is an unrecoverable framing error (RFC 9112 §6.3 rule 5).
        long length = ContentLength;
        switch (ContentLengthSyntax.Accumulate(value, ContentLengthRepeats.IdenticalAccepted, ref length))
        {
            case ContentLengthStatus.Invalid:
                ThrowHelper.Throw(LLHttpError.InvalidContentLength, "Invalid Content-Length", value);
                break;
            case ContentLengthStatus.Conflicting:
                ThrowHelper.Throw(LLHttpError.InvalidContentLength, "Conflicting Content-Length values", value);
                break;
        }

        HasContentLength = true;
        ContentLength = length;
    }

    private void ParseTransferEncoding(ReadOnlySpan<byte> value)
    {
        // RFC 9112 §6.1: chunked MUST be the final coding and MUST NOT be applied twice. The list spans every
        // Transfer-Encoding field in order, so a coding after chunked (in this field or a later one) is an error.
        HasTransferEncoding = true;
        var codings = new ListTokenizer(value);
        while (codings.TryNext(out var coding))
        {
            if (_chunkedSeen)
            {
                ThrowHelper.Throw(LLHttpError.InvalidTransferEncoding, "chunked is not the final transfer coding", value);
            }

            _chunkedSeen = Ascii.EqualsIgnoreCase(coding, "chunked"u8);
        }
    }

    /// <summary>Final coding is chunked (valid only after the head is complete).</summary>
    public bool IsChunked => _chunkedSeen;

    [DoesNotReturn]
    private static int ThrowIndex() => throw new ArgumentOutOfRangeException("index");

    private struct FieldRange
    {
        public int NameStart;
        public int NameLength;
        public int ValueStart;
        public int ValueLength;
        public bool IsConnection;
    }
}
