namespace LLHttp.Syntax;

/// <summary>What <see cref="ChunkedDecoder.Decode"/> reached; every value after <see cref="Done"/> is a syntax error.</summary>
public enum ChunkedStatus : byte
{
    /// <summary>The input is consumed or the output is full; the body continues.</summary>
    InProgress,
    /// <summary>The last chunk and the trailer section are complete.</summary>
    Done,
    /// <summary>RFC 9112 §7.1: chunk-size = 1*HEXDIG; no digit, or a byte that is neither a digit nor the start of the rest of the line.</summary>
    InvalidChunkSize,
    /// <summary>The chunk size does not fit a long.</summary>
    ChunkSizeOverflow,
    /// <summary>RFC 9112 §7.1.1: whitespace after the chunk size or an extension may only precede ';' (BWS of a chunk-ext), never CRLF.</summary>
    WhitespaceBeforeCrlf,
    /// <summary>RFC 9112 §7.1.1: chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] ) does not match.</summary>
    InvalidChunkExtension,
    /// <summary>The chunk-size line, or the extensions of the whole body, exceed their limit.</summary>
    ChunkExtensionsTooLong,
    /// <summary>A chunk-size line, chunk data or the last line not ended by exactly CRLF.</summary>
    MissingCrlf,
    /// <summary>RFC 9112 §7.1.2: a trailer line is not field-name ":" field-value (obs-fold and controls included).</summary>
    InvalidTrailer,
    /// <summary>The trailer section exceeds its limit.</summary>
    TrailersTooLong,
}

/// <summary>
/// RFC 9112 §7.1 chunked decoding as an explicit state machine over whatever bytes have arrived, so a body split at any
/// byte boundary decodes identically: the full chunk-ext grammar (§7.1.1) and trailer field syntax (§7.1.2) are checked,
/// extensions and trailers are dropped (RFC 9110 §6.5.1 lets a recipient discard trailers; a proxy that re-frames the
/// body has nowhere to put them). The decoder reports, it does not throw: each side maps a
/// <see cref="ChunkedStatus"/> error into its own error model.
/// </summary>
public struct ChunkedDecoder
{
    /// <summary>
    /// RFC 9112 §7.1.1 asks recipients to bound chunk extensions; no peer publishes a figure, so one chunk-size line
    /// (size, extensions) is capped at 4 KiB: far above any extension in use, far below any receive buffer.
    /// </summary>
    public const int MaxChunkLineLength = 4096;

    // 15 hex digits always fit in a long; a 16th could overflow it.
    private const long MaxSizeBeforeShift = long.MaxValue >> 4;

    private State _state;
    private long _remaining;
    private int _lineBytes;
    private int _extensionBytes;
    private int _trailerBytes;
    private int _maxExtensionBytes;
    private int _maxTrailerBytes;

    /// <summary>Starts a new body.</summary>
    /// <param name="maxExtensionBytes">Bytes after the chunk sizes (extensions with their ';' and BWS) over the whole body.</param>
    /// <param name="maxTrailerBytes">Bytes of the trailer section, line ends included.</param>
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
    /// exhausted, the output is full, the body ends or a syntax error is found (then nothing more may be decoded).
    /// </summary>
    public ChunkedStatus Decode(ReadOnlySpan<byte> input, Span<byte> output, out int consumed, out int written)
    {
        int i = 0;
        int w = 0;
        var status = ChunkedStatus.InProgress;
        while (i < input.Length)
        {
            byte b = input[i];
            if (_state < State.SizeLf && b != HttpChars.CR)
            {
                // The chunk-size line is bounded, and so are the extension bytes (everything after the size) of the whole body.
                if (++_lineBytes > MaxChunkLineLength
                    || ((_state > State.Size || (_state == State.Size && HttpChars.HexValue(b) < 0)) && ++_extensionBytes > _maxExtensionBytes))
                {
                    status = ChunkedStatus.ChunkExtensionsTooLong;
                    goto Exit;
                }
            }

            switch (_state)
            {
                case State.SizeFirst:
                case State.Size:
                    int digit = HttpChars.HexValue(b);
                    if (digit >= 0)
                    {
                        if (_remaining > MaxSizeBeforeShift)
                        {
                            status = ChunkedStatus.ChunkSizeOverflow;
                            goto Exit;
                        }

                        _remaining = (_remaining << 4) | (uint)digit;
                        _state = State.Size;
                        break;
                    }

                    if (_state == State.SizeFirst)
                    {
                        status = ChunkedStatus.InvalidChunkSize;
                        goto Exit;
                    }

                    goto case State.ExtValueEnd;

                case State.BwsBeforeSemicolon:
                    // RFC 9112 §7.1.1: BWS belongs to a chunk-ext and may only precede its ';'. "5 \r\n" is not
                    // chunk-size [ chunk-ext ] CRLF, and recipients disagree about it, so it is refused.
                    if (b == (byte)';')
                    {
                        _state = State.ExtNameStart;
                    }
                    else if (!HttpChars.IsOws(b))
                    {
                        status = b == HttpChars.CR ? ChunkedStatus.WhitespaceBeforeCrlf : ChunkedStatus.InvalidChunkExtension;
                        goto Exit;
                    }

                    break;

                case State.ExtNameStart:
                    if (HttpChars.IsTokenChar(b))
                    {
                        _state = State.ExtName;
                    }
                    else if (!HttpChars.IsOws(b))
                    {
                        status = ChunkedStatus.InvalidChunkExtension;
                        goto Exit;
                    }

                    break;

                case State.ExtName:
                    if (HttpChars.IsTokenChar(b))
                    {
                        break;
                    }

                    if (b == (byte)'=')
                    {
                        _state = State.ExtValueStart;
                    }
                    else if (HttpChars.IsOws(b))
                    {
                        _state = State.BwsAfterName;
                    }
                    else
                    {
                        goto case State.ExtValueEnd;
                    }

                    break;

                case State.BwsAfterName:
                    if (b == (byte)'=')
                    {
                        _state = State.ExtValueStart;
                    }
                    else if (b == (byte)';')
                    {
                        _state = State.ExtNameStart;
                    }
                    else if (!HttpChars.IsOws(b))
                    {
                        status = ChunkedStatus.InvalidChunkExtension;
                        goto Exit;
                    }

                    break;

                case State.ExtValueStart:
                    if (HttpChars.IsTokenChar(b))
                    {
                        _state = State.ExtToken;
                    }
                    else if (b == (byte)'"')
                    {
                        _state = State.ExtQuoted;
                    }
                    else if (!HttpChars.IsOws(b))
                    {
                        status = ChunkedStatus.InvalidChunkExtension;
                        goto Exit;
                    }

                    break;

                case State.ExtToken:
                    if (HttpChars.IsTokenChar(b))
                    {
                        break;
                    }

                    goto case State.ExtValueEnd;

                case State.ExtQuoted:
                    // RFC 9110 §5.6.4: qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text; quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text ).
                    if (b == (byte)'"')
                    {
                        _state = State.ExtValueEnd;
                    }
                    else if (b == (byte)'\\')
                    {
                        _state = State.ExtQuotedPair;
                    }
                    else if (!HttpChars.IsFieldValueChar(b))
                    {
                        status = ChunkedStatus.InvalidChunkExtension;
                        goto Exit;
                    }

                    break;

                case State.ExtQuotedPair:
                    if (!HttpChars.IsFieldValueChar(b))
                    {
                        status = ChunkedStatus.InvalidChunkExtension;
                        goto Exit;
                    }

                    _state = State.ExtQuoted;
                    break;

                case State.ExtValueEnd:
                    // After the size, a name or a value: the line ends, an extension starts, or BWS precedes the next ';'.
                    if (b == HttpChars.CR)
                    {
                        _state = State.SizeLf;
                    }
                    else if (b == (byte)';')
                    {
                        _state = State.ExtNameStart;
                    }
                    else if (HttpChars.IsOws(b))
                    {
                        _state = State.BwsBeforeSemicolon;
                    }
                    else
                    {
                        status = ChunkedStatus.InvalidChunkExtension;
                        goto Exit;
                    }

                    break;

                case State.SizeLf:
                    if (b != HttpChars.LF)
                    {
                        status = ChunkedStatus.MissingCrlf;
                        goto Exit;
                    }

                    _lineBytes = 0;
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

                    continue;

                case State.DataCr:
                case State.DataLf:
                    // RFC 9112 §7.1: chunk-data is followed by exactly CRLF.
                    if (b != (_state == State.DataCr ? HttpChars.CR : HttpChars.LF))
                    {
                        status = ChunkedStatus.MissingCrlf;
                        goto Exit;
                    }

                    _state = _state == State.DataCr ? State.DataLf : State.SizeFirst;
                    break;

                case State.TrailerStart:
                    if (b == HttpChars.CR)
                    {
                        _state = State.FinalLf;
                        break;
                    }

                    // RFC 9112 §7.1.2: trailer-section = *( field-line CRLF ), field-line = field-name ":" OWS field-value OWS;
                    // a leading SP or HTAB (obs-fold, §5.2) is not a field name either.
                    if (!HttpChars.IsTokenChar(b))
                    {
                        status = ChunkedStatus.InvalidTrailer;
                        goto Exit;
                    }

                    _state = State.TrailerName;
                    goto case State.TrailerCount;

                case State.TrailerName:
                    if (b == (byte)':')
                    {
                        _state = State.TrailerValue;
                    }
                    else if (!HttpChars.IsTokenChar(b))
                    {
                        status = ChunkedStatus.InvalidTrailer;
                        goto Exit;
                    }

                    goto case State.TrailerCount;

                case State.TrailerValue:
                    if (b == HttpChars.CR)
                    {
                        _state = State.TrailerLf;
                    }
                    else if (!HttpChars.IsFieldValueChar(b))
                    {
                        status = ChunkedStatus.InvalidTrailer;
                        goto Exit;
                    }

                    goto case State.TrailerCount;

                case State.TrailerLf:
                    if (b != HttpChars.LF)
                    {
                        status = ChunkedStatus.MissingCrlf;
                        goto Exit;
                    }

                    _state = State.TrailerStart;
                    goto case State.TrailerCount;

                case State.TrailerCount:
                    if (++_trailerBytes > _maxTrailerBytes)
                    {
                        status = ChunkedStatus.TrailersTooLong;
                        goto Exit;
                    }

                    break;

                case State.FinalLf:
                    if (b != HttpChars.LF)
                    {
                        status = ChunkedStatus.MissingCrlf;
                        goto Exit;
                    }

                    i++;
                    _state = State.Done;
                    goto Exit;

                default:
                    goto Exit;
            }

            i++;
        }

    Exit:
        consumed = i;
        written = w;
        if (status != ChunkedStatus.InProgress)
        {
            _state = State.Failed;
            return status;
        }

        return _state == State.Done ? ChunkedStatus.Done : ChunkedStatus.InProgress;
    }

    /// <summary>A short English description of an error status, for either side's error message.</summary>
    public static string Describe(ChunkedStatus status) => status switch
    {
        ChunkedStatus.InvalidChunkSize => "Invalid chunk size.",
        ChunkedStatus.ChunkSizeOverflow => "Chunk size overflows.",
        ChunkedStatus.WhitespaceBeforeCrlf => "Whitespace before the end of a chunk-size line (RFC 9112 §7.1.1 allows it only before ';').",
        ChunkedStatus.InvalidChunkExtension => "Invalid chunk extension.",
        ChunkedStatus.ChunkExtensionsTooLong => "Chunk line or chunk extensions too long.",
        ChunkedStatus.MissingCrlf => "Chunked framing not terminated by CRLF.",
        ChunkedStatus.InvalidTrailer => "Invalid trailer field.",
        ChunkedStatus.TrailersTooLong => "Trailer section too long.",
        _ => status.ToString(),
    };

    private enum State : byte
    {
        // The chunk-size line: every state before Data counts toward MaxChunkLineLength.
        SizeFirst,
        Size,
        BwsBeforeSemicolon,
        ExtNameStart,
        ExtName,
        BwsAfterName,
        ExtValueStart,
        ExtToken,
        ExtQuoted,
        ExtQuotedPair,
        ExtValueEnd,
        SizeLf,
        Data,
        DataCr,
        DataLf,
        TrailerStart,
        TrailerName,
        TrailerValue,
        TrailerLf,
        TrailerCount,
        FinalLf,
        Done,
        Failed,
    }
}
