using System.Net.WebSockets;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Logging;

namespace LLRP.Tests.Infrastructure;

/// <summary>
/// A test-only WebSocket origin: Kestrel over HTTP/1.1 (cleartext, or TLS with the suite's localhost certificate) with
/// ASP.NET Core's WebSockets middleware.
/// /echo sends every frame back as it came (type, payload and end-of-message flag, so a fragmented message comes back
/// fragmented) and answers a close with the same code and description; /close?code=N closes from the server's side
/// with N; /die?id=X sends the first fragment of a binary message and aborts its connection once the test calls
/// Die(X) (an origin going away mid-message). Not src/Downstream: that origin is one terminal handler for the benchmarks.
/// </summary>
public sealed class WebSocketOrigin : IAsyncDisposable
{
    private readonly WebApplication _app;

    private WebSocketOrigin(WebApplication app, Uri url)
    {
        _app = app;
        Url = url;
    }

    /// <summary>http:// or https://127.0.0.1:port.</summary>
    public Uri Url { get; }

    private readonly System.Collections.Concurrent.ConcurrentDictionary<string, TaskCompletionSource> _dieSignals = new();

    /// <summary>Lets the /die?id=<paramref name="id"/> connection go (aborted, a reset), its fragment received.</summary>
    public void Die(string id) => DieSignal(id).TrySetResult();

    private TaskCompletionSource DieSignal(string id) => _dieSignals.GetOrAdd(id, static _ => new(TaskCreationOptions.RunContinuationsAsynchronously));

    /// <summary>Close codes the origin received from clients, in order.</summary>
    public System.Collections.Concurrent.ConcurrentQueue<int> ReceivedCloseCodes { get; } = new();

    public static async Task<WebSocketOrigin> StartAsync(bool tls)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.UseKestrel(k =>
        {
            k.AddServerHeader = false;
            k.Listen(System.Net.IPAddress.Loopback, 0, listen =>
            {
                listen.Protocols = HttpProtocols.Http1;
                if (tls)
                {
                    listen.UseHttps(TestCertificates.Localhost);
                }
            });
        });
        var app = builder.Build();
        WebSocketOrigin? origin = null;
        // No keep-alive pings from the origin: the idle-timeout tests need a tunnel that carries nothing.
        app.UseWebSockets(new WebSocketOptions { KeepAliveInterval = TimeSpan.Zero });
        app.Map("/echo", async context =>
        {
            using var socket = await context.WebSockets.AcceptWebSocketAsync();
            var buffer = new byte[64 * 1024];
            while (true)
            {
                var result = await socket.ReceiveAsync(buffer, context.RequestAborted);
                if (result.MessageType == WebSocketMessageType.Close)
                {
                    origin!.ReceivedCloseCodes.Enqueue((int)(result.CloseStatus ?? 0));
                    await socket.CloseOutputAsync(result.CloseStatus ?? WebSocketCloseStatus.Empty, result.CloseStatusDescription, context.RequestAborted);
                    return;
                }
                await socket.SendAsync(buffer.AsMemory(0, result.Count), result.MessageType, result.EndOfMessage, context.RequestAborted);
            }
        });
        app.Map("/close", async context =>
        {
            using var socket = await context.WebSockets.AcceptWebSocketAsync();
            var code = (WebSocketCloseStatus)int.Parse(context.Request.Query["code"].ToString(), System.Globalization.CultureInfo.InvariantCulture);
            await socket.CloseOutputAsync(code, "server closes", context.RequestAborted);
            var buffer = new byte[1024];
            // The client's close answer completes the handshake.
            while ((await socket.ReceiveAsync(buffer, context.RequestAborted)).MessageType != WebSocketMessageType.Close)
            {
            }
        });
        app.Map("/die", async context =>
        {
            var socket = await context.WebSockets.AcceptWebSocketAsync();
            await socket.SendAsync(Wire.Body(1000), WebSocketMessageType.Binary, endOfMessage: false, context.RequestAborted);
            // Aborted once the test has the fragment (Die), not after a pause: a reset that overtook the proxy's read
            // of the fragment would lose it, and a pause long enough on a loaded machine is no pause at all.
            await origin!.DieSignal(context.Request.Query["id"].ToString()).Task.WaitAsync(Wire.Cap);
            context.Abort();
        });
        await app.StartAsync(Wire.Deadline(TimeSpan.FromSeconds(30)));
        var address = new Uri(app.Urls.First());
        origin = new WebSocketOrigin(app, new Uri($"{(tls ? "https" : "http")}://127.0.0.1:{address.Port}"));
        return origin;
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            await _app.StopAsync(Wire.Deadline());
        }
        finally
        {
            await _app.DisposeAsync();
        }
    }
}

/// <summary>
/// A proxy in-process in front of a <see cref="WebSocketOrigin"/>: cleartext or TLS on the client's side (an https://
/// listener with the suite's certificate), and cleartext or TLS to the origin (trusting the suite's CA); the client speaks
/// HTTP/1.1 (Upgrade) or HTTP/2 (extended CONNECT, RFC 8441: ALPN h2 over TLS, prior-knowledge h2c in cleartext), the
/// origin HTTP/1.1.
/// </summary>
public sealed class WebSocketProxy : IAsyncDisposable
{
    private readonly WebApplication _app;
    private readonly System.Collections.Concurrent.ConcurrentBag<HttpMessageInvoker> _invokers = [];

    private WebSocketProxy(WebApplication app, WebSocketOrigin origin, Uri url, bool tls, bool http2)
    {
        _app = app;
        Origin = origin;
        Url = url;
        Tls = tls;
        Http2 = http2;
    }

    public WebSocketOrigin Origin { get; }

    public Uri Url { get; }

    public bool Tls { get; }

    /// <summary>Clients connect over HTTP/2 (RFC 8441) rather than with an HTTP/1.1 Upgrade.</summary>
    public bool Http2 { get; }

    /// <summary>The proxy's counters (the self-report's source).</summary>
    internal LLRP.Connections.ProxyServer Server => Microsoft.Extensions.DependencyInjection.ServiceProviderServiceExtensions.GetRequiredService<LLRP.Connections.ProxyServer>(_app.Services);

    /// <summary>Starts <paramref name="variant"/> (a name of <see cref="Variants"/>: its --client and options).</summary>
    public static Task<WebSocketProxy> StartAsync(string variant, bool tls, bool downstreamTls, params string[] options) =>
        StartAsync(variant, tls, downstreamTls, http2: false, options);

    /// <summary>The same, the clients speaking HTTP/2 when <paramref name="http2"/> (h2c with prior knowledge on http://).</summary>
    public static async Task<WebSocketProxy> StartAsync(string variant, bool tls, bool downstreamTls, bool http2, params string[] options)
    {
        var origin = await WebSocketOrigin.StartAsync(downstreamTls);
        try
        {
            // An https:// listener offers h2 and http/1.1 by ALPN; an http:// one is told to speak h2 alone.
            string[] listen = tls
                ? ["--urls", "https://127.0.0.1:0", "--certificate", TestCertificates.LocalhostPem, "--certificateKey", TestCertificates.LocalhostKeyPem]
                : http2 ? ["--urls", "http://127.0.0.1:0", "--protocols", "h2"] : ["--urls", "http://127.0.0.1:0"];
            string[] trust = downstreamTls ? ["--downstreamTrust", TestCertificates.AuthorityPem] : [];
            var app = LLRP.Hosting.ProxyHost.Build([.. listen, .. trust, "--downstream", origin.Url.GetLeftPart(UriPartial.Authority), .. Variants.Get(variant).Arguments, .. options]);
            await app.StartAsync(Wire.Deadline(TimeSpan.FromSeconds(30)));
            return new WebSocketProxy(app, origin, new Uri(LLRP.Hosting.ProxyHost.Addresses(app).First()), tls, http2);
        }
        catch
        {
            await origin.DisposeAsync();
            throw;
        }
    }

    /// <summary>
    /// A ClientWebSocket connected through the proxy to <paramref name="path"/> (ws:// or wss:// trusting the suite's
    /// CA), within <paramref name="deadline"/> or else <see cref="Wire.Cap"/>; <paramref name="configure"/> may change the
    /// client's options (keep-alive pings are off unless it does).
    /// </summary>
    public async Task<ClientWebSocket> ConnectAsync(string path, CancellationToken deadline = default, Action<ClientWebSocketOptions>? configure = null)
    {
        var socket = new ClientWebSocket();
        socket.Options.KeepAliveInterval = TimeSpan.Zero;
        if (Http2)
        {
            // Exactly HTTP/2: a fallback to HTTP/1.1 would pass the test without extended CONNECT.
            socket.Options.HttpVersion = System.Net.HttpVersion.Version20;
            socket.Options.HttpVersionPolicy = HttpVersionPolicy.RequestVersionExact;
        }
        configure?.Invoke(socket.Options);
        var uri = new Uri($"{(Tls ? "wss" : "ws")}://localhost:{Url.Port}{path}");
        socket.Options.CollectHttpResponseDetails = true;
        // Kept until the proxy is disposed, not disposed here: over HTTP/2 the WebSocket is a stream of the handler's
        // pooled connection, which disposing the handler would end under it (over HTTP/1.1 the upgraded connection has
        // left the pool, so either way works).
        var invoker = new HttpMessageInvoker(TestCertificates.Handler());
        _invokers.Add(invoker);
        await socket.ConnectAsync(uri, invoker, deadline.CanBeCanceled ? deadline : Wire.Deadline());
        // The handshake's answer says which protocol carried it: 200 over HTTP/2 (RFC 8441 §5), 101 over HTTP/1.1.
        var expected = Http2 ? System.Net.HttpStatusCode.OK : System.Net.HttpStatusCode.SwitchingProtocols;
        if (socket.HttpStatusCode != expected)
        {
            throw new InvalidOperationException($"the handshake was answered {socket.HttpStatusCode}, not {expected}");
        }
        socket.HttpResponseHeaders = null;
        return socket;
    }

    /// <summary>Stops the proxy (its origin stays up): a graceful stop, bounded by the proxy's shutdownTimeout.</summary>
    public Task StopProxyAsync() => _app.StopAsync(Wire.Deadline());

    public async ValueTask DisposeAsync()
    {
        try
        {
            await _app.StopAsync(Wire.Deadline());
        }
        finally
        {
            await _app.DisposeAsync();
            await Origin.DisposeAsync();
            foreach (var invoker in _invokers)
            {
                invoker.Dispose();
            }
        }
    }
}
