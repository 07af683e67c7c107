using System.Collections.Concurrent;
using LLHttp2.Connection;
using LLRP.Connections;
using Microsoft.AspNetCore.Connections;

namespace LLRP.Http2;

/// <summary>
/// The proxy's own HTTP/2 front end (the default, --frontEnd raw): connections that negotiated h2 by ALPN, or began with
/// the prior-knowledge preface on http:// (RFC 9113 §3.3, §3.4), are served by <see cref="Http2FrontEndConnection"/> on
/// LLHttp2's codec instead of Kestrel's HTTP/2 layer. One per process: the codec's settings from the proxy's options and
/// the pool of stream slots every connection lends from.
/// </summary>
internal sealed class Http2FrontEnd : IDisposable
{
    /// <summary>
    /// HTTP/2 flow control (RFC 9113 §6.9): the receive windows the proxy offers a client for the whole connection and for
    /// each stream, Kestrel's defaults (1 MiB and 768 KiB), so that both front ends buffer the same: large enough that an
    /// upload is not held to a round trip per 64 KiB (the RFC's initial window), small enough that 100 streams of a
    /// connection buffer at most the connection's.
    /// </summary>
    internal const int InitialConnectionWindowSize = 1024 * 1024;

    /// <summary>See <see cref="InitialConnectionWindowSize"/>.</summary>
    internal const int InitialStreamWindowSize = 768 * 1024;

    private readonly ProxyServer _server;
    private readonly IdleSlots<Http2FrontEndStream> _idle;

    public Http2FrontEnd(ProxyServer server)
    {
        _server = server;
        var options = server.Options;
        CodecOptions = new Http2ServerConnectionOptions
        {
            MaxConcurrentStreams = options.Http2MaxConcurrentStreams,
            InitialStreamWindowSize = InitialStreamWindowSize,
            ConnectionWindowSize = InitialConnectionWindowSize,
            // A HEADERS frame and its CONTINUATION frames together are held to maxRequestHeadersTotalSize, as a request
            // head over HTTP/1.1 is, which bounds a CONTINUATION flood (the CVE-2024-27316 class) and an HPACK bomb by bytes.
            MaxHeaderListSize = options.Limits.MaxRequestHeadersTotalSize,
        };
        _idle = new IdleSlots<Http2FrontEndStream>(server);
    }

    /// <summary>The codec's settings and limits (the stream and flood limits are LLHttp2's documented defaults).</summary>
    public Http2ServerConnectionOptions CodecOptions { get; }

    /// <summary>Serves one connection until its end (the routing middleware calls it after TLS and ALPN).</summary>
    public Task OnConnectionAsync(ConnectionContext context) => new Http2FrontEndConnection(this, _server, context).RunAsync();

    /// <summary>A slot for a new stream: an idle one, or a new one with its own forwarder.</summary>
    public Http2FrontEndStream Rent() => _idle.TryRent(out var slot) ? slot : new Http2FrontEndStream(this, _server);

    /// <summary>A slot whose stream ended: kept for the next unless it failed, the pool is full or the proxy is stopping.</summary>
    public void Return(Http2FrontEndStream slot) => _idle.Return(slot);

    public void Dispose() => _idle.Dispose();
}
