using LLHttp2.Hpack;

namespace LLHttp2.Connection;

/// <summary>
/// The RFC 9113 §8 checks of one response field block, made while the block is decoded (a handler may not throw,
/// <see cref="IHpackFieldHandler"/>): :status the only pseudo-header (§8.3.2), once, before every regular field, three
/// digits, and none in trailers (§8.1); the field rules requests share (<see cref="Http2FieldRules"/>: no uppercase,
/// no CR, LF or NUL, no connection-specific fields, content-length). The first failure is kept and ends forwarding;
/// the connection resets the stream with PROTOCOL_ERROR after the block (§8.1.1).
/// </summary>
internal struct Http2ResponseFieldChecker : IHpackFieldHandler
{
    private readonly IHttp2ClientConnectionHandler? _sink;
    private readonly int _streamId;
    private readonly bool _trailers;
    private bool _regularSeen;
    private long _contentLength;

    /// <param name="sink">Where valid fields go; null to decode only (a stream already closed: the HPACK state must still follow the block).</param>
    /// <param name="streamId">The stream the block belongs to.</param>
    /// <param name="trailers">The block is the response's trailers (after the final HEADERS).</param>
    public Http2ResponseFieldChecker(IHttp2ClientConnectionHandler? sink, int streamId, bool trailers)
    {
        _sink = sink;
        _streamId = streamId;
        _trailers = trailers;
        _contentLength = -1;
    }

    /// <summary>The first rule broken, null while the block is valid. A literal, so nothing is allocated.</summary>
    public string? Error { get; private set; }

    /// <summary>The :status value, 0 when absent (trailers, or a malformed block).</summary>
    public int Status { get; private set; }

    /// <summary>The content-length field's value, -1 when absent.</summary>
    public readonly long ContentLength => _contentLength;

    public void OnField(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed)
    {
        if (Error is not null)
        {
            return;
        }

        Error = Check(name, value);
        if (Error is null)
        {
            _sink?.OnResponseField(_streamId, name, value, neverIndexed);
        }
    }

    /// <summary>The check that needs the whole block: a response head has :status (§8.3.2).</summary>
    public void Complete()
    {
        if (Error is null && !_trailers && Status == 0)
        {
            Error = "Response without :status (RFC 9113 §8.3.2)";
        }
    }

    private string? Check(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        if (Http2FieldRules.CheckSyntax(name, value) is { } error)
        {
            return error;
        }

        if (name[0] != (byte)':')
        {
            _regularSeen = true;
            return Http2FieldRules.CheckRegular(name, value, ref _contentLength);
        }

        if (_trailers)
        {
            return "Pseudo-header in trailers (RFC 9113 §8.1)";
        }

        if (_regularSeen)
        {
            return "Pseudo-header after a regular field (RFC 9113 §8.3)";
        }

        if (!name.SequenceEqual(":status"u8))
        {
            // §8.3: request pseudo-headers (and unknown ones) in a response are malformed.
            return "Pseudo-header other than :status in a response (RFC 9113 §8.3.2)";
        }

        if (Status != 0)
        {
            return "Duplicate :status (RFC 9113 §8.3.2)";
        }

        // RFC 9110 §15: a three-digit integer; the first digit is the class, 1 to 5 defined, 6 to 9 extensions
        // a recipient treats by class, so only 0 as the first digit is outside the syntax's range (100-999).
        if (value.Length != 3 || value.IndexOfAnyExceptInRange((byte)'0', (byte)'9') >= 0 || value[0] == (byte)'0')
        {
            return "A :status other than three digits (RFC 9110 §15)";
        }

        Status = ((value[0] - '0') * 100) + ((value[1] - '0') * 10) + (value[2] - '0');
        return null;
    }
}
