using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using LLRP.Connections;
using LLRP.Http2;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;

namespace LLRP.KestrelHttp;

/// <summary>
/// Which connections Kestrel's own HTTP layer serves, and its limits: HTTP/2 (ALPN h2 on https://, prior knowledge on
/// http://) and, with --frontEnd kestrel, HTTP/1.1. Every other connection goes to the raw handler unchanged: a listener
/// that speaks HTTP/1.1 only is configured exactly as before.
/// </summary>
internal static class KestrelFrontEnd
{
    /// <summary>The largest frame payload the proxy accepts: 16 KiB, RFC 9113 §6.5.2's initial value and Kestrel's default.</summary>
    internal const int MaxFrameSize = 16 * 1024;

    /// <summary>The HPACK dynamic table the proxy keeps per connection: 4 KiB, RFC 9113 §6.5.2's initial value.</summary>
    internal const int HeaderTableSize = 4096;

    // RFC 9113 §3.4: the connection preface a prior-knowledge HTTP/2 client sends first.
    private static readonly byte[] s_preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"u8.ToArray();

    /// <summary>Whether any listener serves HTTP/2 (ALPN and the routing below are needed, whichever front end serves it).</summary>
    public static bool ServesHttp2(ProxyOptions options) =>
        options.ListenEndPoints.Any(e => (options.ProtocolsOf(e) & ListenProtocols.Http2) != 0);

    /// <summary>Whether any connection goes to Kestrel's HTTP layer (and so <see cref="StreamApplication"/>): --frontEnd kestrel.</summary>
    public static bool IsUsed(ProxyOptions options) => options.FrontEnd == FrontEnd.Kestrel;

    /// <summary>
    /// Kestrel's limits for the connections it serves, mapped from the proxy's options so that one limit has one value.
    /// The request limits are the proxy's own, also checked by <see cref="Http1.RequestHead"/>; the body's size and
    /// time limits are left to the exchange (maxRequestBodySize, downstreamResponseTimeout) as on the raw front end.
    /// HTTP/2 header list size: a HEADERS frame and its CONTINUATION frames together are held to
    /// maxRequestHeadersTotalSize, which bounds a CONTINUATION flood (the CVE-2024-27316 class) by bytes.
    /// </summary>
    public static void Configure(KestrelServerOptions kestrel, ProxyOptions options)
    {
        var limits = kestrel.Limits;
        limits.MaxRequestBodySize = null;
        limits.MinRequestBodyDataRate = null;
        limits.MinResponseDataRate = null;
        limits.KeepAliveTimeout = options.KeepAliveTimeout;
        limits.RequestHeadersTimeout = options.RequestHeadersTimeout;
        limits.MaxRequestLineSize = options.Limits.MaxRequestLineSize;
        limits.MaxRequestHeadersTotalSize = options.Limits.MaxRequestHeadersTotalSize;
        limits.MaxRequestHeaderCount = options.Limits.MaxRequestHeaderCount;
        var http2 = limits.Http2;
        http2.MaxStreamsPerConnection = options.Http2MaxConcurrentStreams;
        http2.HeaderTableSize = HeaderTableSize;
        http2.MaxFrameSize = MaxFrameSize;
        // One field cannot be larger than the whole header section.
        http2.MaxRequestHeaderFieldSize = options.Limits.MaxRequestHeadersTotalSize;
        // The same windows as the proxy's own front end, so that the two rows of the layer table buffer the same.
        http2.InitialConnectionWindowSize = Http2FrontEnd.InitialConnectionWindowSize;
        http2.InitialStreamWindowSize = Http2FrontEnd.InitialStreamWindowSize;
        // Latin-1 both ways: every byte a field may carry (obs-text, RFC 9110 §5.5) maps to one char and back, so the
        // proxy's own checks see the client's bytes and the downstream's fields reach the client as sent.
        kestrel.RequestHeaderEncodingSelector = static _ => Encoding.Latin1;
        kestrel.ResponseHeaderEncodingSelector = static _ => Encoding.Latin1;
    }

    /// <summary>Kestrel's server started with <paramref name="application"/> (registered before the host is built).</summary>
    public static void UseApplication(IServiceCollection services, StreamApplication application)
    {
        var kestrel = services.Last(d => d.ServiceType == typeof(IServer));
        services.Remove(kestrel);
        services.AddSingleton<IServer>(provider => new ApplicationServer(
            (IServer)(kestrel.ImplementationInstance
                ?? kestrel.ImplementationFactory?.Invoke(provider)
                ?? ActivatorUtilities.CreateInstance(provider, kestrel.ImplementationType!)), application));
    }

    /// <summary>The protocols Kestrel offers on the listener (set before its TLS middleware, which advertises them by ALPN).</summary>
    public static HttpProtocols KestrelProtocols(ListenProtocols protocols, bool tls) => protocols switch
    {
        ListenProtocols.Http1 => HttpProtocols.Http1,
        ListenProtocols.Http2 => HttpProtocols.Http2,
        // Without TLS Kestrel serves one protocol: HTTP/2 here, HTTP/1.1 connections go to the raw handler (Route).
        _ => tls ? HttpProtocols.Http1AndHttp2 : HttpProtocols.Http2,
    };

    /// <summary>
    /// The connection middleware of a listener that serves HTTP/2 or Kestrel's front end (after TLS): HTTP/1.1
    /// connections go to the raw handler unless --frontEnd kestrel (ALPN says which on https://; on http:// with
    /// http1,h2 the first bytes do), HTTP/2 ones to <paramref name="rawHttp2"/> (the proxy's own front end) or, with
    /// --frontEnd kestrel, to Kestrel's HTTP layer with their <see cref="StreamConnection"/>.
    /// </summary>
    public static Func<ConnectionDelegate, ConnectionDelegate> Route(ProxyServer server, ListenProtocols protocols, bool tls, Http2FrontEnd? rawHttp2)
    {
        var rawHttp1 = (protocols & ListenProtocols.Http1) != 0 && server.Options.FrontEnd == FrontEnd.Raw;
        var keepAlive = server.Options.KeepAliveTimeout;
        return next => async context =>
        {
            bool http2;
            try
            {
                http2 = !rawHttp1 || (tls ? NegotiatedHttp2(context) : await StartsWithPrefaceAsync(context.Transport.Input, keepAlive));
            }
            catch (OperationCanceledException)
            {
                // Idle past keepAliveTimeout before its first byte: closed without an answer.
                return;
            }
            if (!http2)
            {
                await server.OnConnectionAsync(context);
                return;
            }
            if (rawHttp2 is not null)
            {
                // The proxy's own HTTP/2: it ends its connections itself (ConnectionClose).
                await rawHttp2.OnConnectionAsync(context);
                return;
            }
            context.Features.Set(new StreamConnection(context));
            await next(context);
            // Kestrel's HTTP layer is done (its last response sent, or GOAWAY and the streams in flight): the raw handler
            // ends its connections in its own loop, these end here, the same way.
            await ConnectionClose.EndAsync(context, ConnectionEnding.Close, server);
        };
    }

    private static bool NegotiatedHttp2(ConnectionContext context) =>
        context.Features.Get<Microsoft.AspNetCore.Server.Kestrel.Core.Features.ITlsApplicationProtocolFeature>()?.ApplicationProtocol.Span.SequenceEqual("h2"u8) == true;

    /// <summary>
    /// Whether the client's first bytes are the HTTP/2 preface; nothing is consumed, so whichever front end serves the
    /// connection reads them again. A client that sends nothing within keepAliveTimeout is closed, as the raw handler
    /// would close it.
    /// </summary>
    private static async Task<bool> StartsWithPrefaceAsync(PipeReader input, TimeSpan keepAlive)
    {
        using var timeout = new CancellationTokenSource(keepAlive);
        while (true)
        {
            var result = await input.ReadAsync(timeout.Token);
            var buffer = result.Buffer;
            var length = (int)Math.Min(buffer.Length, s_preface.Length);
            var matches = PrefixMatches(buffer.Slice(0, length));
            if (!matches || length == s_preface.Length || result.IsCompleted)
            {
                input.AdvanceTo(buffer.Start);
                return matches && length == s_preface.Length;
            }
            input.AdvanceTo(buffer.Start, buffer.End);
        }
    }

    private static bool PrefixMatches(ReadOnlySequence<byte> start)
    {
        Span<byte> bytes = stackalloc byte[s_preface.Length];
        start.CopyTo(bytes);
        return bytes[..(int)start.Length].SequenceEqual(s_preface.AsSpan(0, (int)start.Length));
    }
}
