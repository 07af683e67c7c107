namespace LLRP;

/// <summary>
/// What a listener speaks (--protocols): on an https:// listener ALPN chooses among them; on an http:// one,
/// <see cref="Http2"/> alone is HTTP/2 with prior knowledge (h2c, RFC 9113 §3.3), and <see cref="Http1AndHttp2"/> tells
/// the two apart by the HTTP/2 connection preface (RFC 9113 §3.4).
/// </summary>
[Flags]
public enum ListenProtocols
{
    Http1 = 1,
    Http2 = 2,
    Http1AndHttp2 = Http1 | Http2,
}

/// <summary>
/// Which code parses HTTP/1.1 from clients (--frontEnd): LLRP's raw connection handler, or Kestrel's own HTTP/1.1
/// behind the same application as HTTP/2 streams (what Kestrel's HTTP layer costs beside the raw handler).
/// </summary>
public enum FrontEnd
{
    Raw,
    Kestrel,
}
