using System.Buffers;
using System.Buffers.Text;
using System.IO.Pipelines;
using System.Runtime.CompilerServices;
using System.Text;
using LLRP.Errors;
using LLRP.Semantics;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.WebUtilities;

namespace LLRP.Http1;

/// <summary>
/// Writes the response to the client: status line, fields through the hop-by-hop policy, and a body framed for
/// this client (Content-Length, chunked for HTTP/1.1, close-delimited for HTTP/1.0). Bytes go straight into the
/// connection's PipeWriter; nothing is allocated per response.
/// </summary>
internal sealed class ResponseWriter
{
    // Chunks are written in place: a fixed-width size prefix is reserved before the data is read (RFC 9112 §7.1
    // allows leading zeros in chunk-size), so a body is never copied twice.
    private const int ChunkPrefixLength = 10; // 8 hex digits + CRLF
    private const int ChunkSuffixLength = 2;

    /// <summary>
    /// The most body one downstream read and one client send relay, with what goes out with it (the head before the
    /// first piece, a chunk's framing): together they fill one pooled array of this size. 64 KiB is one segment on
    /// loopback (MTU 65536), so a large body goes to the client in a quarter of the transmits, and wakes it a quarter
    /// as often, as with 16 KiB pieces: at 64 KiB responses llhttp's CPU per request relative to its origin's fell by
    /// 31 % in every round of an interleaved A/B (docs/methodology.md, "Decisions and their evidence"). A smaller body is
    /// asked for at its size.
    /// </summary>
    internal const int BodyBufferSize = 64 * 1024;

    private static readonly byte[][] s_statusLines = new byte[600][];

    private PipeWriter _output;
    // Set when another layer frames the response for the client (an HTTP/2 stream, Kestrel's HTTP/1.1 front end): the
    // status and fields go to it, the body to its body writer (_output).
    private IFramedResponse? _framed;
    private RequestHead _request = null!;
    // The response came from the downstream over HTTP/2 (ReceivedWith): its Via says "2", and it may carry trailers.
    private bool _receivedHttp2;
    private bool _chunked;
    private bool _untilClose;
    private bool _lengthKnown;
    private long _remaining;
    private int _status;
    // A 101 for a request whose Sec-WebSocket-Key the proxy made: its Sec-WebSocket-Accept is checked, never relayed.
    private bool _checkingAccept;
    private bool _acceptValid;
    private int _acceptCount;

    public ResponseWriter(PipeWriter output) => _output = output;

    /// <summary>
    /// The next responses go to a response another layer frames: the status and fields (through the same policy, so no
    /// connection-specific field reaches an HTTP/2 client, RFC 9113 §8.2.2) to <paramref name="framed"/>, the body to
    /// <paramref name="body"/>. That layer adds the framing: DATA frames and END_STREAM, or Kestrel's HTTP/1.1 framing.
    /// </summary>
    public void Bind(IFramedResponse framed, PipeWriter body)
    {
        _framed = framed;
        _output = body;
    }

    /// <summary>Any byte of the final response was written: an error can no longer be answered with a status.</summary>
    public bool HasStarted { get; private set; }

    /// <summary>The client connection must close after this response (client asked, HTTP/1.0 framing, or an incomplete exchange).</summary>
    public bool MustClose { get; private set; }

    public bool IsComplete { get; private set; }

    public void Start(RequestHead request)
    {
        _request = request;
        HasStarted = IsComplete = _chunked = _untilClose = _lengthKnown = _receivedHttp2 = _checkingAccept = false;
        MustClose = request.ClientWantsClose;
        _remaining = 0;
        _status = 0;
    }

    /// <summary>
    /// The HTTP version the variant received the response with, before <see cref="EndHead"/>: HTTP/1.1 unless told
    /// otherwise (llhttp speaks nothing else). RFC 9110 §7.6.3: the response's Via names it.
    /// </summary>
    public void ReceivedWith(Version version) => _receivedHttp2 = version.Major == 2;

    /// <summary>
    /// The head is to be sent as soon as it is written, not with the first body piece: a response received over HTTP/2
    /// may be a stream whose head comes long before its first bytes (a gRPC server's early headers, a stream that waits
    /// for the client's next message), and holding the head would stall the client. An HTTP/1.1 response keeps head and
    /// first piece in one send.
    /// </summary>
    public bool SendsHeadAtOnce => _receivedHttp2;

    /// <summary>
    /// Trailer fields can reach this client: an HTTP/2 client (HEADERS with END_STREAM after the body), from a response received over HTTP/2. Everywhere else they are dropped: an HTTP/1.1 client of the raw
    /// front end gets the body without them (its chunked framing ends with an empty trailer section), as a response
    /// from an HTTP/1.1 downstream loses the trailers its chunked framing carried (llhttp's decoder drops them).
    /// </summary>
    public bool CanSendTrailers => ClientTakesTrailers && _receivedHttp2;

    /// <summary>This client can be sent trailer fields (an HTTP/2 stream), whatever the downstream speaks.</summary>
    public bool ClientTakesTrailers => _framed is { TakesTrailers: true } && _request.Protocol == ClientProtocol.Http2;

    /// <summary>
    /// One trailer field from the downstream, when <see cref="CanSendTrailers"/> (else dropped), through the policy of the
    /// head plus what RFC 9110 §6.5.1 keeps out of trailers: framing (Content-Length, Transfer-Encoding), hop-by-hop
    /// fields, Host, and pseudo-header fields (RFC 9113 §8.1: never in trailers). Call before <see cref="CompleteBody"/>.
    /// </summary>
    public void WriteTrailer(string name, string value)
    {
        if (!CanSendTrailers || name.Length == 0 || name[0] == ':')
        {
            return;
        }
        if (name.Length <= 32)
        {
            Span<byte> nameBytes = stackalloc byte[name.Length];
            Encoding.Latin1.GetBytes(name, nameBytes);
            var kind = FieldNames.Classify(nameBytes);
            if (IsFramingOrHopByHop(kind) || kind == HeaderKind.Host)
            {
                return;
            }
        }
        _framed!.AddTrailer(name, value);
    }

    /// <summary>Starts the final response head; interim (1xx) heads use <see cref="WriteInterimAsync"/>.</summary>
    public void BeginHead(int status)
    {
        var line = StatusLine(status);
        HasStarted = true;
        _status = status;
        if (_framed is not null)
        {
            _framed.SetStatus(status);
            return;
        }
        Write(line);
    }

    /// <summary>Writes one field unless the policy removes it (hop-by-hop, framing; the variant removes Connection-nominated ones).</summary>
    public void WriteField(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        if (IsFramingOrHopByHop(FieldNames.Classify(name)) || (_checkingAccept && CheckedAccept(name, value)))
        {
            return;
        }
        if (_framed is not null)
        {
            _framed.AddField(name, value);
            return;
        }
        var length = name.Length + value.Length + 4;
        var span = _output.GetSpan(length);
        name.CopyTo(span);
        span[name.Length] = (byte)':';
        span[name.Length + 1] = (byte)' ';
        value.CopyTo(span[(name.Length + 2)..]);
        span[length - 2] = (byte)'\r';
        span[length - 1] = (byte)'\n';
        _output.Advance(length);
    }

    /// <summary>The same for fields that a client library hands over as strings (Latin-1 on the wire, RFC 9110 §5.5).</summary>
    public void WriteField(string name, string value)
    {
        // Every name the policy acts on is shorter than 32 characters.
        if (name.Length <= 32)
        {
            Span<byte> nameBytes = stackalloc byte[name.Length];
            Encoding.Latin1.GetBytes(name, nameBytes);
            if (IsFramingOrHopByHop(FieldNames.Classify(nameBytes)))
            {
                return;
            }
            if (_checkingAccept && Ascii.EqualsIgnoreCase(nameBytes, "Sec-WebSocket-Accept"u8))
            {
                var valueBytes = Encoding.Latin1.GetBytes(value);
                CheckedAccept(nameBytes, valueBytes);
                return;
            }
        }
        if (_framed is not null)
        {
            _framed.AddField(name, value);
            return;
        }
        var length = name.Length + value.Length + 4;
        var span = _output.GetSpan(length);
        Encoding.Latin1.GetBytes(name, span);
        span[name.Length] = (byte)':';
        span[name.Length + 1] = (byte)' ';
        Encoding.Latin1.GetBytes(value, span[(name.Length + 2)..]);
        span[length - 2] = (byte)'\r';
        span[length - 1] = (byte)'\n';
        _output.Advance(length);
    }

    private static bool IsFramingOrHopByHop(HeaderKind kind) =>
        kind is HeaderKind.Connection or HeaderKind.HopByHop or HeaderKind.ContentLength or HeaderKind.TransferEncoding;

    /// <summary>
    /// Ends the head and decides the client framing (RFC 9112 §6.3): no body for HEAD/204/304; Content-Length when the
    /// downstream gave one; else chunked for HTTP/1.1 clients and close-delimited for HTTP/1.0 ones (RFC 9112 §7 forbids
    /// chunked to 1.0). Returns whether body bytes should follow.
    /// </summary>
    public bool EndHead(DownstreamBody body, long contentLength)
    {
        if (_framed is not null)
        {
            return EndFramedHead(body, contentLength);
        }
        WriteVia();
        var noBody = body == DownstreamBody.None || _request.IsHead || _status == 204 || _status == 304;
        if (body == DownstreamBody.ContentLength && _status != 204)
        {
            // Kept on HEAD and 304 as metadata (RFC 9110 §8.6); it promises the body length otherwise.
            WriteContentLength(contentLength);
            _remaining = noBody ? 0 : contentLength;
            _lengthKnown = true;
        }
        else if (!noBody)
        {
            if (_request.Protocol == ClientProtocol.Http10)
            {
                MustClose = _untilClose = true;
            }
            else
            {
                _chunked = true;
                Write("Transfer-Encoding: chunked\r\n"u8);
            }
        }

        if (MustClose)
        {
            Write("Connection: close\r\n\r\n"u8);
        }
        else if (_request.Protocol == ClientProtocol.Http10)
        {
            Write("Connection: keep-alive\r\n\r\n"u8);
        }
        else
        {
            Write("\r\n"u8);
        }
        if (noBody)
        {
            IsComplete = true;
            return false;
        }
        return true;
    }

    // The same decisions for a response another layer frames: it sends Content-Length when the downstream gave one (and
    // the body is held to it), and otherwise ends the body with the stream (HTTP/2) or frames it itself (chunked, close).
    private bool EndFramedHead(DownstreamBody body, long contentLength)
    {
        _framed!.AddField("via"u8, _receivedHttp2 ? "2 llrp"u8 : "1.1 llrp"u8);
        var noBody = body == DownstreamBody.None || _request.IsHead || _status == 204 || _status == 304;
        if (body == DownstreamBody.ContentLength && _status != 204)
        {
            _framed.SetContentLength(contentLength);
            _remaining = noBody ? 0 : contentLength;
            _lengthKnown = true;
        }
        else if (!noBody)
        {
            _untilClose = true;
        }
        if (noBody)
        {
            IsComplete = true;
            return false;
        }
        return true;
    }

    /// <summary>More body may follow: always for chunked and close-delimited bodies, until the length for Content-Length.</summary>
    public bool ExpectsMoreBody => _chunked || _untilClose || _remaining > 0;

    /// <summary>Memory for the next piece of body, to be filled by the downstream read and then <see cref="AdvanceBody"/>d.</summary>
    public Memory<byte> GetBodyMemory()
    {
        // The head written before the first piece is still in the output: it comes out of the piece's room (at most half
        // of it, so that a head of tens of KiB still leaves a piece worth a read).
        var room = BodyBufferSize - (_output.CanGetUnflushedBytes ? (int)Math.Min(_output.UnflushedBytes, BodyBufferSize / 2) : 0);
        if (_chunked)
        {
            var memory = _output.GetMemory(room);
            return memory.Slice(ChunkPrefixLength, memory.Length - ChunkPrefixLength - ChunkSuffixLength);
        }
        // Never more than the body still owed: with the runtime's socket engine Kestrel's output pipe serves hints up to
        // its 4 KB block from its own pool and larger ones from ArrayPool.Shared, which allocates under load (a few
        // arrays per core); so a body that fits a block (the usual small answer) never leaves Kestrel's pool. (The epoll
        // transport's writer grows its one buffer from the exchange pool.)
        var plain = _output.GetMemory(_lengthKnown ? (int)Math.Min(_remaining, room) : room);
        return _remaining > 0 && plain.Length > _remaining ? plain[..(int)_remaining] : plain;
    }

    public void AdvanceBody(int count)
    {
        if (count == 0)
        {
            return;
        }
        if (_chunked)
        {
            var span = _output.GetSpan(count + ChunkPrefixLength + ChunkSuffixLength);
            Utf8Formatter.TryFormat((uint)count, span, out _, new StandardFormat('X', 8));
            span[8] = (byte)'\r';
            span[9] = (byte)'\n';
            span[ChunkPrefixLength + count] = (byte)'\r';
            span[ChunkPrefixLength + count + 1] = (byte)'\n';
            _output.Advance(count + ChunkPrefixLength + ChunkSuffixLength);
            return;
        }
        if (_lengthKnown)
        {
            if (count > _remaining)
            {
                ProxyThrow.Throw(ProxyError.DownstreamInvalidResponse, "The downstream sent more body than its Content-Length.");
            }
            _remaining -= count;
        }
        _output.Advance(count);
    }

    /// <summary>Ends the body: the last chunk for chunked; for Content-Length the downstream must have sent every byte.</summary>
    public void CompleteBody()
    {
        if (_chunked)
        {
            Write("0\r\n\r\n"u8);
        }
        else if (_remaining > 0)
        {
            ProxyThrow.Throw(ProxyError.DownstreamBodyCutShort, "The downstream body ended before its Content-Length.");
        }
        IsComplete = true;
    }

    /// <summary>Relays an interim 1xx head to HTTP/1.1 clients (RFC 9110 §15.2: never to 1.0 clients).</summary>
    public bool CanSendInterim => _framed is null && _request.Protocol == ClientProtocol.Http11;

    public void BeginInterim(int status) => Write(StatusLine(status));

    public ValueTask<FlushResult> EndInterimAsync()
    {
        WriteVia();
        Write("\r\n"u8);
        return _output.FlushAsync();
    }

    /// <summary>
    /// Starts a 101 (Switching Protocols) head for a request that asked to upgrade (<see cref="RequestHead.IsUpgrade"/>);
    /// the downstream's fields follow through <see cref="WriteField(ReadOnlySpan{byte}, ReadOnlySpan{byte})"/>, then
    /// <see cref="EndSwitch(ReadOnlySpan{byte})"/>. After it the connection (or, for a response another layer frames,
    /// the stream) is a tunnel, not HTTP: the response is complete and the tunnel's end ends it.
    /// </summary>
    public void BeginSwitch()
    {
        _status = 101;
        // RFC 6455 §4.1: the client checks the Accept against its key; when the key is the proxy's, so is the check.
        _checkingAccept = !_request.ProxyWebSocketKey.IsEmpty;
        _acceptValid = false;
        _acceptCount = 0;
        if (_framed is not null)
        {
            // Nothing leaves before EndSwitch (the layer sends on the flush after it), so a switch EndSwitch refuses is
            // still answered with a status: HasStarted waits for it.
            _framed.BeginTunnel();
            return;
        }
        HasStarted = true;
        Write(StatusLine(101));
    }

    /// <summary>
    /// Ends the 101 head with the Upgrade the downstream switched to (RFC 9110 §7.8: a 101 MUST carry it) and
    /// "Connection: upgrade", both hop-by-hop and so written here rather than relayed by the field policy, and Via. A
    /// layer that frames the response gets neither (RFC 8441 §5: no Upgrade or Connection over HTTP/2), only Via.
    /// For a request whose Sec-WebSocket-Key the proxy made, the downstream's Sec-WebSocket-Accept must be the one
    /// RFC 6455 §4.2.2 derives from it, exactly once; otherwise the downstream did not complete the handshake the proxy
    /// started, and no tunnel opens (a 502, <see cref="ProxyError.DownstreamInvalidResponse"/>).
    /// </summary>
    public void EndSwitch(ReadOnlySpan<byte> upgrade)
    {
        if (_checkingAccept && !(_acceptValid && _acceptCount == 1))
        {
            ProxyThrow.Throw(ProxyError.DownstreamInvalidResponse, "The downstream's Sec-WebSocket-Accept is missing or does not match the key the proxy sent (RFC 6455 §4.2.2).");
        }
        HasStarted = true;
        IsComplete = true;
        MustClose = true;
        if (_framed is not null)
        {
            _framed.AddField("via"u8, _receivedHttp2 ? "2 llrp"u8 : "1.1 llrp"u8);
            return;
        }
        Write("Upgrade: "u8);
        Write(upgrade);
        Write("\r\nConnection: upgrade\r\n"u8);
        WriteVia();
        Write("\r\n"u8);
    }

    /// <inheritdoc cref="EndSwitch(ReadOnlySpan{byte})"/>
    public void EndSwitch(string upgrade)
    {
        Span<byte> bytes = upgrade.Length <= 256 ? stackalloc byte[upgrade.Length] : new byte[upgrade.Length];
        Encoding.Latin1.GetBytes(upgrade, bytes);
        EndSwitch(bytes);
    }

    // While a 101 for a key the proxy made is written: Sec-WebSocket-Accept is checked here and kept from the client
    // (whose handshake, over HTTP/2, has no key to check it against). True when the field was that one.
    private bool CheckedAccept(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        if (!Ascii.EqualsIgnoreCase(name, "Sec-WebSocket-Accept"u8))
        {
            return false;
        }
        _acceptCount++;
        _acceptValid = WebSocketKey.IsAcceptFor(_request.ProxyWebSocketKey, value);
        return true;
    }

    public ValueTask<FlushResult> WriteContinueAsync()
    {
        Write("HTTP/1.1 100 Continue\r\n\r\n"u8);
        return _output.FlushAsync();
    }

    /// <summary>An answer the proxy makes itself (400, 502, 504...): no body, and the connection closes after it.</summary>
    public ValueTask<FlushResult> WriteErrorAsync(int status)
    {
        HasStarted = true;
        IsComplete = true;
        if (_framed is not null)
        {
            // The stream ends with the answer; the connection carries on (RFC 9113 §8.1.1 lets an intermediary answer a
            // malformed request instead of resetting the stream).
            _framed.SetStatus(status);
            _framed.SetContentLength(0);
            return default;
        }
        MustClose = true;
        Write(StatusLine(status));
        Write("Content-Length: 0\r\nConnection: close\r\n\r\n"u8);
        return _output.FlushAsync();
    }

    public ValueTask<FlushResult> FlushAsync() => _output.FlushAsync();

    // RFC 9110 §7.6.3: a proxy adds Via to responses too, naming the protocol it received the response with.
    private void WriteVia() => Write(_receivedHttp2 ? "Via: 2 llrp\r\n"u8 : "Via: 1.1 llrp\r\n"u8);

    private void WriteContentLength(long length)
    {
        Write("Content-Length: "u8);
        var span = _output.GetSpan(22);
        Utf8Formatter.TryFormat(length, span, out var written);
        span[written] = (byte)'\r';
        span[written + 1] = (byte)'\n';
        _output.Advance(written + 2);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Write(ReadOnlySpan<byte> bytes)
    {
        var span = _output.GetSpan(bytes.Length);
        bytes.CopyTo(span);
        _output.Advance(bytes.Length);
    }

    // RFC 9112 §4: the reason phrase is optional and may be regenerated; a status line per code is built once.
    private static byte[] StatusLine(int status)
    {
        if ((uint)status >= (uint)s_statusLines.Length || status < 100)
        {
            ProxyThrow.Throw(ProxyError.DownstreamInvalidResponse, "Invalid downstream status code.");
        }
        return s_statusLines[status] ??= Encoding.ASCII.GetBytes($"HTTP/1.1 {status} {ReasonPhrases.GetReasonPhrase(status)}\r\n");
    }
}
