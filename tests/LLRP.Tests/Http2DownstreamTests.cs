using System.IO.Pipelines;
using System.Net;
using LLRP.Http1;
using LLRP.KestrelHttp;
using LLRP.Semantics;
using LLRP.Tests.Infrastructure;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;

namespace LLRP.Tests;

/// <summary>
/// Plain requests to an HTTP/2 downstream (--downstreamProtocol h2 over TLS, h2c in cleartext) through each
/// HttpClient-based variant: bodies byte for byte, the response's Via naming HTTP/2; response trailers to an HTTP/2 client
/// and TE: trailers to the downstream when that client sent it; what an HTTP/1.1 client of the raw front end gets instead
/// (the body, no trailers, no TE forwarded); and the trailer policy itself.
/// </summary>
public sealed class Http2DownstreamTests
{
    public static TheoryData<string, bool> VariantsOverTlsAndCleartext() => GrpcTests.VariantsOverTlsAndCleartext();

    private static HttpClient Client() => new(TestCertificates.Handler())
    {
        DefaultRequestVersion = HttpVersion.Version20,
        DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact,
        Timeout = Wire.Cap,
    };

    [Theory]
    [MemberData(nameof(VariantsOverTlsAndCleartext))]
    public async Task A_get_and_posts_with_and_without_content_length_are_byte_identical(string client, bool tls)
    {
        await using var proxy = await Http2DownstreamProxy.StartAsync(client, tls);
        using var http = Client();
        var body = Wire.Body(300_000);

        using var get = await http.GetAsync(new Uri(proxy.Url, "/get"));
        using var sized = await http.PostAsync(new Uri(proxy.Url, "/echo"), new ByteArrayContent(body));
        using var unsized = await http.PostAsync(new Uri(proxy.Url, "/echo"), new StreamContent(new NonSeekable(body)));

        Assert.Equal(HttpStatusCode.OK, get.StatusCode);
        Assert.Equal(Wire.Body(70_000), await get.Content.ReadAsByteArrayAsync());
        // RFC 9110 §7.6.3: the response's Via names the protocol the proxy received it with.
        Assert.Equal(["2 llrp"], get.Headers.Via.Select(v => $"{v.ProtocolVersion} {v.ReceivedBy}"));
        Assert.Equal(body, await sized.Content.ReadAsByteArrayAsync());
        Assert.Equal(body, await unsized.Content.ReadAsByteArrayAsync());
    }

    [Theory]
    [MemberData(nameof(VariantsOverTlsAndCleartext))]
    public async Task Trailers_reach_an_http2_client_and_TE_trailers_reaches_the_downstream_when_the_client_sent_it(string client, bool tls)
    {
        await using var proxy = await Http2DownstreamProxy.StartAsync(client, tls);
        using var http = Client();

        using var asked = new HttpRequestMessage(HttpMethod.Get, new Uri(proxy.Url, "/trailers"))
        {
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
        };
        asked.Headers.TE.ParseAdd("trailers");
        using var withTe = await http.SendAsync(asked);
        var body = await withTe.Content.ReadAsStringAsync();
        using var withoutTe = await http.GetAsync(new Uri(proxy.Url, "/trailers"));
        await withoutTe.Content.ReadAsStringAsync();

        Assert.Equal("body before trailers", body);
        Assert.Equal(["abc123"], withTe.TrailingHeaders.GetValues("x-checksum"));
        Assert.Equal(["two"], withTe.TrailingHeaders.GetValues("x-second"));
        Assert.Equal(["abc123"], withoutTe.TrailingHeaders.GetValues("x-checksum"));
        // The Trailer field the origin declared is end-to-end and forwarded in the head.
        Assert.Equal(["x-checksum"], withTe.Headers.GetValues("Trailer"));
        Assert.Equal(["trailers", ""], proxy.Origin.Record.TeFields);
    }

    [Theory]
    [InlineData("httpclient", true, "raw")]
    [InlineData("httpclient", false, "raw")]
    [InlineData("httpclient-httpcontext", false, "raw")]
    [InlineData("yarp", false, "raw")]
    // Kestrel's own HTTP/1.1 (--frontEnd kestrel, over TLS: on cleartext it serves one protocol) drops them the same way.
    [InlineData("httpclient", true, "kestrel")]
    [InlineData("yarp", true, "kestrel")]
    public async Task An_http11_client_gets_the_body_without_trailers_and_no_TE_goes_downstream(string client, bool tls, string frontEnd)
    {
        await using var proxy = await Http2DownstreamProxy.StartAsync(client, tls, "--protocols", "http1,h2", "--frontEnd", frontEnd);
        await using var raw = await RawClient.ConnectAsync(proxy.Url);

        await raw.SendAsync($"GET /trailers HTTP/1.1\r\nHost: {proxy.Url.Authority}\r\nTE: trailers\r\n\r\n");
        var response = await raw.ReadResponseAsync();

        Assert.NotNull(response);
        Assert.Equal(200, response.Status);
        Assert.Equal("HTTP/1.1", response.Version);
        Assert.Equal("body before trailers", response.BodyText);
        // Chunked to the client (the downstream sent no length), ending with an empty trailer section: the trailers
        // are dropped, since only an HTTP/2 client is given trailers (docs/http2.md).
        Assert.True(response.Chunked, response.ToString());
        Assert.Empty(response.Trailers);
        Assert.Equal(["2 llrp"], response.Values("Via"));
        // TE: trailers is hop-by-hop and goes downstream only when the client can be given trailers.
        Assert.Equal([""], proxy.Origin.Record.TeFields);
    }

    [Theory]
    [InlineData("httpclient")]
    [InlineData("httpclient-httpcontext")]
    [InlineData("yarp")]
    public async Task Request_trailers_are_dropped_and_the_body_goes_through_whole(string client)
    {
        await using var proxy = await Http2DownstreamProxy.StartAsync(client, tls: false);
        await using var h2 = await H2Connection.OpenAsync(proxy.Url);

        // HEADERS, DATA, then a trailer section ending the stream (RFC 9113 §8.1): HttpClient cannot send trailers, so
        // the proxy forwards the body without them.
        await h2.WriteFrameAsync(H2Frame.Headers, H2Frame.EndHeaders, 1, H2Connection.Request("POST", "/request-trailers"));
        await h2.WriteFrameAsync(H2Frame.Data, 0, 1, Wire.Bytes("hello"));
        await h2.WriteFrameAsync(H2Frame.Headers, H2Frame.EndHeaders | H2Frame.EndStream, 1, H2Connection.Block(("x-request-trailer", "1")));
        var (frames, goAway, closed) = await h2.ReadStreamAsync(1);

        Assert.Null(goAway);
        Assert.False(closed);
        Assert.DoesNotContain(frames, f => f.Type == H2Frame.RstStream);
        Assert.Equal("hello", Wire.Text([.. frames.Where(f => f.Type == H2Frame.Data).SelectMany(f => f.Payload)]));
        Assert.Equal([""], proxy.Origin.Record.RequestTrailers);
    }

    [Theory]
    [InlineData("httpclient")]
    [InlineData("yarp")]
    public async Task A_stream_the_origin_resets_is_a_502_and_does_not_take_the_origin_out(string client)
    {
        await using var first = await GrpcOrigin.StartAsync(tls: false);
        await using var second = await GrpcOrigin.StartAsync(tls: false);
        var app = LLRP.Hosting.ProxyHost.Build(
        [
            "--urls", "http://127.0.0.1:0", "--protocols", "h2", "--client", client, "--downstreamProtocol", "h2c",
            "--downstream", $"{first.Url.GetLeftPart(UriPartial.Authority)};{second.Url.GetLeftPart(UriPartial.Authority)}",
            "--loadBalancing", "RoundRobin",
        ]);
        await app.StartAsync(Wire.Deadline(TimeSpan.FromSeconds(30)));
        try
        {
            var url = new Uri(LLRP.Hosting.ProxyHost.Addresses(app).First());
            using var http = Client();

            using var reset = await http.GetAsync(new Uri(url, "/reset"));
            for (var i = 0; i < 4; i++)
            {
                using var ok = await http.GetAsync(new Uri(url, "/get"));
                Assert.Equal(HttpStatusCode.OK, ok.StatusCode);
            }

            Assert.Equal(HttpStatusCode.BadGateway, reset.StatusCode);
            // RoundRobin alternates: an origin that passive health had taken out would have answered none of them.
            Assert.Equal(2, first.Record.TeFields.Count);
            Assert.Equal(2, second.Record.TeFields.Count);
        }
        finally
        {
            await app.StopAsync(Wire.Deadline());
            await app.DisposeAsync();
        }
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task Active_health_checks_probe_in_the_downstream_protocol(bool tls)
    {
        // One failed probe takes the downstream out (503 then): an HTTP/1.1 probe of this HTTP/2-only origin fails.
        await using var proxy = await Http2DownstreamProxy.StartAsync("httpclient", tls,
            "--healthCheckPath", "/get", "--healthCheckInterval", "0.1", "--healthCheckFall", "1");
        using var http = Client();
        var probes = proxy.Origin.Record.TeFields;
        using var cap = new CancellationTokenSource(Wire.Cap);
        while (probes.Count < 3)
        {
            await Task.Delay(50, cap.Token);
        }

        using var response = await http.GetAsync(new Uri(proxy.Url, "/get"));

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(Wire.Body(70_000), await response.Content.ReadAsByteArrayAsync());
    }

    /// <summary>
    /// The trailer policy where it is applied (<see cref="ResponseWriter.WriteTrailer"/>): HttpClient itself drops some of
    /// these from TrailingHeaders, so an end-to-end test could not see the proxy's own rule fail.
    /// </summary>
    [Fact]
    public void Trailer_fields_go_through_the_forbidden_field_policy()
    {
        var (writer, trailers) = Http2Response(http2Client: true, receivedWith: HttpVersion.Version20);

        foreach (var name in new[] { "grpc-status", "Content-Length", "Transfer-Encoding", "Host", ":status", "Connection", "Keep-Alive", "TE", "Upgrade", "Proxy-Connection", "x-checksum" })
        {
            writer.WriteTrailer(name, "1");
        }

        Assert.Equal(["grpc-status", "x-checksum"], trailers.Trailers.Keys.Order(StringComparer.Ordinal));
    }

    [Theory]
    [InlineData(true, "1.1")]
    [InlineData(false, "2.0")]
    public void Trailers_are_dropped_unless_both_sides_speak_http2(bool http2Client, string receivedWith)
    {
        var (writer, trailers) = Http2Response(http2Client, Version.Parse(receivedWith));

        writer.WriteTrailer("grpc-status", "0");

        Assert.False(writer.CanSendTrailers);
        Assert.Empty(trailers.Trailers);
    }

    private static (ResponseWriter Writer, TrailersFeature Trailers) Http2Response(bool http2Client, Version receivedWith)
    {
        var head = new RequestHead(new RequestLimits());
        head.StartParsed("GET"u8, "/"u8, http2Client ? ClientProtocol.Http2 : ClientProtocol.Http11);
        head.AddField("host"u8, "example"u8);
        head.CompleteFields(hasBody: false);
        var writer = new ResponseWriter(PipeWriter.Create(Stream.Null));
        var trailers = new TrailersFeature();
        var kestrel = new KestrelResponse();
        kestrel.Bind(new HttpResponseFeature(), trailers);
        writer.Bind(kestrel, PipeWriter.Create(Stream.Null));
        writer.Start(head);
        writer.ReceivedWith(receivedWith);
        writer.BeginHead(200);
        writer.EndHead(DownstreamBody.UntilEnd, 0);
        return (writer, trailers);
    }

    private sealed class TrailersFeature : IHttpResponseTrailersFeature
    {
        public IHeaderDictionary Trailers { get; set; } = new HeaderDictionary();
    }

    private sealed class NonSeekable(byte[] bytes) : MemoryStream(bytes)
    {
        public override bool CanSeek => false;
    }
}
