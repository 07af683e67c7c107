using System.Buffers;
using System.Runtime.CompilerServices;
using System.Text;
using LLHttp.Syntax;
using LLRP.Buffers;
using LLRP.Errors;
using LLRP.Semantics;
using KestrelBadRequest = Microsoft.AspNetCore.Http.BadHttpRequestException;

namespace LLRP.Http1;

/// <summary>
/// The parsed and validated request head of one connection, reused request after request: the bytes the
/// parser hands out are copied into one buffer sized by the limits, so nothing is allocated per request.
/// Validation is the proxy's own (RFC 9110/9112); Kestrel's parser only splits lines.
/// </summary>
/// <remarks>
/// The buffer (~40 KB with the default limits) and the field entries are rented when a request line arrives and given
/// back by <see cref="Reset"/> before the connection waits for the next request, so an idle client connection holds
/// neither (10,000 idle connections would otherwise pin ~400 MB). The pools keep enough arrays for every exchange in
/// flight (<see cref="ProxyBuffers"/>), so renting allocates nothing in steady state.
/// </remarks>
internal sealed class RequestHead
{
    /// <summary>The field entries' pool (a head holds an array only during an exchange); idle trimming empties it.</summary>
    internal static TrimmableArrayPool<HeaderEntry> HeaderEntries { get; } = ProxyBuffers.Create<HeaderEntry>(RequestLimits.MaxHeaderCountLimit);

    private readonly RequestLimits _limits;
    // The request line and header section are each capped, so their copies always fit.
    private readonly int _capacity;
    private byte[] _buffer = [];
    private HeaderEntry[] _headers = [];
    private int _length;
    private bool _inRequestLine = true;
    private long _headerBytes;

    public RequestHead(RequestLimits limits)
    {
        _limits = limits;
        _capacity = limits.MaxRequestLineSize + limits.MaxRequestHeadersTotalSize;
    }

    /// <summary>Whether the head holds rented arrays (it does from a request line until <see cref="Reset"/>).</summary>
    public bool HoldsBuffers => _buffer.Length != 0;

    public RequestMethod Method { get; private set; }
    /// <summary>The protocol the request arrived on; the request is held to HTTP/1.1's rules (or HTTP/1.0's) either way.</summary>
    public ClientProtocol Protocol { get; private set; }
    public int HeaderCount { get; private set; }
    public BodyFraming Framing { get; private set; }
    public long ContentLength { get; private set; }
    public bool ExpectContinue { get; private set; }
    /// <summary>The client asked for the connection to end after this exchange (or did not ask HTTP/1.0 to keep it).</summary>
    public bool ClientWantsClose { get; private set; }
    public bool IsHead => Method == RequestMethod.Head;

    /// <summary>The length of a request line with single spaces; Kestrel's parser skips extra spaces before the version.</summary>
    public int RequestLineLength { get; private set; }

    private int _methodLength;
    private int _targetStart, _targetLength;
    private int _authorityStart = -1, _authorityLength;
    private int _hostIndex = -1;
    private int _contentLengthCount, _transferEncodingCount;
    private long _declaredLength = -1;
    // The Upgrade field line (-1: none), how many there were, and whether Connection named "upgrade"; decided into
    // _upgradeIndex (-1 unless the upgrade is passed on) once the header section is complete.
    private int _upgradeIndex = -1, _upgradeCount;
    private bool _connectionUpgrade;
    // An HTTP/2 extended CONNECT turned into a WebSocket upgrade (UpgradeToWebSocket), and its key's field line (-1: none).
    private bool _extendedConnect;
    private int _proxyKeyIndex = -1;

    /// <summary>RFC 9110 §7.6.3: the Via value for the forwarded request, naming the protocol version the client used.</summary>
    public ReadOnlySpan<byte> ViaValue => Protocol.Via();

    public ReadOnlySpan<byte> MethodBytes => _buffer.AsSpan(0, _methodLength);
    /// <summary>origin-form (path and query) or "*"; never absolute-form.</summary>
    public ReadOnlySpan<byte> Target => _buffer.AsSpan(_targetStart, _targetLength);
    /// <summary>The Host to send downstream: the absolute-form authority if there was one, else the client's Host.</summary>
    public ReadOnlySpan<byte> Authority =>
        _authorityStart >= 0 ? _buffer.AsSpan(_authorityStart, _authorityLength)
        : _hostIndex >= 0 ? Value(_hostIndex)
        : default;

    public ref readonly HeaderEntry Header(int index) => ref _headers[index];
    public ReadOnlySpan<byte> Name(int index) => _buffer.AsSpan(_headers[index].NameStart, _headers[index].NameLength);
    public ReadOnlySpan<byte> Value(int index) => _buffer.AsSpan(_headers[index].ValueStart, _headers[index].ValueLength);

    /// <summary>Bytes of a request line have arrived (past the empty lines RFC 9112 §2.2 lets a client send first).</summary>
    public bool Started { get; private set; }

    /// <summary>
    /// Parses what <paramref name="reader"/> holds of the head, continuing across reads until it returns true (the reader
    /// then stands right after the head); the caller keeps the unread rest for the next call. A rejection throws
    /// <see cref="ProxyException"/> (or Kestrel's BadHttpRequestException from its line splitter).
    /// </summary>
    public bool Parse(ref SequenceReader<byte> reader)
    {
        if (_inRequestLine)
        {
            // RFC 9112 §2.2: at least one empty line before a request-line SHOULD be ignored.
            while (reader.IsNext("\r\n"u8, advancePast: true))
            {
            }
            Started |= reader.Remaining > 0;
            var lineStart = reader.Consumed;
            if (reader.Remaining >= _limits.MaxRequestLineSize)
            {
                // Decided on the first maxRequestLineSize bytes, before the line is complete, so that the answer does
                // not depend on how the line arrives in reads.
                CheckMethodWithinLimit(reader);
            }
            if (ParseRequestLine(ref reader))
            {
                // RFC 9112 §3: the limit is the proxy's (414); Kestrel's own limits are bypassed by a connection handler.
                if (reader.Consumed - lineStart > _limits.MaxRequestLineSize)
                {
                    ProxyThrow.Throw(ProxyError.UriTooLong, "Request line too long.");
                }
                // RFC 9112 §3: a request line with extra whitespace SHOULD be answered with 400.
                if (reader.Consumed - lineStart != RequestLineLength)
                {
                    ProxyThrow.BadRequest("Extra whitespace in the request line.");
                }
                _inRequestLine = false;
            }
            else if (reader.Remaining > _limits.MaxRequestLineSize)
            {
                ProxyThrow.Throw(ProxyError.UriTooLong, "Request line too long.");
            }
        }
        if (_inRequestLine)
        {
            return false;
        }
        var before = reader.Consumed;
        // One byte past the limit is enough to see it crossed.
        var complete = KestrelParser.ParseHeaders(this, ref reader, (int)(_limits.MaxRequestHeadersTotalSize - _headerBytes) + 1);
        _headerBytes += reader.Consumed - before;
        if (_headerBytes > _limits.MaxRequestHeadersTotalSize ||
            (!complete && _headerBytes + reader.Remaining > _limits.MaxRequestHeadersTotalSize))
        {
            ProxyThrow.Throw(ProxyError.HeaderFieldsTooLarge, "Request header fields too large.");
        }
        return complete;
    }

    private bool ParseRequestLine(ref SequenceReader<byte> reader)
    {
        var line = reader;
        try
        {
            return KestrelParser.ParseRequestLine(this, ref reader);
        }
        catch (KestrelBadRequest e) when (e.StatusCode == 505)
        {
            RejectMalformedVersion(line);
            throw;
        }
    }

    // Kestrel answers 505 for any version it does not know. RFC 9112 §2.3: HTTP-version = "HTTP/" DIGIT "." DIGIT
    // (case-sensitive); anything else is no HTTP-version at all, so the request line is invalid (400, RFC 9112 §3).
    // 505 (RFC 9110 §15.6.6) stays for a well-formed version the proxy does not implement.
    private void RejectMalformedVersion(SequenceReader<byte> line)
    {
        line.TryReadTo(out ReadOnlySequence<byte> text, (byte)'\n');
        if (text.Length > _limits.MaxRequestLineSize)
        {
            // The same answer as when the line arrives in pieces and outgrows the limit before its end.
            ProxyThrow.Throw(ProxyError.UriTooLong, "Request line too long.");
        }
        Span<byte> tail = stackalloc byte[10];
        var end = text.Slice(Math.Max(0, text.Length - tail.Length));
        end.CopyTo(tail);
        if (!IsVersionSyntax(tail[..(int)end.Length]))
        {
            ProxyThrow.BadRequest("Malformed HTTP-version.");
        }
    }

    // SP "HTTP/" DIGIT "." DIGIT CR: how a request line with a well-formed version ends.
    private static bool IsVersionSyntax(ReadOnlySpan<byte> tail) =>
        tail.Length == 10 && tail.StartsWith(" HTTP/"u8) && char.IsAsciiDigit((char)tail[6]) && tail[7] == '.' &&
        char.IsAsciiDigit((char)tail[8]) && tail[9] == HttpChars.CR;

    /// <summary>
    /// RFC 9112 §3: "A server that receives a method longer than any that it implements SHOULD respond with a 501". The
    /// proxy forwards any method that fits in the request line with a target and version, so a method filling the first
    /// maxRequestLineSize bytes is longer than any it implements: 501, not 414 (which RFC 9110 §15.5.15 keeps for the
    /// target) and not 431. Bytes that cannot be a method get 400, as Kestrel's parser answers for a shorter line.
    /// </summary>
    private void CheckMethodWithinLimit(SequenceReader<byte> reader)
    {
        for (var i = 0; i < _limits.MaxRequestLineSize; i++)
        {
            reader.TryRead(out var b);
            if (!HttpChars.IsTokenChar(b))
            {
                if (b != HttpChars.SP || i == 0)
                {
                    ProxyThrow.BadRequest("Invalid method token.");
                }
                return;
            }
        }
        ProxyThrow.Throw(ProxyError.NotImplemented, "Method longer than maxRequestLineSize.");
    }

    /// <summary>Forgets the last request and gives the buffers back to the pool (spans handed out are invalid after this).</summary>
    public void Reset()
    {
        ReleaseBuffers();
        _inRequestLine = true;
        Started = false;
        _headerBytes = 0;
        _length = 0;
        _methodLength = _targetStart = _targetLength = _authorityLength = 0;
        _authorityStart = _hostIndex = -1;
        _contentLengthCount = _transferEncodingCount = 0;
        _declaredLength = -1;
        _upgradeIndex = -1;
        _upgradeCount = 0;
        _connectionUpgrade = _extendedConnect = false;
        _proxyKeyIndex = -1;
        HeaderCount = 0;
        Framing = BodyFraming.None;
        ContentLength = 0;
        ExpectContinue = ClientWantsClose = false;
        Method = RequestMethod.Custom;
        Protocol = ClientProtocol.Http11;
    }

    // Called by the parser adapter for the request line (method, target up to the end of the query, version), with
    // the method and version it recognised and where the method ends and the target starts in startLine.
    internal void OnStartLine(RequestMethod knownMethod, ClientProtocol protocol, int methodEnd, int targetOffset, Span<byte> startLine)
    {
        // startLine runs from the method to the end of the target; then one SP, "HTTP/1.x" and CRLF (RFC 9112 §3).
        RequestLineLength = startLine.Length + 11;
        StartLine(knownMethod, protocol, startLine[..methodEnd], startLine[targetOffset..]);
    }

    /// <summary>
    /// The head of a request Kestrel parsed itself (an HTTP/2 stream's pseudo-header fields, or Kestrel's HTTP/1.1 front
    /// end): the method and target go through the same checks as a request line the proxy parses, then each field through
    /// <see cref="AddField"/>, then <see cref="CompleteFields"/>. A request of <see cref="ClientProtocol.Http2"/> is held
    /// to HTTP/1.1's rules and forwarded as HTTP/1.1 (RFC 9113 §8.3.1 maps it to an HTTP/1.1 request); the rules of its
    /// own protocol are its front end's, before <see cref="AddField"/>.
    /// </summary>
    internal void StartParsed(ReadOnlySpan<byte> method, ReadOnlySpan<byte> target, ClientProtocol protocol)
    {
        _inRequestLine = false;
        // As the forwarded request line: method, SP, target, SP, "HTTP/1.1", CRLF.
        RequestLineLength = method.Length + target.Length + 11;
        if (target.IsEmpty)
        {
            ProxyThrow.BadRequest("Empty request-target.");
        }
        StartLine(KnownMethod(method), protocol, method, target);
    }

    /// <summary>A field of a request Kestrel parsed: the same checks and limits as a field line the proxy parses.</summary>
    internal void AddField(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        // The field line it would be: name, ": ", value, CRLF.
        _headerBytes += name.Length + value.Length + 4;
        if (_headerBytes > _limits.MaxRequestHeadersTotalSize)
        {
            ProxyThrow.Throw(ProxyError.HeaderFieldsTooLarge, "Request header fields too large.");
        }
        OnHeader(name, value);
    }

    /// <summary>
    /// The fields of a request another layer parsed (an HTTP/2 front end, Kestrel's HTTP/1.1) are all there, and that
    /// layer de-frames its body: <paramref name="hasBody"/> says whether one follows. A body without Content-Length (an
    /// HTTP/2 stream's DATA frames, RFC 9113 §8.1, or one Kestrel de-chunked) is <see cref="BodyFraming.UntilEnd"/>.
    /// </summary>
    internal void CompleteFields(bool hasBody)
    {
        OnHeadersComplete();
        // GET, HEAD and TRACE get no body (the rule above): an empty DATA frame after their HEADERS is no content.
        if (Framing == BodyFraming.Chunked ||
            (hasBody && Framing == BodyFraming.None && Method is not (RequestMethod.Get or RequestMethod.Head or RequestMethod.Trace)))
        {
            Framing = BodyFraming.UntilEnd;
        }
    }

    /// <summary>The body's length is not known before it ends (chunked, or de-framed without Content-Length): an HTTP/1.1 downstream gets it chunked.</summary>
    public bool LengthUnknown => Framing is BodyFraming.Chunked or BodyFraming.UntilEnd;

    /// <summary>
    /// The client sent "TE: trailers" (RFC 9110 §10.1.4: it accepts trailer fields), the one TE an HTTP/2 request may carry
    /// (RFC 9113 §8.2.2, checked by the HTTP/2 front ends before <see cref="AddField"/>). TE is hop-by-hop and never
    /// forwarded as a field; an HTTP/2 downstream is sent "TE: trailers" again when this is true and the client can be
    /// given trailers. Scanned on demand, so the HTTP/1.1 path pays nothing for it.
    /// </summary>
    public bool AcceptsTrailers()
    {
        for (var i = 0; i < HeaderCount; i++)
        {
            if (_headers[i].Kind == HeaderKind.HopByHop && _headers[i].NameLength == 2 && ListContainsTrailers(Value(i)))
            {
                return true;
            }
        }
        return false;

        static bool ListContainsTrailers(ReadOnlySpan<byte> value)
        {
            foreach (var range in value.Split((byte)','))
            {
                if (Ascii.EqualsIgnoreCase(value[range].Trim((byte)' ').Trim((byte)'\t'), "trailers"u8))
                {
                    return true;
                }
            }
            return false;
        }
    }

    private static RequestMethod KnownMethod(ReadOnlySpan<byte> method) => method switch
    {
        _ when method.SequenceEqual("GET"u8) => RequestMethod.Get,
        _ when method.SequenceEqual("HEAD"u8) => RequestMethod.Head,
        _ when method.SequenceEqual("POST"u8) => RequestMethod.Post,
        _ when method.SequenceEqual("PUT"u8) => RequestMethod.Put,
        _ when method.SequenceEqual("DELETE"u8) => RequestMethod.Delete,
        _ when method.SequenceEqual("CONNECT"u8) => RequestMethod.Connect,
        _ when method.SequenceEqual("OPTIONS"u8) => RequestMethod.Options,
        _ when method.SequenceEqual("TRACE"u8) => RequestMethod.Trace,
        _ when method.SequenceEqual("PATCH"u8) => RequestMethod.Patch,
        _ => RequestMethod.Custom,
    };

    private void StartLine(RequestMethod knownMethod, ClientProtocol protocol, ReadOnlySpan<byte> method, ReadOnlySpan<byte> rawTarget)
    {
        if (_buffer.Length == 0)
        {
            _buffer = ProxyBuffers.Bytes.Rent(_capacity);
            _headers = HeaderEntries.Rent(_limits.MaxRequestHeaderCount);
        }
        Method = knownMethod;
        Protocol = protocol;

        if (!HttpChars.IsToken(method))
        {
            ProxyThrow.BadRequest("Invalid method token.");
        }
        // Before anything is copied (a long target would otherwise overflow the head's buffer with 431), and with the
        // answer the line gets when it arrives in pieces (Parse).
        if (RequestLineLength > _limits.MaxRequestLineSize)
        {
            ProxyThrow.Throw(ProxyError.UriTooLong, "Request line too long.");
        }
        // RFC 9110 §9.3.6: CONNECT asks for a tunnel, which this proxy does not provide (by design).
        if (Method == RequestMethod.Connect)
        {
            ProxyThrow.Throw(ProxyError.MethodNotAllowed, "CONNECT is not supported.");
        }
        if (!HttpChars.IsRequestTarget(rawTarget))
        {
            ProxyThrow.BadRequest("Invalid request-target.");
        }

        _methodLength = Append(method);
        if (rawTarget[0] == '/')
        {
            (_targetStart, _targetLength) = (_length, Append(rawTarget));
        }
        else if (rawTarget.Length == 1 && rawTarget[0] == '*')
        {
            // RFC 9112 §3.2.4: asterisk-form is only for a server-wide OPTIONS.
            if (Method != RequestMethod.Options)
            {
                ProxyThrow.BadRequest("Asterisk-form request-target is only valid for OPTIONS.");
            }
            (_targetStart, _targetLength) = (_length, Append(rawTarget));
        }
        else
        {
            SplitAbsoluteForm(rawTarget);
        }
    }

    // RFC 9112 §3.2.2: a proxy accepts absolute-form, forwards origin-form, and takes the Host from the target's authority.
    private void SplitAbsoluteForm(ReadOnlySpan<byte> target)
    {
        int schemeLength;
        if (target.Length > 7 && Ascii.EqualsIgnoreCase(target[..7], "http://"u8))
        {
            schemeLength = 7;
        }
        else if (target.Length > 8 && Ascii.EqualsIgnoreCase(target[..8], "https://"u8))
        {
            schemeLength = 8;
        }
        else
        {
            ProxyThrow.BadRequest("Unsupported request-target form.");
            return;
        }

        var rest = target[schemeLength..];
        var end = rest.IndexOfAny((byte)'/', (byte)'?');
        var authority = end < 0 ? rest : rest[..end];
        // RFC 9112 §3.2.2: this authority becomes the Host sent downstream, so it is held to the same rule as a Host.
        if (HostSyntax.Check(authority) != HostCheck.Forwardable)
        {
            ProxyThrow.BadRequest("Invalid or not forwardable authority in absolute-form request-target.");
        }
        _authorityStart = _length;
        _authorityLength = Append(authority);

        var pathAndQuery = end < 0 ? default : rest[end..];
        _targetStart = _length;
        if (pathAndQuery.IsEmpty || pathAndQuery[0] == '?')
        {
            Append("/"u8);
        }
        Append(pathAndQuery);
        _targetLength = _length - _targetStart;
    }

    internal void OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        if (HeaderCount == _limits.MaxRequestHeaderCount)
        {
            ProxyThrow.Throw(ProxyError.HeaderFieldsTooLarge, "Too many request header fields.");
        }
        // Kestrel's parser splits the line but checks neither the name's characters nor the value's (RFC 9110 §5.1, §5.5).
        if (!HttpChars.IsToken(name))
        {
            ProxyThrow.BadRequest("Invalid character in header name.");
        }
        if (!HttpChars.IsFieldValue(value))
        {
            ProxyThrow.BadRequest("Invalid character in header value.");
        }

        ref var entry = ref _headers[HeaderCount++];
        entry.Kind = FieldNames.Classify(name);
        if (entry.Kind == HeaderKind.Other && FieldNames.IsFramingLookalike(name))
        {
            ProxyThrow.BadRequest("Header name resembles Content-Length or Transfer-Encoding.");
        }
        entry.NameStart = _length;
        entry.NameLength = Append(name);
        entry.ValueStart = _length;
        entry.ValueLength = Append(value);

        switch (entry.Kind)
        {
            case HeaderKind.Host:
                // RFC 9112 §3.2: more than one Host, or an invalid one, MUST be answered with 400.
                if (_hostIndex >= 0)
                {
                    ProxyThrow.BadRequest("Duplicate Host header.");
                }
                CheckHost(value);
                _hostIndex = HeaderCount - 1;
                break;
            case HeaderKind.ContentLength:
                OnContentLength(value);
                break;
            case HeaderKind.TransferEncoding:
                _transferEncodingCount++;
                break;
            case HeaderKind.HopByHop when name.Length == 7:
                _upgradeIndex = HeaderCount - 1;
                _upgradeCount++;
                break;
        }
    }

    /// <summary>
    /// The client asks to switch protocols and the proxy passes the request on as such (RFC 9110 §7.8): an HTTP/1.1
    /// request with "upgrade" in Connection, one Upgrade field line that names no h2c, and no content. Any other
    /// Upgrade is ignored and removed, as hop-by-hop (RFC 9110 §7.6.1), and the request is forwarded as a plain one:
    /// over HTTP/1.0 (RFC 9110 §7.8: a server MUST ignore it there); h2c (RFC 9113 §3.1 removed the upgrade to HTTP/2,
    /// and an h2c upgrade through a proxy is how h2c smuggling reaches past the proxy's rules); a request with content
    /// (the rule the proxy chooses: a tunnel then never begins where a body might still be on its way, and Kestrel
    /// refuses such upgrades too); an Upgrade without "upgrade" in Connection, or in several lines.
    /// </summary>
    public bool IsUpgrade => _upgradeIndex >= 0;

    /// <summary>The Upgrade field's value (the protocols offered) when <see cref="IsUpgrade"/>; empty otherwise.</summary>
    public ReadOnlySpan<byte> UpgradeProtocols => _upgradeIndex >= 0 ? Value(_upgradeIndex) : default;

    /// <summary>
    /// Whether a 101's Upgrade field (<paramref name="switchedTo"/>) names only protocols this request offered: RFC 9110
    /// §7.8, a server MUST NOT switch to a protocol the client did not indicate, and MUST send Upgrade in a 101.
    /// </summary>
    public bool AcceptsSwitchTo(ReadOnlySpan<byte> switchedTo)
    {
        if (!IsUpgrade)
        {
            return false;
        }
        var named = 0;
        var protocols = new ListTokenizer(switchedTo, yieldEmpty: false);
        while (protocols.TryNext(out var protocol))
        {
            named++;
            if (!Offers(UpgradeProtocols, protocol))
            {
                return false;
            }
        }
        return named > 0;

        static bool Offers(ReadOnlySpan<byte> offered, ReadOnlySpan<byte> protocol)
        {
            var list = new ListTokenizer(offered, yieldEmpty: false);
            while (list.TryNext(out var candidate))
            {
                if (Ascii.EqualsIgnoreCase(candidate, protocol))
                {
                    return true;
                }
            }
            return false;
        }
    }

    /// <summary>
    /// An HTTP/2 extended CONNECT with ":protocol: websocket" (RFC 8441 §4), after its fields and before
    /// <see cref="CompleteFields"/>: the request becomes the upgrade an HTTP/1.1 client's WebSocket handshake is (RFC 6455
    /// §4.1), so every variant forwards it as it forwards that one: "Connection: upgrade" and "Upgrade: websocket", and a
    /// Sec-WebSocket-Key the proxy makes, since RFC 8441 §5 leaves the key out over HTTP/2 (the front end drops one the
    /// client sent). The head must have been started as GET of the CONNECT's :path.
    /// </summary>
    internal void UpgradeToWebSocket()
    {
        Span<byte> key = stackalloc byte[WebSocketKey.Length];
        WebSocketKey.Generate(key);
        OnHeader("Sec-WebSocket-Key"u8, key);
        _proxyKeyIndex = HeaderCount - 1;
        // Kind HopByHop, name of 7: recorded as the Upgrade field line, as a client's own would be.
        OnHeader("Upgrade"u8, "websocket"u8);
        _connectionUpgrade = true;
        _extendedConnect = true;
    }

    /// <summary>
    /// The Sec-WebSocket-Key the proxy made for this request (<see cref="UpgradeToWebSocket"/>), empty when the client's
    /// own key (or none) is forwarded. The downstream's Sec-WebSocket-Accept is then the proxy's to check
    /// (<see cref="ResponseWriter.EndSwitch(ReadOnlySpan{byte})"/>): no one else knows the key.
    /// </summary>
    public ReadOnlySpan<byte> ProxyWebSocketKey => _proxyKeyIndex >= 0 ? Value(_proxyKeyIndex) : default;

    // The decision IsUpgrade describes, once every field is known.
    private void DecideUpgrade()
    {
        var noContent = Framing == BodyFraming.None || (Framing == BodyFraming.ContentLength && ContentLength == 0);
        // An Upgrade field asks to switch only over HTTP/1.1 (RFC 9110 §7.8: ignored over HTTP/1.0); over HTTP/2 only the
        // upgrade the front end made of an extended CONNECT (RFC 9113 §8.6: HTTP/2 has no Upgrade).
        if (_upgradeIndex < 0 || _upgradeCount != 1 || !_connectionUpgrade || (Protocol != ClientProtocol.Http11 && !_extendedConnect) || !noContent)
        {
            _upgradeIndex = -1;
            return;
        }
        var protocols = new ListTokenizer(Value(_upgradeIndex), yieldEmpty: false);
        var named = 0;
        while (protocols.TryNext(out var protocol))
        {
            named++;
            var slash = protocol.IndexOf((byte)'/');
            if (Ascii.EqualsIgnoreCase(slash < 0 ? protocol : protocol[..slash], "h2c"u8))
            {
                _upgradeIndex = -1;
                return;
            }
        }
        if (named == 0)
        {
            _upgradeIndex = -1;
        }
    }

    // The request line came first, so the target's form is known here.
    private void CheckHost(ReadOnlySpan<byte> value)
    {
        // RFC 9112 §3.2.2: with absolute-form the received Host is ignored (replaced by the target's authority), so only
        // a syntactically invalid one is refused (§3.2); an empty Host is what a client sends for an empty authority.
        var absoluteForm = _authorityStart >= 0;
        if (value.IsEmpty)
        {
            // RFC 9112 §3.2 / RFC 9110 §4.2.1, §7.2: with origin-form (or asterisk-form) the Host is the target URI's
            // authority, and an http URI with an empty host MUST be rejected as invalid.
            if (!absoluteForm)
            {
                ProxyThrow.BadRequest("Empty Host header with an origin-form or asterisk-form target.");
            }
            return;
        }
        switch (HostSyntax.Check(value))
        {
            case HostCheck.Invalid:
                ProxyThrow.BadRequest("Invalid Host header.");
                break;
            case HostCheck.NotForwardable when !absoluteForm:
                ProxyThrow.BadRequest("Host header valid but not forwardable (reg-name beyond DNS syntax, IPvFuture or port above 65535).");
                break;
        }
    }

    // RFC 9112 §6.3 rule 5: an invalid Content-Length is unrecoverable. Identical duplicates MAY be collapsed (RFC 9110
    // §8.6); a proxy receiving a request takes the strict reading (nginx's, and desync-guardian's) and refuses any list
    // or second Content-Length line, because the next hop may not collapse it the same way.
    private void OnContentLength(ReadOnlySpan<byte> value)
    {
        if (ContentLengthSyntax.Accumulate(value, ContentLengthRepeats.Refused, ref _declaredLength) != ContentLengthStatus.Valid)
        {
            ProxyThrow.BadRequest("Invalid or conflicting Content-Length.");
        }
        _contentLengthCount++;
        ContentLength = _declaredLength;
    }

    /// <summary>Checks what needs the whole header section: Host, framing, Connection options, expectations.</summary>
    internal void OnHeadersComplete()
    {
        // RFC 9112 §3.2: an HTTP/1.1 request without Host MUST be answered with 400 (an HTTP/2 request is held to it as
        // the HTTP/1.1 request it is forwarded as; its :authority became its Host).
        if (_hostIndex < 0 && Protocol != ClientProtocol.Http10)
        {
            ProxyThrow.BadRequest("Missing Host header.");
        }

        if (_transferEncodingCount > 0)
        {
            // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means the framing is faulty.
            if (Protocol == ClientProtocol.Http10)
            {
                ProxyThrow.BadRequest("Transfer-Encoding in an HTTP/1.0 request.");
            }
            // RFC 9112 §6.1: a server MAY reject a message with both, and then MUST close; rejecting removes the ambiguity.
            if (_contentLengthCount > 0)
            {
                ProxyThrow.BadRequest("Both Transfer-Encoding and Content-Length.");
            }
            ValidateTransferEncoding();
            Framing = BodyFraming.Chunked;
        }
        else if (_contentLengthCount > 0)
        {
            if (ContentLength > _limits.MaxRequestBodySize)
            {
                ProxyThrow.Throw(ProxyError.ContentTooLarge, "Request body larger than maxRequestBodySize.");
            }
            // Content-Length: 0 stays a Content-Length framing so the downstream sees the same declaration.
            Framing = BodyFraming.ContentLength;
        }

        // RFC 9110 §9.3.1, §9.3.2: content in GET or HEAD has no defined semantics, and a downstream that ignores it would
        // read it as the next request; §9.3.8: TRACE MUST NOT carry content. The strict reading refuses all three.
        if ((Framing == BodyFraming.Chunked || ContentLength > 0) &&
            Method is RequestMethod.Get or RequestMethod.Head or RequestMethod.Trace)
        {
            ProxyThrow.BadRequest("GET, HEAD and TRACE requests must not carry content.");
        }

        bool close = false, keepAlive = false;
        for (var i = 0; i < HeaderCount; i++)
        {
            switch (_headers[i].Kind)
            {
                case HeaderKind.Connection:
                    ReadConnectionOptions(Value(i), ref close, ref keepAlive);
                    break;
                case HeaderKind.Expect:
                    // RFC 9110 §10.1.1: 100-continue is the only expectation; others get 417. HTTP/1.0 ignores it.
                    if (!Ascii.EqualsIgnoreCase(Value(i), "100-continue"u8))
                    {
                        ProxyThrow.Throw(ProxyError.ExpectationFailed, "Unsupported expectation.");
                    }
                    ExpectContinue = Protocol != ClientProtocol.Http10 && (Framing == BodyFraming.Chunked || ContentLength > 0);
                    break;
            }
        }
        // RFC 9112 §9.3, §9.6: close ends the connection after this exchange; HTTP/1.0 keeps it only when asked to.
        ClientWantsClose = close || (Protocol == ClientProtocol.Http10 && !keepAlive);
        DecideUpgrade();
    }

    // RFC 9112 §6.1, §6.3 rule 4: the final coding must be chunked, applied once; other codings are not implemented here.
    private void ValidateTransferEncoding()
    {
        var state = (Chunked: 0, Other: 0, Empty: 0, ChunkedLast: false);
        for (var i = 0; i < HeaderCount; i++)
        {
            if (_headers[i].Kind != HeaderKind.TransferEncoding)
            {
                continue;
            }
            // Empty elements are seen, not skipped: "chunked, ," or ", chunked" is refused (RFC 9112 §6.3 rule 4's
            // strict reading), as other servers read such lists differently.
            var codings = new ListTokenizer(Value(i), yieldEmpty: true);
            while (codings.TryNext(out var coding))
            {
                var chunked = Ascii.EqualsIgnoreCase(coding, "chunked"u8);
                state.Chunked += chunked ? 1 : 0;
                state.Empty += coding.IsEmpty ? 1 : 0;
                state.Other += chunked || coding.IsEmpty ? 0 : 1;
                state.ChunkedLast = chunked;
            }
        }
        if (!state.ChunkedLast || state.Chunked != 1 || state.Empty != 0)
        {
            ProxyThrow.BadRequest("Transfer-Encoding does not end in a single chunked coding.");
        }
        if (state.Other != 0)
        {
            ProxyThrow.Throw(ProxyError.NotImplemented, "Unsupported transfer coding.");
        }
    }

    // RFC 9110 §7.6.1: Connection lists options for this hop; every field it names is removed before forwarding.
    private void ReadConnectionOptions(ReadOnlySpan<byte> value, ref bool close, ref bool keepAlive)
    {
        var options = new ConnectionOptions(value);
        while (options.TryNextFieldName(out var name))
        {
            _connectionUpgrade |= Ascii.EqualsIgnoreCase(name, "upgrade"u8);
            Nominate(name);
        }
        close |= options.Close;
        keepAlive |= options.KeepAlive;
    }

    private void Nominate(ReadOnlySpan<byte> name)
    {
        for (var i = 0; i < HeaderCount; i++)
        {
            ref var entry = ref _headers[i];
            // Framing, Host and the proxy's own fields are regenerated, so a nomination cannot remove them.
            if (entry.Kind == HeaderKind.Other && Ascii.EqualsIgnoreCase(Name(i), name))
            {
                entry.Kind = HeaderKind.Nominated;
            }
        }
    }

    private void ReleaseBuffers()
    {
        if (_buffer.Length != 0)
        {
            ProxyBuffers.Bytes.Return(_buffer);
            HeaderEntries.Return(_headers);
            _buffer = [];
            _headers = [];
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private int Append(ReadOnlySpan<byte> bytes)
    {
        if (bytes.Length > _capacity - _length)
        {
            ProxyThrow.Throw(ProxyError.HeaderFieldsTooLarge, "Request header fields too large.");
        }
        bytes.CopyTo(_buffer.AsSpan(_length));
        _length += bytes.Length;
        return bytes.Length;
    }
}
