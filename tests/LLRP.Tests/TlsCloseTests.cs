using LLRP.Tests.Infrastructure;

namespace LLRP.Tests;

/// <summary>
/// Every TLS connection the proxy closes itself ends with a close_notify before the FIN (RFC 8446 §6.1), on every
/// close path: after `Connection: close`, an error answer, an HTTP/1.0 response, the keep-alive timeout, a stop; for
/// the raw front end with every variant, behind an HTTP/1.1-only listener, with `--frontEnd kestrel`, and for HTTP/2
/// after GOAWAY. OpenSSL's client is the peer (<see cref="OpenSslClient"/>): .NET's SslStream cannot tell the two ends
/// apart.
/// </summary>
public sealed class TlsCloseTests(TlsClosingProxies farm) : IClassFixture<TlsClosingProxies>
{
    public static readonly string[] FrontEnds = [.. Variants.All.Select(v => v.Name), TlsClosingProxies.Http1Only, TlsClosingProxies.Kestrel];

    public static TheoryData<string, string> EveryClosePath()
    {
        var data = new TheoryData<string, string>();
        foreach (var proxy in FrontEnds)
        {
            foreach (var path in ClosePaths.Keys)
            {
                data.Add(proxy, path);
            }
        }
        return data;
    }

    // Each close path: the request, and the status line that must come before the close.
    private static readonly Dictionary<string, (string Request, string Status)> ClosePaths = new()
    {
        ["Connection: close"] = ("GET /close HTTP/1.1\r\nHost: tls.example\r\nConnection: close\r\n\r\n", " 200 "),
        ["400 for Content-Length: x"] = ("POST /bad HTTP/1.1\r\nHost: tls.example\r\nContent-Length: x\r\n\r\n", " 400 "),
        ["HTTP/1.0"] = ("GET /old HTTP/1.0\r\nHost: tls.example\r\n\r\n", " 200 "),
        ["keep-alive timeout"] = ("GET /idle HTTP/1.1\r\nHost: tls.example\r\n\r\n", " 200 "),
    };

    [Theory]
    [MemberData(nameof(EveryClosePath))]
    public async Task The_proxy_sends_close_notify_before_it_closes(string proxy, string path)
    {
        var p = await farm.GetAsync(proxy);
        var (request, status) = ClosePaths[path];

        await using var client = await OpenSslClient.StartAsync(p.Url.Port, request);
        var ending = await client.WaitForEndAsync();

        Assert.Contains(status, ending.Output, StringComparison.Ordinal);
        Assert.True(ending.IsCloseNotify, $"{path}: {ending}");
    }

    public static TheoryData<string> EveryFrontEnd()
    {
        var data = new TheoryData<string>();
        foreach (var proxy in FrontEnds)
        {
            data.Add(proxy);
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(EveryFrontEnd))]
    public async Task A_stopping_proxy_sends_close_notify_to_its_idle_connections(string proxy)
    {
        await using var client = await StopWhileConnectedAsync(proxy, "GET /then-stop HTTP/1.1\r\nHost: tls.example\r\n\r\n", "http/1.1", " 200 ");
        var ending = await client.WaitForEndAsync();

        Assert.True(ending.IsCloseNotify, $"stop: {ending}");
    }

    // RFC 9113 §3.4: the preface, then an empty SETTINGS frame (length 0, type 4, no flags, stream 0).
    private const string Http2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0";

    // Both HTTP/2 front ends: the proxy's own (the default) and Kestrel's.
    public static TheoryData<string> Http2FrontEnds() => new("llhttp", TlsClosingProxies.Kestrel);

    [Theory]
    [MemberData(nameof(Http2FrontEnds))]
    public async Task An_http2_connection_closed_after_goaway_ends_with_close_notify(string proxy)
    {
        // Idle past keepAliveTimeout: the front end sends GOAWAY and ends the connection.
        var p = await farm.GetAsync(proxy);

        await using var client = await OpenSslClient.StartAsync(p.Url.Port, Http2Preface, alpn: "h2");
        var ending = await client.WaitForEndAsync();

        Assert.True(ending.IsCloseNotify, $"h2 after GOAWAY: {ending}");
    }

    [Theory]
    [MemberData(nameof(Http2FrontEnds))]
    public async Task A_stopping_proxy_sends_close_notify_after_goaway_on_http2(string proxy)
    {
        await using var client = await StopWhileConnectedAsync(proxy, Http2Preface, "h2", expected: null);
        var ending = await client.WaitForEndAsync();

        Assert.True(ending.IsCloseNotify, $"h2 stop: {ending}");
    }

    // A proxy of its own with a long keepAliveTimeout, so that only the stop closes the connection.
    private static async Task<OpenSslClient> StopWhileConnectedAsync(string proxy, string request, string alpn, string? expected)
    {
        var p = await TlsClosingProxies.StartAsync(proxy, ["--keepAliveTimeout", "60"]);
        OpenSslClient? client = null;
        try
        {
            client = await OpenSslClient.StartAsync(p.Url.Port, request, alpn);
            // The response came (HTTP/1.1), or the handshake ended (HTTP/2): the connection is established and idle.
            Assert.True(await client.WaitForOutputAsync(expected ?? "Finished"), $"no {expected ?? "handshake"}: {client.Output}");
            if (expected is null)
            {
                // Not a timing assertion: time for the preface to reach the HTTP/2 front end before the stop.
                await Task.Delay(300);
            }
            return client;
        }
        catch
        {
            if (client is not null)
            {
                await client.DisposeAsync();
            }
            throw;
        }
        finally
        {
            await p.DisposeAsync();
        }
    }
}

/// <summary>
/// The proxies <see cref="TlsCloseTests"/> closes connections of, on https:// with a 3-second keepAliveTimeout: every
/// variant behind the default listener (HTTP/1.1 and h2 by ALPN), llhttp behind an HTTP/1.1-only listener (the raw
/// handler with nothing in front of it), and llhttp with --frontEnd kestrel. Three seconds, not one: the timeout also
/// covers the wait for the first request, which OpenSSL's client sends only after its own start and handshake, and
/// that can take more than a second on a machine loaded by the whole suite.
/// </summary>
public sealed class TlsClosingProxies : ProxyFarm
{
    public const string Http1Only = "llhttp-http1-only";
    public const string Kestrel = "llhttp-frontend-kestrel";

    protected override Task<ProxyUnderTest> StartAsync(string name) => StartAsync(name, ["--keepAliveTimeout", "3"]);

    public static Task<ProxyUnderTest> StartAsync(string name, string[] options) => name switch
    {
        Http1Only => ProxyUnderTest.StartAsync(Variants.Get("llhttp"), [.. options, "--protocols", "http1"], unreachableDownstream: false, tls: true),
        Kestrel => ProxyUnderTest.StartAsync(Variants.Get("llhttp"), [.. options, "--frontEnd", "kestrel"], unreachableDownstream: false, tls: true),
        _ => ProxyUnderTest.StartAsync(Variants.Get(name), options, unreachableDownstream: false, tls: true),
    };
}
