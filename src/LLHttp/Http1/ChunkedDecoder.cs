namespace LLHttp.Http1;

/// <summary>
/// RFC 9112 §7.1 chunked decoding as an explicit state machine over whatever bytes have arrived, so a body split at any
/// byte boundary decodes identically. Trailer fields are validated for line syntax and dropped (RFC 9110 §6.5.1 lets a
/// recipient discard them; a proxy that re-frames the body has nowhere to put them).
/// </summary>
internal struct ChunkedDecoder
{
    // 15 hex digits always fit in a long; a 16th could overflow it.
    private const long MaxSizeBeforeShift = long.MaxValue >> 4;

    private State _state;
    private long _remaining;
    private int _sizeDigits;
    private bool _inExtension;
    private int _extensionBytes;
    private int _trailerBytes;
    private int _maxExtensionBytes;
    private int _maxTrailerBytes;

    public void Reset(int maxExtensionBytes, int maxTrailerBytes)
    {
        this = default;
        _maxExtensionBytes = maxExtensionBytes;
        _maxTrailerBytes = maxTrailerBytes;
    }

    public readonly bool IsDone => _state == State.Done;

    /// <summary>Bytes of chunk data the next receive may place straight into the caller's buffer (0 outside chunk data).</summary>
    public readonly long DataRemaining => _state == State.Data ? _remaining : 0;

    /// <summary>Accounts for chunk data the caller received directly, bypassing <see cref="Decode"/>.</summary>
    public void ConsumeData(int count)
    {
        Debug.Assert(_state == State.Data && count <= _remaining);
        _remaining -= count;
        if (_remaining == 0)
        {
            _state = State.DataCr;
        }
    }

    /// <summary>
    /// Consumes framing from <paramref name="input"/> and copies chunk data to <paramref name="output"/> until the input is
    /// exhausted, the output is full, or the body ends. Returns true when the body (trailers included) is complete.
    /// </summary>
    public bool Decode(ReadOnlySpan<byte> input, Span<byte> output, out int consumed, out int written)
    {
        int i = 0;
        int w = 0;
        while (i < input.Length)
        {
            byte b = input[i];
            switch (_state)
            {
                case State.Size:
                    int digit = HexValue(b);
                    if (digit >= 0)
                    {
                        if (_remaining > MaxSizeBeforeShift)
                        {
                            Fail("Chunk size overflows");
                        }

                        _remaining = (_remaining << 4) | (uint)digit;
                        _sizeDigits++;
                        i++;
                        break;
                    }

                    // RFC 9112 §7.1: chunk-size = 1*HEXDIG.
                    if (_sizeDigits == 0)
                    {
                        Fail("Chunk size has no hex digits");
                    }

                    _state = State.Extension;
                    goto case State.Extension;

                case State.Extension:
                    // RFC 9112 §7.1.1: chunk-ext = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] ). Extensions are skipped
                    // but bounded and free of controls; before the first ';' only BWS may follow the size.
                    if (b == HttpChars.CR)
                    {
                        _state = State.SizeLf;
                        i++;
                        break;
                    }

                    if (b == (byte)';')
                    {
                        _inExtension = true;
                    }
                    else if ((!_inExtension && !HttpChars.IsOws(b)) || (b != HttpChars.HTAB && (b < 0x20 || b == 0x7F)))
                    {
                        Fail("Invalid byte in chunk size line");
                    }

                    if (++_extensionBytes > _maxExtensionBytes)
                    {
                        Fail("Chunk extensions exceed MaxChunkExtensionsLength");
                    }

                    i++;
                    break;

                case State.SizeLf:
                    Expect(b, HttpChars.LF, "Chunk size line not terminated by CRLF");
                    i++;
                    _sizeDigits = 0;
                    _inExtension = false;
                    _state = _remaining == 0 ? State.TrailerStart : State.Data;
                    break;

                case State.Data:
                    if (w == output.Length)
                    {
                        goto Exit;
                    }

                    int n = (int)Math.Min(_remaining, Math.Min(input.Length - i, output.Length - w));
                    input.Slice(i, n).CopyTo(output[w..]);
                    i += n;
                    w += n;
                    _remaining -= n;
                    if (_remaining == 0)
                    {
                        _state = State.DataCr;
                    }

                    break;

                case State.DataCr:
                    Expect(b, HttpChars.CR, "Chunk data not followed by CRLF");
                    i++;
                    _state = State.DataLf;
                    break;

                case State.DataLf:
                    Expect(b, HttpChars.LF, "Chunk data not followed by CRLF");
                    i++;
                    _state = State.Size;
                    break;

                case State.TrailerStart:
                    i++;
                    if (b == HttpChars.CR)
                    {
                        _state = State.FinalLf;
                        break;
                    }

                    // RFC 9112 §5.2 (via §7.1.2): obs-fold is rejected in trailers as in the head.
                    if (HttpChars.IsOws(b))
                    {
                        Fail("Obsolete line folding in trailer");
                    }

                    _state = State.Trailer;
                    goto CountTrailerByte;

                case State.Trailer:
                    i++;
                    if (b == HttpChars.CR)
                    {
                        _state = State.TrailerLf;
                        break;
                    }

                    if (b != HttpChars.HTAB && (b < 0x20 || b == 0x7F))
                    {
                        Fail("Invalid byte in trailer");
                    }

                CountTrailerByte:
                    if (++_trailerBytes > _maxTrailerBytes)
                    {
                        Fail("Trailers exceed MaxResponseHeadersLength");
                    }

                    break;

                case State.TrailerLf:
                    Expect(b, HttpChars.LF, "Trailer line not terminated by CRLF");
                    i++;
                    _state = State.TrailerStart;
                    break;

                case State.FinalLf:
                    Expect(b, HttpChars.LF, "Chunked body not terminated by CRLF");
                    i++;
                    _state = State.Done;
                    goto Exit;

                default:
                    goto Exit;
            }
        }

    Exit:
        consumed = i;
        written = w;
        return _state == State.Done;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int HexValue(byte b)
    {
        uint d = (uint)(b - '0');
        if (d <= 9)
        {
            return (int)d;
        }

        uint l = (uint)((b | 0x20) - 'a');
        return l <= 5 ? (int)(l + 10) : -1;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Expect(byte actual, byte expected, string message)
    {
        if (actual != expected)
        {
            Fail(message);
        }
    }

    [DoesNotReturn]
    private static void Fail(string message) => ThrowHelper.Throw(LLHttpError.InvalidChunkedEncoding, message);

    private enum State : byte
    {
        Size,
        Extension,
        SizeLf,
        Data,
        DataCr,
        DataLf,
        TrailerStart,
        Trailer,
        TrailerLf,
        FinalLf,
        Done,
    }
}
