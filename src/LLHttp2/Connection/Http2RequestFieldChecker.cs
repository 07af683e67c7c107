using LLHttp2.Hpack;

namespace LLHttp2.Connection;

/// <summary>
/// The RFC 9113 §8 checks of one request field block that belong to the protocol, made while the block is decoded
/// (a handler may not throw, <see cref="IHpackFieldHandler"/>): pseudo-headers (§8.3.1: known, once each, before
/// every regular field, none in trailers; CONNECT without :scheme and :path, §8.5; an extended CONNECT's :protocol,
/// RFC 8441 §4, only with CONNECT and then with :scheme, :path and :authority), field names without uppercase
/// (§8.2.1) and without CR, LF or NUL in names or values, no connection-specific fields (§8.2.2), TE only
/// "trailers", and content-length (digits, repeated only with the same value, §8.1.1). The first failure is kept
/// and ends forwarding; the connection resets the stream with PROTOCOL_ERROR after the block (§8.1.1).
/// </summary>
internal struct Http2RequestFieldChecker : IHpackFieldHandler
{
    private const byte MethodSeen = 1, SchemeSeen = 2, PathSeen = 4, AuthoritySeen = 8, ProtocolSeen = 16;

    private readonly IHttp2ServerConnectionHandler? _sink;
    private readonly int _streamId;
    private readonly bool _trailers;
    private readonly bool _extendedConnect;
    private byte _pseudo;
    private bool _regularSeen;
    private bool _isConnect;
    private bool _pathEmpty;

    /// <param name="sink">Where valid fields go; null to decode only (a refused stream: HPACK state must still follow the block).</param>
    /// <param name="streamId">The stream the block belongs to.</param>
    /// <param name="trailers">The block is the request's trailers.</param>
    /// <param name="extendedConnect">SETTINGS_ENABLE_CONNECT_PROTOCOL was advertised: :protocol is known (RFC 8441 §4).</param>
    public Http2RequestFieldChecker(IHttp2ServerConnectionHandler? sink, int streamId, bool trailers, bool extendedConnect)
    {
        _sink = sink;
        _streamId = streamId;
        _trailers = trailers;
        _extendedConnect = extendedConnect;
        ContentLength = -1;
    }

    /// <summary>The first rule broken, null while the block is valid. A literal, so nothing is allocated.</summary>
    public string? Error { get; private set; }

    /// <summary>The content-length field's value, -1 when absent.</summary>
    public long ContentLength { get; private set; }

    public void OnField(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed)
    {
        if (Error is not null)
        {
            return;
        }

        Error = Check(name, value);
        if (Error is null)
        {
            _sink?.OnField(_streamId, name, value, neverIndexed);
        }
    }

    /// <summary>The checks that need the whole block: the pseudo-headers a request must have (§8.3.1, §8.5).</summary>
    public void Complete()
    {
        if (Error is not null || _trailers)
        {
            return;
        }

        if ((_pseudo & ProtocolSeen) != 0)
        {
            // RFC 8441 §4: :protocol only on CONNECT, and then the target is a URI as for other requests: :scheme and
            // :path (non-empty, RFC 9113 §8.3.1) are required; :authority is required here too, as the tunnel's host.
            if (!_isConnect)
            {
                Error = ":protocol on a request other than CONNECT (RFC 8441 §4)";
            }
            else if ((_pseudo & (SchemeSeen | PathSeen | AuthoritySeen)) != (SchemeSeen | PathSeen | AuthoritySeen))
            {
                Error = "Extended CONNECT without :scheme, :path or :authority (RFC 8441 §4)";
            }
            else if (_pathEmpty)
            {
                Error = "Empty :path (RFC 9113 §8.3.1)";
            }
        }
        else if (_isConnect)
        {
            if ((_pseudo & AuthoritySeen) == 0 || (_pseudo & (SchemeSeen | PathSeen)) != 0)
            {
                Error = "CONNECT request without :authority or with :scheme or :path (RFC 9113 §8.5)";
            }
        }
        else if ((_pseudo & (MethodSeen | SchemeSeen | PathSeen)) != (MethodSeen | SchemeSeen | PathSeen))
        {
            Error = "Request without :method, :scheme or :path (RFC 9113 §8.3.1)";
        }
        else if (_pathEmpty)
        {
            Error = "Empty :path (RFC 9113 §8.3.1)";
        }
    }

    private string? Check(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        if (Http2FieldRules.CheckSyntax(name, value) is { } error)
        {
            return error;
        }

        if (name[0] == (byte)':')
        {
            return CheckPseudo(name, value);
        }

        _regularSeen = true;
        if (name.Length == 2 && name.SequenceEqual("te"u8))
        {
            return value.SequenceEqual("trailers"u8) ? null : "TE other than \"trailers\" (RFC 9113 §8.2.2)";
        }

        long contentLength = ContentLength;
        error = Http2FieldRules.CheckRegular(name, value, ref contentLength);
        ContentLength = contentLength;
        return error;
    }

    private string? CheckPseudo(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        if (_trailers)
        {
            return "Pseudo-header in trailers (RFC 9113 §8.1)";
        }

        if (_regularSeen)
        {
            return "Pseudo-header after a regular field (RFC 9113 §8.3)";
        }

        byte bit;
        if (name.SequenceEqual(":method"u8))
        {
            bit = MethodSeen;
            _isConnect = value.SequenceEqual("CONNECT"u8);
        }
        else if (name.SequenceEqual(":scheme"u8))
        {
            bit = SchemeSeen;
        }
        else if (name.SequenceEqual(":path"u8))
        {
            bit = PathSeen;
            _pathEmpty = value.IsEmpty;
        }
        else if (name.SequenceEqual(":authority"u8))
        {
            bit = AuthoritySeen;
        }
        else if (_extendedConnect && name.SequenceEqual(":protocol"u8))
        {
            bit = ProtocolSeen;
        }
        else
        {
            // :status is a response's; :protocol is known only once SETTINGS_ENABLE_CONNECT_PROTOCOL was sent (RFC 8441 §3).
            return "Unknown or response pseudo-header (RFC 9113 §8.3)";
        }

        if ((_pseudo & bit) != 0)
        {
            return "Duplicate pseudo-header (RFC 9113 §8.3.1)";
        }

        _pseudo |= bit;
        return null;
    }
}
