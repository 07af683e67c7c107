using System.Net;
using System.Net.Http.Headers;
using LLRP.Tests.Infrastructure;

namespace LLRP.Tests;

/// <summary>
/// HTTP/2 from clients (Kestrel's HTTP/2 behind the proxy's application): over TLS with ALPN and as prior-knowledge h2c,
/// each stream forwarded as an HTTP/1.1 exchange through every variant, bodies byte for byte both ways; the h2-to-h1
/// smuggling classics refused and never forwarded; rapid reset and CONTINUATION floods end the connection. The HTTP/2
/// tests run through both HTTP/2 front ends: the proxy's own (--frontEnd raw, the default) and Kestrel's (--frontEnd
/// kestrel). Also the other front end Kestrel's HTTP layer provides: its HTTP/1.1 (--frontEnd kestrel).
/// </summary>
public sealed class Http2Tests
{
    /// <summary>The HTTP/2 front ends: the proxy's own on LLHttp2 (the default) and Kestrel's.</summary>
    private static readonly string[] FrontEnds = ["raw", "kestrel"];

    /// <summary>
    /// The forwarding clients, each a variant of its own (TLS and the socket engine are rows of their own here), through
    /// each HTTP/2 front end.
    /// </summary>
    public static TheoryData<string, bool, string> ClientsOverTlsAndCleartext()
    {
        var data = new TheoryData<string, bool, string>();
        foreach (var client in new[] { "llhttp", "httpclient", "httpclient-httpcontext", "yarp" })
        {
            foreach (var frontEnd in FrontEnds)
            {
                data.Add(client, true, frontEnd);
                data.Add(client, false, frontEnd);
            }
        }
        return data;
    }

    public static TheoryData<string> EachFrontEnd() => [.. FrontEnds];

    private static Task<ProxyUnderTest> StartAsync(string client, bool tls, string frontEnd, params string[] options) =>
        ProxyUnderTest.StartAsync(Variants.Get(client), ["--frontEnd", frontEnd, .. tls ? options : ["--protocols", "h2", .. options]],
            unreachableDownstream: false, tls: tls);

    private static HttpClient Client(Version version) =>
        new(new SocketsHttpHandler
        {
            UseProxy = false,
            SslOptions = { RemoteCertificateValidationCallback = (_, _, _, _) => true },
        })
        {
            DefaultRequestVersion = version,
            DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact,
            Timeout = Wire.Cap,
        };

    private static DownstreamReply Echo(RecordedRequest request) =>
        new() { Bytes = [.. Wire.Bytes($"HTTP/1.1 200 OK\r\nContent-Length: {request.Body.Length}\r\nX-Origin: echo\r\n\r\n"), .. request.Body] };

    [Theory]
    [MemberData(nameof(ClientsOverTlsAndCleartext))]
    public async Task A_stream_is_forwarded_as_an_http11_request_with_the_proxy_fields(string client, bool tls, string frontEnd)
    {
        await using var proxy = await StartAsync(client, tls, frontEnd);
        using var http = Client(HttpVersion.Version20);

        using var response = await http.GetAsync(new Uri(proxy.Url, "/h2/get?q=1"));

        Assert.Equal(HttpVersion.Version20, response.Version);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("ok", await response.Content.ReadAsStringAsync());
        Assert.Equal(["1.1 llrp"], response.Headers.Via.Select(v => $"{v.ProtocolVersion} {v.ReceivedBy}"));
        var forwarded = Assert.Single(await proxy.Downstream.WaitForForwardedAsync(1));
        Assert.Equal("GET /h2/get?q=1 HTTP/1.1", forwarded.RequestLine);
        // RFC 9113 §8.3.1: :authority becomes Host.
        Assert.Equal([$"127.0.0.1:{proxy.Url.Port}"], forwarded.Values("Host"));
        Assert.Equal(["2 llrp"], forwarded.Values("Via"));
        Assert.Equal(["127.0.0.1"], forwarded.Values("X-Forwarded-For"));
        Assert.Equal(tls ? ["https"] : [], forwarded.Values("X-Forwarded-Proto"));
        Assert.Equal(Framing.None, forwarded.Framing);
        Assert.Empty(forwarded.Violations);
    }

    [Theory]
    [MemberData(nameof(ClientsOverTlsAndCleartext))]
    public async Task Bodies_are_byte_identical_both_ways_with_and_without_content_length(string client, bool tls, string frontEnd)
    {
        await using var proxy = await StartAsync(client, tls, frontEnd);
        proxy.Downstream.Responder = Echo;
        using var http = Client(HttpVersion.Version20);
        var body = Wire.Body(300_000);

        using var sized = await http.PostAsync(new Uri(proxy.Url, "/sized"), new ByteArrayContent(body));
        // A stream without Content-Length: DATA frames until END_STREAM, forwarded chunked.
        using var unsized = await http.PostAsync(new Uri(proxy.Url, "/unsized"), new StreamContent(new NonSeekable(body)));

        Assert.Equal(HttpStatusCode.OK, sized.StatusCode);
        Assert.Equal(body, await sized.Content.ReadAsByteArrayAsync());
        Assert.Equal(HttpStatusCode.OK, unsized.StatusCode);
        Assert.Equal(body, await unsized.Content.ReadAsByteArrayAsync());
        var forwarded = await proxy.Downstream.WaitForForwardedAsync(2);
        Assert.Equal(2, forwarded.Count);
        Assert.All(forwarded, f => Assert.Equal(body, f.Body));
        Assert.Equal(Framing.ContentLength, forwarded.Single(f => f.Target == "/sized").Framing);
        Assert.Equal(Framing.Chunked, forwarded.Single(f => f.Target == "/unsized").Framing);
    }

    [Theory]
    [MemberData(nameof(ClientsOverTlsAndCleartext))]
    public async Task Concurrent_streams_on_one_connection_each_get_their_own_response(string client, bool tls, string frontEnd)
    {
        await using var proxy = await StartAsync(client, tls, frontEnd);
        proxy.Downstream.Responder = r => DownstreamReply.Ok(r.Target);
        using var http = Client(HttpVersion.Version20);

        var answers = await Task.WhenAll(Enumerable.Range(0, 50).Select(i => http.GetStringAsync(new Uri(proxy.Url, $"/stream/{i}"))));

        Assert.Equal(Enumerable.Range(0, 50).Select(i => $"/stream/{i}"), answers);
    }

    [Theory]
    [InlineData("llhttp", "raw")]
    [InlineData("llhttp", "kestrel")]
    [InlineData("yarp", "raw")]
    [InlineData("yarp", "kestrel")]
    public async Task A_response_without_content_length_and_hop_by_hop_fields_reaches_the_client_without_them(string client, string frontEnd)
    {
        await using var proxy = await StartAsync(client, tls: false, frontEnd);
        proxy.Downstream.Responder = _ => DownstreamReply.Raw(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close, X-Hop\r\nX-Hop: 1\r\nKeep-Alive: timeout=5\r\nUpgrade: h2c\r\nX-Kept: yes\r\n\r\n" +
            "5\r\nhello\r\n0\r\n\r\n", closeAfter: true);
        using var http = Client(HttpVersion.Version20);

        using var response = await http.GetAsync(new Uri(proxy.Url, "/hop"));

        Assert.Equal("hello", await response.Content.ReadAsStringAsync());
        Assert.Equal(["yes"], response.Headers.GetValues("X-Kept"));
        foreach (var name in new[] { "Connection", "X-Hop", "Keep-Alive", "Upgrade", "Transfer-Encoding" })
        {
            Assert.False(response.Headers.Contains(name), name);
        }
    }

    // With --frontEnd kestrel, HTTP/1.1 is Kestrel's too (the test name's raw handler is the default front end's).
    [Theory]
    [InlineData("http1,h2", "raw")]
    [InlineData("h2", "raw")]
    [InlineData("http1,h2", "kestrel")]
    [InlineData("h2", "kestrel")]
    public async Task Https_listeners_offer_h2_by_alpn_and_http11_stays_on_the_raw_handler(string protocols, string frontEnd)
    {
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get("llhttp"), ["--protocols", protocols, "--frontEnd", frontEnd],
            unreachableDownstream: false, tls: true);
        using var h2 = Client(HttpVersion.Version20);
        using var h1 = Client(HttpVersion.Version11);

        using var viaH2 = await h2.GetAsync(new Uri(proxy.Url, "/alpn"));
        Assert.Equal(HttpVersion.Version20, viaH2.Version);
        if (protocols == "h2")
        {
            await Assert.ThrowsAsync<HttpRequestException>(() => h1.GetAsync(new Uri(proxy.Url, "/alpn")));
            return;
        }
        using var viaH1 = await h1.GetAsync(new Uri(proxy.Url, "/alpn"));
        Assert.Equal(HttpVersion.Version11, viaH1.Version);
        Assert.Equal(HttpStatusCode.OK, viaH1.StatusCode);
        Assert.Equal(["1.1 llrp", "2 llrp"], (await proxy.Downstream.WaitForForwardedAsync(2)).Select(f => f.Values("Via").Single()).Order());
    }

    [Fact]
    public async Task A_cleartext_listener_with_both_protocols_tells_them_apart_by_the_preface()
    {
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get("llhttp"), ["--protocols", "http1,h2"], unreachableDownstream: false);
        using var h2 = Client(HttpVersion.Version20);

        using var viaH2 = await h2.GetAsync(new Uri(proxy.Url, "/h2c"));
        await using var raw = await proxy.ConnectAsync();
        await raw.SendAsync("GET /h1 HTTP/1.1\r\nHost: h1.example\r\n\r\n");

        Assert.Equal(HttpVersion.Version20, viaH2.Version);
        Assert.Equal(200, (await raw.ReadResponseAsync())?.Status);
        Assert.Equal(["1.1 llrp", "2 llrp"], (await proxy.Downstream.WaitForForwardedAsync(2)).Select(f => f.Values("Via").Single()).Order());
    }

    [Theory]
    [MemberData(nameof(EachFrontEnd))]
    public async Task A_cleartext_http11_listener_does_not_speak_h2c_unless_asked(string frontEnd)
    {
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get("llhttp"), ["--frontEnd", frontEnd], unreachableDownstream: false);
        using var h2 = Client(HttpVersion.Version20);

        await Assert.ThrowsAsync<HttpRequestException>(() => h2.GetAsync(new Uri(proxy.Url, "/h2c")));

        Assert.Empty(proxy.Downstream.Forwarded);
    }

    [Theory]
    [InlineData("llhttp")]
    [InlineData("httpclient")]
    [InlineData("httpclient-httpcontext")]
    [InlineData("yarp")]
    public async Task Kestrel_as_http11_front_end_forwards_through_every_variant(string client)
    {
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get(client), ["--frontEnd", "kestrel"], unreachableDownstream: false);
        proxy.Downstream.Responder = Echo;
        using var h1 = Client(HttpVersion.Version11);
        var body = Wire.Body(100_000);

        using var get = await h1.GetAsync(new Uri(proxy.Url, "/kestrel"));
        using var post = await h1.PostAsync(new Uri(proxy.Url, "/kestrel-post"), new StreamContent(new NonSeekable(body)));

        Assert.Equal(HttpStatusCode.OK, get.StatusCode);
        Assert.Equal(body, await post.Content.ReadAsByteArrayAsync());
        var forwarded = await proxy.Downstream.WaitForForwardedAsync(2);
        Assert.All(forwarded, f => Assert.Equal(["1.1 llrp"], f.Values("Via")));
        Assert.Equal(Framing.Chunked, forwarded.Single(f => f.Target == "/kestrel-post").Framing);
    }

    /// <summary>
    /// The deadline sweep's idle calls reach the forwarders of pooled exchange slots as they reach a raw connection's: the
    /// llhttp slot's downstream connection goes to the shared pool after downstreamShareAfter and is closed after
    /// downstreamIdleTimeout while the client connection stays open. Without them the slot kept it open indefinitely.
    /// </summary>
    [Theory]
    [InlineData("h2c")]
    [InlineData("h2c-kestrel")]
    [InlineData("kestrel-http11")]
    public async Task A_pooled_exchange_slot_lets_its_idle_downstream_connection_expire(string frontEnd)
    {
        string[] options = frontEnd switch
        {
            "h2c" => ["--protocols", "h2"],
            "h2c-kestrel" => ["--protocols", "h2", "--frontEnd", "kestrel"],
            _ => ["--frontEnd", "kestrel"],
        };
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get("llhttp"),
            [.. options, "--downstreamIdleTimeout", "1", "--downstreamShareAfter", "0"], unreachableDownstream: false);
        using var client = Client(frontEnd.StartsWith("h2c", StringComparison.Ordinal) ? HttpVersion.Version20 : HttpVersion.Version11);

        using var response = await client.GetAsync(new Uri(proxy.Url, "/then-idle"));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Single(await proxy.Downstream.WaitForForwardedAsync(1));

        // The client keeps its connection (HttpClient's pool holds it); only the proxy's idle handling can close the
        // downstream one.
        Assert.True(await proxy.Downstream.WaitUntilAsync(d => d.ClosedBetweenRequests >= 1),
            $"the idle downstream connection was not closed; {proxy.Downstream.Describe()}");

        // The next request goes through on a new downstream connection.
        using var next = await client.GetAsync(new Uri(proxy.Url, "/after-idle"));
        Assert.Equal(HttpStatusCode.OK, next.StatusCode);
        Assert.Equal(2, proxy.Downstream.AcceptedConnections);
    }

    [Fact]
    public async Task Kestrel_as_http11_front_end_holds_requests_to_the_proxy_rules()
    {
        await using var proxy = await ProxyUnderTest.StartAsync(Variants.Get("llhttp"), ["--frontEnd", "kestrel"], unreachableDownstream: false);
        await using var raw = await proxy.ConnectAsync();

        // A field name that resembles Transfer-Encoding: refused by the proxy's rule, whichever parser split the line.
        await raw.SendAsync("GET /lookalike HTTP/1.1\r\nHost: k.example\r\nTransfer_Encoding: chunked\r\n\r\n");

        Assert.Equal(400, (await raw.ReadResponseAsync())?.Status);
        Assert.Empty(proxy.Downstream.Forwarded);
    }

    // RFC 9113 §8.2.2, §8.1.1, §8.2: the h2-to-h1 smuggling classics. Each is a stream error or the proxy's 400, never
    // forwarded, and the connection goes on serving (a later valid stream is answered).
    public static TheoryData<string, string, byte[], byte[]?> Malformed()
    {
        var data = new TheoryData<string, string, byte[], byte[]?>();
        foreach (var frontEnd in FrontEnds)
        {
            foreach (var (what, headers, body) in MalformedRows)
            {
                data.Add(frontEnd, what, headers, body);
            }
        }
        return data;
    }

    private static readonly (string What, byte[] Headers, byte[]? Data)[] MalformedRows =
    [
        ("transfer-encoding", H2Connection.Request("POST", "/te", ("transfer-encoding", "chunked")), Wire.Bytes("5\r\nhello\r\n0\r\n\r\n")),
        ("connection", H2Connection.Request("GET", "/connection", ("connection", "close")), null),
        ("te other than trailers", H2Connection.Request("GET", "/te-gzip", ("te", "gzip")), null),
        ("uppercase name", H2Connection.Request("GET", "/upper", ("X-Upper", "1")), null),
        ("CRLF in a name", H2Connection.Request("GET", "/crlf-name", ("x-a\r\nx-b", "1")), null),
        ("CRLF in a value", H2Connection.Request("GET", "/crlf-value", ("x-a", "1\r\nx-injected: 1")), null),
        ("content-length above the DATA", H2Connection.Request("POST", "/cl-more", ("content-length", "10")), Wire.Bytes("hello")),
        ("content-length below the DATA", H2Connection.Request("POST", "/cl-less", ("content-length", "2")), Wire.Bytes("hello")),
        ("framing lookalike", H2Connection.Request("GET", "/lookalike", ("content_length", "5")), null),
    ];

    [Theory]
    [MemberData(nameof(Malformed))]
    public async Task A_malformed_stream_is_refused_and_never_forwarded(string frontEnd, string what, byte[] headers, byte[]? data)
    {
        await using var proxy = await StartAsync("llhttp", tls: false, frontEnd);
        await using var h2 = await H2Connection.OpenAsync(proxy.Url);

        await h2.WriteFrameAsync(H2Frame.Headers, (byte)(H2Frame.EndHeaders | (data is null ? H2Frame.EndStream : 0)), 1, headers);
        if (data is not null)
        {
            await h2.WriteFrameAsync(H2Frame.Data, H2Frame.EndStream, 1, data);
        }
        var (frames, goAway, closed) = await h2.ReadStreamAsync(1);

        // Refused: RST_STREAM, a 4xx answer (HPACK's static :status 400 is 0x8c), or the connection ended (a
        // connection error, RFC 9113 §5.4.1). Never a 2xx.
        var refused = closed || goAway is not null || frames.Any(f => f.Type == H2Frame.RstStream) ||
            frames.Any(f => f.Type == H2Frame.Headers && f.Payload.Length > 0 && f.Payload[0] == 0x8c);
        Assert.True(refused, $"{what}: {string.Join(", ", frames)}");
        Assert.DoesNotContain(frames, f => f.Type == H2Frame.Headers && f.Payload.Length > 0 && f.Payload[0] == 0x88);
        // No request reached the origin whole.
        Assert.Empty(proxy.Downstream.Forwarded);
    }

    [Theory]
    [MemberData(nameof(EachFrontEnd))]
    public async Task Rapid_reset_closes_the_connection_with_goaway(string frontEnd)
    {
        await using var proxy = await StartAsync("llhttp", tls: false, frontEnd);
        await using var h2 = await H2Connection.OpenAsync(proxy.Url);
        var block = H2Connection.Request("GET", "/reset");
        var cancel = new byte[4];
        cancel[3] = 0x8; // CANCEL

        // Bounded: twice the resets the proxy allows a connection in its window, sent in batches of 50 streams.
        for (int batch = 0, stream = 1; batch < 2 * 200 / 50; batch++)
        {
            var bytes = new List<byte>();
            for (var i = 0; i < 50; i++, stream += 2)
            {
                bytes.AddRange(H2Connection.Frame(H2Frame.Headers, H2Frame.EndHeaders | H2Frame.EndStream, stream, block));
                bytes.AddRange(H2Connection.Frame(H2Frame.RstStream, 0, stream, cancel));
            }
            try
            {
                await h2.WriteRawAsync([.. bytes]);
            }
            catch (IOException)
            {
                break;
            }
        }
        var (goAways, closed) = await h2.ReadUntilClosedAsync();

        Assert.NotEmpty(goAways);
        Assert.True(closed, "the connection stayed open after GOAWAY");
    }

    [Theory]
    [MemberData(nameof(EachFrontEnd))]
    public async Task A_continuation_flood_closes_the_connection(string frontEnd)
    {
        await using var proxy = await StartAsync("llhttp", tls: false, frontEnd);
        await using var h2 = await H2Connection.OpenAsync(proxy.Url);
        var filler = H2Connection.Block(("x-flood", new string('a', 1000)));

        await h2.WriteFrameAsync(H2Frame.Headers, 0, 1, H2Connection.Request("GET", "/flood"));
        // Bounded: 200 CONTINUATION frames of ~1 KB, six times maxRequestHeadersTotalSize (32 KiB).
        for (var i = 0; i < 200; i++)
        {
            try
            {
                await h2.WriteFrameAsync(H2Frame.Continuation, 0, 1, filler);
            }
            catch (IOException)
            {
                break;
            }
        }
        var (_, closed) = await h2.ReadUntilClosedAsync();

        Assert.True(closed);
        Assert.Empty(proxy.Downstream.Forwarded);
    }

    [Theory]
    [MemberData(nameof(EachFrontEnd))]
    public async Task A_flood_of_empty_continuation_frames_is_cut_off_by_the_header_timeout(string frontEnd)
    {
        await using var proxy = await StartAsync("llhttp", tls: false, frontEnd, "--requestHeadersTimeout", "1");
        await using var h2 = await H2Connection.OpenAsync(proxy.Url);

        await h2.WriteFrameAsync(H2Frame.Headers, 0, 1, H2Connection.Request("GET", "/flood"));
        var closed = false;
        // Bounded in count; the header section never ends, which requestHeadersTimeout bounds in time.
        for (var i = 0; i < 100_000 && !closed; i++)
        {
            try
            {
                await h2.WriteFrameAsync(H2Frame.Continuation, 0, 1, []);
            }
            catch (IOException)
            {
                closed = true;
            }
        }
        if (!closed)
        {
            (_, closed) = await h2.ReadUntilClosedAsync();
        }

        Assert.True(closed);
        Assert.Empty(proxy.Downstream.Forwarded);
    }

    [Theory]
    [MemberData(nameof(EachFrontEnd))]
    public async Task More_streams_than_the_limit_are_refused_and_the_rest_served(string frontEnd)
    {
        await using var proxy = await StartAsync("llhttp", tls: false, frontEnd, "--http2MaxConcurrentStreams", "2", "--shutdownTimeout", "1");
        proxy.Downstream.Responder = _ => DownstreamReply.Never;
        await using var h2 = await H2Connection.OpenAsync(proxy.Url);

        foreach (var stream in new[] { 1, 3, 5 })
        {
            await h2.WriteFrameAsync(H2Frame.Headers, H2Frame.EndHeaders | H2Frame.EndStream, stream, H2Connection.Request("GET", $"/held/{stream}"));
        }
        var (frames, _, _) = await h2.ReadStreamAsync(5);

        // RFC 9113 §5.1.2: a stream beyond SETTINGS_MAX_CONCURRENT_STREAMS is refused (REFUSED_STREAM, 0x7) or the
        // connection ended (PROTOCOL_ERROR); either way it never reaches the origin.
        var reset = Assert.Single(frames, f => f.Type == H2Frame.RstStream);
        Assert.Equal(0x7, reset.ErrorCode);
        Assert.True(await proxy.Downstream.WaitUntilAsync(d => d.InFlight.Count + d.Forwarded.Count >= 2));
        Assert.DoesNotContain(proxy.Downstream.Forwarded, f => f.Target == "/held/5");
    }

    /// <summary>A stream that cannot seek: HttpClient sends it without Content-Length.</summary>
    private sealed class NonSeekable(byte[] bytes) : MemoryStream(bytes)
    {
        public override bool CanSeek => false;
    }
}
