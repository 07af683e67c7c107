namespace LLRP.Http1;

/// <summary>What the proxy does with a request or response field, decided once per field line by its name.</summary>
internal enum HeaderKind : byte
{
    /// <summary>End-to-end: forwarded as received.</summary>
    Other,
    Host,
    ContentLength,
    TransferEncoding,
    Connection,
    /// <summary>Hop-by-hop by RFC 9110 §7.6.1 (Keep-Alive, Proxy-Connection, TE, Upgrade): never forwarded.</summary>
    HopByHop,
    /// <summary>Satisfied by the proxy itself (it sends 100 Continue), so not forwarded.</summary>
    Expect,
    /// <summary>Named by the Connection field: hop-by-hop for this message only.</summary>
    Nominated,
}
