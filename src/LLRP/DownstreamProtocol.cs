namespace LLRP;

/// <summary>
/// What the forwarded requests speak to the downstreams (--downstreamProtocol): HTTP/1.1 to http:// or https://
/// downstreams, HTTP/2 over TLS with ALPN h2 to https:// ones (RFC 9113 §3.2), or HTTP/2 in cleartext with prior knowledge
/// (h2c, RFC 9113 §3.3) to http:// ones. Only the HttpClient-based variants have an HTTP/2 client.
/// </summary>
public enum DownstreamProtocol
{
    Http1,
    H2,
    H2c,
}
