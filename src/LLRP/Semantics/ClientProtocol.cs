namespace LLRP.Semantics;

/// <summary>
/// The protocol a request arrived on. The proxy holds every request to HTTP/1.1's semantics (RFC 9113 §8.3.1 maps an
/// HTTP/2 request to one) and forwards it as such; what differs by protocol is data of this type
/// (<see cref="ClientProtocols"/>) or a rule of the protocol's own front end.
/// </summary>
internal enum ClientProtocol : byte
{
    Http10,
    Http11,
    Http2,
}

/// <summary>What each <see cref="ClientProtocol"/> means for the request forwarded.</summary>
internal static class ClientProtocols
{
    /// <summary>
    /// RFC 9110 §7.6.3: the Via value the forwarded request carries, the received-protocol version the client used and
    /// the proxy's pseudonym.
    /// </summary>
    public static ReadOnlySpan<byte> Via(this ClientProtocol protocol) => protocol switch
    {
        ClientProtocol.Http10 => "1.0 llrp"u8,
        ClientProtocol.Http2 => "2 llrp"u8,
        _ => "1.1 llrp"u8,
    };
}
