namespace LLRP.Http1;

/// <summary>
/// A response whose framing another layer makes: an HTTP/2 stream (the proxy's own HTTP/2 front end, or Kestrel's), or
/// Kestrel's HTTP/1.1 front end. <see cref="ResponseWriter"/> holds the response to the same policy as for a client it
/// frames itself (no hop-by-hop or framing field gets here, RFC 9113 §8.2.2) and hands over what remains; the body goes
/// to the writer bound beside this.
/// </summary>
internal interface IFramedResponse
{
    /// <summary>The final status (RFC 9113 §8.3.2: :status for HTTP/2).</summary>
    void SetStatus(int status);

    /// <summary>One field of the final head, as the downstream sent it (Latin-1 bytes, RFC 9110 §5.5).</summary>
    void AddField(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value);

    /// <summary>The same for a field a client library hands over as strings.</summary>
    void AddField(string name, string value);

    /// <summary>
    /// The downstream switched protocols (a 101) for a request the layer let upgrade (<see cref="Exchanges.Exchange.Upgrading"/>):
    /// in place of the status, the layer's own answer for an open tunnel (HTTP/2: :status 200 on a stream that stays
    /// open, RFC 8441 §5). The fields follow as for any head.
    /// </summary>
    void BeginTunnel();

    /// <summary>The body's length, when the downstream gave one (or 0 for an answer of the proxy's own).</summary>
    void SetContentLength(long length);

    /// <summary>Whether this client can be sent trailer fields after the body.</summary>
    bool TakesTrailers { get; }

    /// <summary>One trailer field, already held to the policy of trailers; only when <see cref="TakesTrailers"/>.</summary>
    void AddTrailer(string name, string value);
}
