using LLRP.Tests.Infrastructure;

namespace LLRP.Tests;

/// <summary>
/// Project issue 50, deliverable 4 through the running proxy: RFC 9113 §8's request rules and message framing, for the
/// proxy's own front end (--frontEnd raw) and Kestrel's (--frontEnd kestrel), checked on the wire (frames to the
/// client) and at the recording downstream (what was forwarded, byte for byte).
/// </summary>
public sealed class Http2ConformanceTests
{
    private static Task<ProxyUnderTest> StartAsync(string frontEnd, bool tls = false, params string[] options) =>
        Http2AttackTests.StartAsync(frontEnd, tls, options);

    private static (string, string)[] Pseudo(string method = "GET", string path = "/p") =>
        [(":method", method), (":scheme", "http"), (":path", path), (":authority", "h2.example")];

    // RFC 9113 §8.3.1 (pseudo-header fields), §8.2.1 (lowercase names), §8.2.2 (connection-specific fields, TE): each a
    // malformed request, a stream error PROTOCOL_ERROR (§8.1.1) or the proxy's 400, never forwarded.
    private static readonly Dictionary<string, (string, string)[]> MalformedBlocks = new()
    {
        ["missing :method"] = [(":scheme", "http"), (":path", "/p"), (":authority", "h2.example")],
        ["missing :path"] = [(":method", "GET"), (":scheme", "http"), (":authority", "h2.example")],
        ["missing :scheme"] = [(":method", "GET"), (":path", "/p"), (":authority", "h2.example")],
        ["empty :path"] = [(":method", "GET"), (":scheme", "http"), (":path", ""), (":authority", "h2.example")],
        ["duplicated :path"] = [.. Pseudo(), (":path", "/other")],
        ["duplicated :method"] = [(":method", "GET"), .. Pseudo()],
        ["pseudo-header after a regular field"] = [(":method", "GET"), (":scheme", "http"), ("x-regular", "1"), (":path", "/p"), (":authority", "h2.example")],
        ["unknown pseudo-header"] = [.. Pseudo(), (":foo", "bar")],
        ["response pseudo-header in a request"] = [.. Pseudo(), (":status", "200")],
        ["uppercase field name"] = [.. Pseudo(), ("X-Upper", "1")],
        ["connection"] = [.. Pseudo(), ("connection", "keep-alive")],
        ["keep-alive"] = [.. Pseudo(), ("keep-alive", "timeout=5")],
        ["proxy-connection"] = [.. Pseudo(), ("proxy-connection", "keep-alive")],
        ["transfer-encoding"] = [.. Pseudo(), ("transfer-encoding", "chunked")],
        ["upgrade"] = [.. Pseudo(), ("upgrade", "h2c")],
        ["te other than trailers"] = [.. Pseudo(), ("te", "gzip")],
        ["te trailers and more"] = [.. Pseudo(), ("te", "trailers, gzip")],
    };

    public static TheoryData<string, string> Malformed()
    {
        var data = new TheoryData<string, string>();
        foreach (var frontEnd in new[] { "raw", "kestrel" })
        {
            foreach (var what in MalformedBlocks.Keys)
            {
                data.Add(frontEnd, what);
            }
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Malformed))]
    public async Task A_malformed_request_is_a_stream_error_or_400_and_never_forwarded(string frontEnd, string what)
    {
        await using var proxy = await StartAsync(frontEnd);
        await using var h2 = await H2Connection.OpenAsync(proxy.Url);

        await h2.SendRequestAsync(1, H2Connection.Block(MalformedBlocks[what]));
        var response = await h2.ReadResponseAsync(1);

        Assert.True(response.Reset?.ErrorCode == H2Frame.ProtocolError || response.Status == 400 || response.GoAway?.ErrorCode == H2Frame.ProtocolError,
            $"{what}: {response.Describe()}");
        Assert.DoesNotContain(response.Frames, f => f.Status is >= 200 and < 300);
        if (response.GoAway is null && !response.Closed)
        {
            // A stream error: the connection goes on (RFC 9113 §5.4.2).
            await h2.SendRequestAsync(3, h2.RequestBlock("GET", "/next"));
            var next = await h2.ReadResponseAsync(3);
            Assert.True(next.Status == 200, $"{what}: the next stream: {next.Describe()}");
            Assert.Equal(["/next"], (await proxy.Downstream.WaitForForwardedAsync(1)).Select(f => f.Target));
        }
        else
        {
            Assert.Empty(proxy.Downstream.Forwarded);
        }
    }

    /// <summary>The raw front end's answer to each malformed request, exactly: RST_STREAM PROTOCOL_ERROR, the codec's §8.1.1 checks.</summary>
    [Theory]
    [MemberData(nameof(MalformedRaw))]
    public async Task The_raw_front_end_resets_a_malformed_request_with_protocol_error(string what)
    {
        await using var proxy = await StartAsync("raw");
        await using var h2 = await H2Connection.OpenAsync(proxy.Url);

        await h2.SendRequestAsync(1, H2Connection.Block(MalformedBlocks[what]));
        var response = await h2.ReadResponseAsync(1);

        Assert.True(response.Reset?.ErrorCode == H2Frame.ProtocolError && response.Head is null, $"{what}: {response.Describe()}");
    }

    public static TheoryData<string> MalformedRaw() => [.. MalformedBlocks.Keys];

    /// <summary>TE: trailers is the one TE a request may carry (RFC 9113 §8.2.2): served; TE is hop-by-hop, not forwarded.</summary>
    [Theory]
    [InlineData("raw")]
    [InlineData("kestrel")]
    public async Task Te_trailers_is_accepted(string frontEnd)
    {
        await using var proxy = await StartAsync(frontEnd);
        await using var h2 = await H2Connection.OpenAsync(proxy.Url);

        await h2.SendRequestAsync(1, h2.RequestBlock("GET", "/te", ("te", "trailers")));
        var response = await h2.ReadResponseAsync(1);

        Assert.True(response.Status == 200, response.Describe());
        var forwarded = Assert.Single(await proxy.Downstream.WaitForForwardedAsync(1));
        Assert.Empty(forwarded.Violations);
    }

    public static TheoryData<string, string> ContentLengthMismatches()
    {
        var data = new TheoryData<string, string>();
        foreach (var frontEnd in new[] { "raw", "kestrel" })
        {
            data.Add(frontEnd, "more DATA over two frames");
            data.Add(frontEnd, "less DATA over two frames");
            data.Add(frontEnd, "no DATA");
        }
        return data;
    }

    /// <summary>
    /// RFC 9113 §8.1.1: content-length that the DATA frames' total disagrees with is malformed: a stream error
    /// PROTOCOL_ERROR (or 400), and the request never reaches the downstream whole.
    /// </summary>
    [Theory]
    [MemberData(nameof(ContentLengthMismatches))]
    public async Task Content_length_that_disagrees_with_data_is_refused(string frontEnd, string what)
    {
        await using var proxy = await StartAsync(frontEnd);
        await using var h2 = await H2Connection.OpenAsync(proxy.Url);
        var headers = h2.RequestBlock("POST", "/cl", ("content-length", "5"));

        await h2.WriteRawAsync(what switch
        {
            "more DATA over two frames" => [.. H2Connection.Frame(H2Frame.Headers, H2Frame.EndHeaders, 1, headers),
                .. H2Connection.Frame(H2Frame.Data, 0, 1, "abc"u8), .. H2Connection.Frame(H2Frame.Data, H2Frame.EndStream, 1, "def"u8)],
            "less DATA over two frames" => [.. H2Connection.Frame(H2Frame.Headers, H2Frame.EndHeaders, 1, headers),
                .. H2Connection.Frame(H2Frame.Data, 0, 1, "ab"u8), .. H2Connection.Frame(H2Frame.Data, H2Frame.EndStream, 1, "cd"u8)],
            _ => H2Connection.Frame(H2Frame.Headers, H2Frame.EndHeaders | H2Frame.EndStream, 1, headers),
        });
        var response = await h2.ReadResponseAsync(1);

        Assert.True(response.Reset?.ErrorCode == H2Frame.ProtocolError || response.Status == 400 || response.GoAway?.ErrorCode == H2Frame.ProtocolError,
            $"{what}: {response.Describe()}");
        Assert.DoesNotContain(response.Frames, f => f.Status is >= 200 and < 300);
        await Http2AttackTests.AssertServesAsync(proxy, tls: false);
        Assert.DoesNotContain(proxy.Downstream.Forwarded, f => f.Target == "/cl");
    }

    // ---- What is forwarded ----

    /// <summary>RFC 9113 §8.2.3: cookie crumbs are joined with "; " into one Cookie field for HTTP/1.1.</summary>
    [Theory]
    [InlineData("raw")]
    [InlineData("kestrel")]
    public async Task Cookie_crumbs_are_joined_into_one_field(string frontEnd)
    {
        await using var proxy = await StartAsync(frontEnd);
        await using var h2 = await H2Connection.OpenAsync(proxy.Url);

        await h2.SendRequestAsync(1, h2.RequestBlock("GET", "/cookies", ("cookie", "a=1"), ("x-between", "y"), ("cookie", "b=2"), ("cookie", "c=3")));
        var response = await h2.ReadResponseAsync(1);

        Assert.True(response.Status == 200, response.Describe());
        var forwarded = Assert.Single(await proxy.Downstream.WaitForForwardedAsync(1));
        Assert.Equal(["a=1; b=2; c=3"], forwarded.Values("Cookie"));
        Assert.Empty(forwarded.Violations);
    }

    /// <summary>RFC 9113 §8.3.1: :authority becomes the forwarded Host (one field).</summary>
    [Theory]
    [InlineData("raw")]
    [InlineData("kestrel")]
    public async Task The_authority_becomes_host(string frontEnd)
    {
        await using var proxy = await StartAsync(frontEnd);
        await using var h2 = await H2Connection.OpenAsync(proxy.Url);

        await h2.SendRequestAsync(1, h2.RequestBlock("GET", "/authority"));
        var response = await h2.ReadResponseAsync(1);

        Assert.True(response.Status == 200, response.Describe());
        var forwarded = Assert.Single(await proxy.Downstream.WaitForForwardedAsync(1));
        Assert.Equal(["h2.example"], forwarded.Values("Host"));
    }

    /// <summary>A Host equal to :authority is the same authority (RFC 9113 §8.3.1): served, one Host forwarded.</summary>
    [Theory]
    [InlineData("raw")]
    [InlineData("kestrel")]
    public async Task A_host_equal_to_the_authority_is_served_with_one_host(string frontEnd)
    {
        await using var proxy = await StartAsync(frontEnd);
        await using var h2 = await H2Connection.OpenAsync(proxy.Url);

        await h2.SendRequestAsync(1, h2.RequestBlock("GET", "/same-host", ("host", "h2.example")));
        var response = await h2.ReadResponseAsync(1);

        Assert.True(response.Status == 200, response.Describe());
        Assert.Equal(["h2.example"], Assert.Single(await proxy.Downstream.WaitForForwardedAsync(1)).Values("Host"));
    }

    /// <summary>
    /// A Host that names another authority than :authority (RFC 9113 §8.3.1: a client must not send one; an intermediary
    /// that kept both would route by one and forward the other). The raw front end refuses it (400 or a stream error),
    /// never forwarded. Kestrel replaces Host with :authority before the proxy sees the request (ExchangeSlot reads the
    /// Host Kestrel made), so the request is forwarded with the one authority it was routed by and the other is dropped.
    /// </summary>
    [Theory]
    [InlineData("raw")]
    [InlineData("kestrel")]
    public async Task A_host_differing_from_the_authority_never_reaches_the_downstream(string frontEnd)
    {
        await using var proxy = await StartAsync(frontEnd);
        await using var h2 = await H2Connection.OpenAsync(proxy.Url);

        await h2.SendRequestAsync(1, h2.RequestBlock("GET", "/other-host", ("host", "evil.example")));
        var response = await h2.ReadResponseAsync(1);

        if (frontEnd == "raw")
        {
            Assert.True(response.Status == 400 || response.Reset?.ErrorCode == H2Frame.ProtocolError, response.Describe());
            await Http2AttackTests.AssertServesAsync(proxy, tls: false);
            Assert.DoesNotContain(proxy.Downstream.Forwarded, f => f.Target == "/other-host");
        }
        else
        {
            Assert.True(response.Status == 200, response.Describe());
            var forwarded = Assert.Single(await proxy.Downstream.WaitForForwardedAsync(1));
            Assert.Equal(["h2.example"], forwarded.Values("Host"));
            Assert.DoesNotContain("evil.example", Wire.Text(forwarded.RawHead));
        }
    }

    /// <summary>END_STREAM on HEADERS: the request has no content (RFC 9113 §8.1), so no body and no chunked framing downstream.</summary>
    [Theory]
    [InlineData("raw")]
    [InlineData("kestrel")]
    public async Task A_post_ended_on_its_headers_has_no_body_downstream(string frontEnd)
    {
        await using var proxy = await StartAsync(frontEnd);
        await using var h2 = await H2Connection.OpenAsync(proxy.Url);

        await h2.SendRequestAsync(1, h2.RequestBlock("POST", "/no-body"));
        var response = await h2.ReadResponseAsync(1);

        Assert.True(response.Status == 200, response.Describe());
        var forwarded = Assert.Single(await proxy.Downstream.WaitForForwardedAsync(1));
        Assert.Empty(forwarded.Body);
        Assert.NotEqual(Framing.Chunked, forwarded.Framing);
        Assert.True(forwarded.Framing == Framing.None || forwarded.Values("Content-Length").SequenceEqual(["0"]), forwarded.ToString());
        Assert.Empty(forwarded.Violations);
    }

    public static TheoryData<string, bool> FrontEndsOverCleartextAndTls() => Http2AttackTests.FrontEndsOverCleartextAndTls();

    /// <summary>
    /// A 100,000-byte POST body in DATA frames of 1 to 999 bytes, every third padded (RFC 9113 §6.1: the pad length byte
    /// and the padding are not content, but count against flow control): forwarded byte for byte.
    /// </summary>
    [Theory]
    [MemberData(nameof(FrontEndsOverCleartextAndTls))]
    public async Task A_body_in_many_data_frames_some_padded_arrives_byte_identical(string frontEnd, bool tls)
    {
        await using var proxy = await StartAsync(frontEnd, tls);
        await using var h2 = await H2Connection.OpenAsync(proxy.Url, tls);
        var body = Wire.Body(100_000);
        var random = new Random(50);
        var bytes = new List<byte>(H2Connection.Frame(H2Frame.Headers, H2Frame.EndHeaders, 1, h2.RequestBlock("POST", "/split")));
        var frames = 0;
        for (var offset = 0; offset < body.Length; frames++)
        {
            var length = Math.Min(random.Next(1, 1000), body.Length - offset);
            var piece = body.AsSpan(offset, length);
            offset += length;
            var end = offset == body.Length ? H2Frame.EndStream : (byte)0;
            if (frames % 3 == 0)
            {
                var padding = random.Next(0, 256);
                bytes.AddRange(H2Connection.Frame(H2Frame.Data, (byte)(end | H2Frame.Padded), 1, [(byte)padding, .. piece, .. new byte[padding]]));
            }
            else
            {
                bytes.AddRange(H2Connection.Frame(H2Frame.Data, end, 1, piece));
            }
        }

        await h2.WriteRawAsync([.. bytes]);
        var response = await h2.ReadResponseAsync(1);

        Assert.True(response.Status == 200, response.Describe());
        var forwarded = Assert.Single(await proxy.Downstream.WaitForForwardedAsync(1));
        Assert.Equal(body, forwarded.Body);
        Assert.Empty(forwarded.Violations);
    }

    public static TheoryData<string, bool, int> ResponseSizes()
    {
        var data = new TheoryData<string, bool, int>();
        foreach (var frontEnd in new[] { "raw", "kestrel" })
        {
            foreach (var size in new[] { 0, 1, 16 * 1024 + 1, 1024 * 1024 })
            {
                data.Add(frontEnd, false, size);
            }
            data.Add(frontEnd, true, 1024 * 1024);
        }
        return data;
    }

    /// <summary>
    /// Responses of 0 B, 1 B, one byte past a frame (16 KiB + 1: two DATA frames) and 1 MiB (windows opened wide by the
    /// client): byte for byte, and as long as the forwarded Content-Length says.
    /// </summary>
    [Theory]
    [MemberData(nameof(ResponseSizes))]
    public async Task A_response_body_arrives_byte_identical(string frontEnd, bool tls, int size)
    {
        await using var proxy = await StartAsync(frontEnd, tls);
        var body = Wire.Body(size);
        proxy.Downstream.Responder = _ => new DownstreamReply { Bytes = [.. Wire.Bytes($"HTTP/1.1 200 OK\r\nContent-Length: {size}\r\n\r\n"), .. body] };
        await using var h2 = await H2Connection.OpenAsync(proxy.Url, tls, [(H2Connection.SettingsInitialWindowSize, (uint)H2Connection.MaxWindow)],
            connectionWindowIncrement: H2Connection.MaxWindow - 65_535);

        await h2.SendRequestAsync(1, h2.RequestBlock("GET", $"/size/{size}"));
        var response = await h2.ReadResponseAsync(1);

        Assert.True(response.Status == 200 && response.Complete, response.Describe());
        Assert.Equal(body, response.Body);
        Assert.All(response.Frames, f => Assert.True(f.Payload.Length <= 16_384, $"a frame above SETTINGS_MAX_FRAME_SIZE: {f}"));
    }

    /// <summary>RFC 9110 §9.3.2 and RFC 9113 §8.1: a response to HEAD has no content: no DATA payload, whatever Content-Length says.</summary>
    [Theory]
    [InlineData("raw")]
    [InlineData("kestrel")]
    public async Task Head_gets_no_data(string frontEnd)
    {
        await using var proxy = await StartAsync(frontEnd);
        proxy.Downstream.Responder = _ => DownstreamReply.Raw("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
        await using var h2 = await H2Connection.OpenAsync(proxy.Url);

        await h2.SendRequestAsync(1, h2.RequestBlock("HEAD", "/head"));
        var response = await h2.ReadResponseAsync(1);

        Assert.True(response.Status == 200 && response.Complete, response.Describe());
        Assert.Empty(response.Body);
        Assert.Equal("HEAD", Assert.Single(await proxy.Downstream.WaitForForwardedAsync(1)).Method);
        // The connection goes on: the downstream's empty answer was not taken for a body that follows.
        await h2.SendRequestAsync(3, h2.RequestBlock("HEAD", "/head-again"));
        var again = await h2.ReadResponseAsync(3);
        Assert.True(again.Status == 200 && again.Complete && again.Body.Length == 0, again.Describe());
    }

    /// <summary>RFC 9110 §15.3.5, §15.4.5: 204 and 304 have no content: the stream ends with the status, no DATA payload.</summary>
    [Theory]
    [InlineData("raw", 204)]
    [InlineData("raw", 304)]
    [InlineData("kestrel", 204)]
    [InlineData("kestrel", 304)]
    public async Task A_status_without_content_has_no_body(string frontEnd, int status)
    {
        await using var proxy = await StartAsync(frontEnd);
        proxy.Downstream.Responder = _ => DownstreamReply.Raw(status == 204 ? "HTTP/1.1 204 No Content\r\n\r\n" : "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n");
        await using var h2 = await H2Connection.OpenAsync(proxy.Url);

        await h2.SendRequestAsync(1, h2.RequestBlock("GET", $"/status/{status}"));
        var response = await h2.ReadResponseAsync(1);

        Assert.True(response.Status == status && response.Complete, response.Describe());
        Assert.Empty(response.Body);
    }
}
