using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using LLRP.Tests.Infrastructure;

namespace LLRP.Tests;

/// <summary>
/// src/Downstream as the downstream the proxy is tested against: /echo of any size in both framings while it streams,
/// /reflect, /early, /health and the X-Downstream replica name. Orderings are asserted, never durations.
/// </summary>
public sealed class DownstreamEndpointTests(NamedDownstream fixture) : IClassFixture<NamedDownstream>
{
    private const int Piece = 64 * 1024;

    // Kestrel's MaxRequestBodySize default, which /echo and /reflect lift.
    private const int KestrelDefaultBodyLimit = 30_000_000;

    // Large uploads are bounded by this hang guard only; on a shared machine they may take a while.
    private static readonly TimeSpan s_largeCap = TimeSpan.FromSeconds(120);

    private DownstreamUnderTest Origin => fixture.Downstream;

    [Theory]
    [InlineData(25 * 1024 * 1024, false)]
    [InlineData(25 * 1024 * 1024, true)]
    [InlineData(KestrelDefaultBodyLimit + 1, false)]
    [InlineData(KestrelDefaultBodyLimit + 1, true)]
    public async Task Echo_returns_large_bodies_intact_in_both_framings(int size, bool chunked)
    {
        var body = RandomBody(size, seed: size + (chunked ? 1 : 0));
        await using var client = await Origin.ConnectAsync();

        var framing = chunked ? "Transfer-Encoding: chunked" : $"Content-Length: {body.Length}";
        var sending = Task.Run(async () =>
        {
            await client.SendAsync($"POST /echo HTTP/1.1\r\nHost: downstream.example\r\n{framing}\r\n\r\n");
            for (var offset = 0; offset < body.Length; offset += Piece)
            {
                var piece = body.AsSpan(offset, Math.Min(Piece, body.Length - offset)).ToArray();
                await client.SendAsync(chunked ? [.. Wire.Bytes($"{piece.Length:x}\r\n"), .. piece, .. "\r\n"u8] : piece);
            }
            if (chunked)
            {
                await client.SendAsync("0\r\n\r\n");
            }
        });
        // Read while sending: /echo answers as it reads and stops reading while its answer is not read.
        var response = await client.ReadResponseAsync("POST", s_largeCap);
        await sending;

        Assert.False(client.SendFailed, "the downstream closed before the whole body was sent");
        Assert.NotNull(response);
        Assert.Equal(200, response.Status);
        Assert.True(response.Complete, $"the echo ended early: {response}");
        Assert.Equal(chunked, response.Chunked);
        Assert.Equal(body.Length, response.Body.Length);
        Assert.Equal(Convert.ToHexStringLower(SHA256.HashData(body)), Convert.ToHexStringLower(SHA256.HashData(response.Body)));
    }

    [Fact]
    public async Task Echo_streams_the_first_piece_back_before_the_rest_is_sent()
    {
        var body = RandomBody(2 * Piece, seed: 3);
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, Origin.Url.Port), Wire.Deadline());
        await using var stream = new NetworkStream(socket, ownsSocket: false);
        var reader = new ByteReader(stream);

        await stream.WriteAsync(Wire.Bytes($"POST /echo HTTP/1.1\r\nHost: downstream.example\r\nContent-Length: {body.Length}\r\n\r\n"), Wire.Deadline());
        await stream.WriteAsync(body.AsMemory(0, Piece), Wire.Deadline());

        // Only the first half has been sent: an echo that waited for the whole body would never get past here.
        var head = await ReadHeadAsync(reader);
        Assert.StartsWith("HTTP/1.1 200 ", head[0], StringComparison.Ordinal);
        Assert.Contains($"Content-Length: {body.Length}", head);
        var first = await reader.ReadUpToAsync(Piece, Wire.Deadline());
        Assert.Equal(body.AsSpan(0, Piece).ToArray(), first);

        await stream.WriteAsync(body.AsMemory(Piece), Wire.Deadline());
        var second = await reader.ReadUpToAsync(Piece, Wire.Deadline());
        Assert.Equal(body.AsSpan(Piece).ToArray(), second);
    }

    [Theory]
    [InlineData(100 * 1024, false)]
    [InlineData(100 * 1024, true)]
    [InlineData(100, false)]
    public async Task A_post_to_any_other_path_is_read_and_discarded_and_answered_with_the_asked_size(int size, bool chunked)
    {
        // The benchmark matrix's POST rows: /?s=N with a body of any size in either framing, on a keep-alive connection.
        var body = RandomBody(size, seed: size);
        await using var client = await Origin.ConnectAsync();
        var framing = chunked ? "Transfer-Encoding: chunked" : $"Content-Length: {body.Length}";
        await client.SendAsync($"POST /?s=1024 HTTP/1.1\r\nHost: downstream.example\r\n{framing}\r\n\r\n");
        await client.SendAsync(chunked ? [.. Wire.Bytes($"{body.Length:x}\r\n"), .. body, .. "\r\n0\r\n\r\n"u8] : body);
        var response = await client.ReadResponseAsync("POST");

        Assert.NotNull(response);
        Assert.Equal(200, response.Status);
        Assert.Equal(1024, response.Body.Length);

        // The whole body was consumed: the next request on the connection is read as a request, not as body bytes.
        await client.SendAsync("GET /?s=7 HTTP/1.1\r\nHost: downstream.example\r\n\r\n");
        var next = await client.ReadResponseAsync("GET");
        Assert.NotNull(next);
        Assert.Equal(200, next.Status);
        Assert.Equal(7, next.Body.Length);
    }

    [Fact]
    public async Task Json_answers_a_small_json_object_with_content_length()
    {
        await using var client = await Origin.ConnectAsync();
        await client.SendAsync("GET /json HTTP/1.1\r\nHost: downstream.example\r\n\r\n");
        var response = await client.ReadResponseAsync("GET");

        Assert.NotNull(response);
        Assert.Equal(200, response.Status);
        Assert.Equal("application/json", response.Header("Content-Type"));
        Assert.Equal(response.Body.Length.ToString(System.Globalization.CultureInfo.InvariantCulture), response.Header("Content-Length"));
        using var json = JsonDocument.Parse(response.Body);
        Assert.Equal("Hello, World!", json.RootElement.GetProperty("message").GetString());
    }

    [Fact]
    public async Task Reflect_returns_the_request_line_fields_trailers_and_body_as_json()
    {
        await using var client = await Origin.ConnectAsync();
        await client.SendAsync("POST /reflect?q=1&r=%20 HTTP/1.1\r\nHost: downstream.example\r\nX-Twice: a\r\nX-Twice: b\r\n" +
            "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\nX-Check: done\r\n\r\n");
        var response = await client.ReadResponseAsync("POST");

        Assert.NotNull(response);
        Assert.Equal(200, response.Status);
        Assert.Equal("application/json", response.Header("Content-Type"));
        using var json = JsonDocument.Parse(response.Body);
        var root = json.RootElement;
        Assert.Equal("POST", root.GetProperty("method").GetString());
        Assert.Equal("/reflect?q=1&r=%20", root.GetProperty("target").GetString());
        Assert.Equal("HTTP/1.1", root.GetProperty("protocol").GetString());
        var headers = Fields(root.GetProperty("headers"));
        Assert.Contains(("Host", "downstream.example"), headers);
        Assert.Contains(("Transfer-Encoding", "chunked"), headers);
        Assert.Equal(["a", "b"], headers.Where(h => h.Name == "X-Twice").Select(h => h.Value));
        Assert.Equal([("X-Check", "done")], Fields(root.GetProperty("trailers")));
        Assert.Equal(11, root.GetProperty("bodyLength").GetInt64());
        Assert.Equal(Convert.ToHexStringLower(SHA256.HashData("hello world"u8)), root.GetProperty("bodySha256").GetString());
        Assert.False(root.GetProperty("bodyTruncated").GetBoolean());
        Assert.Equal("hello world", Encoding.ASCII.GetString(root.GetProperty("body").GetBytesFromBase64()));
    }

    [Fact]
    public async Task Reflect_keeps_the_first_MiB_of_a_larger_body_and_counts_and_hashes_all_of_it()
    {
        var body = RandomBody(global::Downstream.DownstreamHandler.ReflectedBodyLimit + 1000, seed: 4);
        await using var client = await Origin.ConnectAsync();
        await client.SendAsync($"PUT /reflect HTTP/1.1\r\nHost: downstream.example\r\nContent-Length: {body.Length}\r\n\r\n");
        await client.SendAsync(body);
        var response = await client.ReadResponseAsync("PUT", s_largeCap);

        Assert.NotNull(response);
        Assert.Equal(200, response.Status);
        using var json = JsonDocument.Parse(response.Body);
        var root = json.RootElement;
        Assert.Equal(body.Length, root.GetProperty("bodyLength").GetInt64());
        Assert.Equal(Convert.ToHexStringLower(SHA256.HashData(body)), root.GetProperty("bodySha256").GetString());
        Assert.True(root.GetProperty("bodyTruncated").GetBoolean());
        Assert.Equal(body.AsSpan(0, global::Downstream.DownstreamHandler.ReflectedBodyLimit).ToArray(), root.GetProperty("body").GetBytesFromBase64());
    }

    [Theory]
    [InlineData("/early", 413)]
    [InlineData("/early/401", 401)]
    public async Task Early_answers_before_the_body_is_sent(string path, int status)
    {
        await using var client = await Origin.ConnectAsync();
        // 10 MiB announced, 64 KiB sent: the answer can only come from an downstream that did not wait for the body.
        await client.SendAsync($"POST {path} HTTP/1.1\r\nHost: downstream.example\r\nContent-Length: {10 * 1024 * 1024}\r\n\r\n");
        await client.SendAsync(RandomBody(Piece, seed: 5));

        var response = await client.ReadResponseAsync("POST");

        Assert.NotNull(response);
        Assert.Equal(status, response.Status);
        Assert.Equal($"{status}: answered before reading the request body\n", response.BodyText);
        Assert.Equal(NamedDownstream.Name, response.Header("X-Downstream"));
    }

    [Fact]
    public async Task Early_refuses_a_code_that_is_no_final_status()
    {
        await using var client = await Origin.ConnectAsync();
        await client.SendAsync("POST /early/100 HTTP/1.1\r\nHost: downstream.example\r\nContent-Length: 0\r\n\r\n");

        var response = await client.ReadResponseAsync("POST");

        Assert.Equal(400, response?.Status);
    }

    [Theory]
    [InlineData("GET", "/")]
    [InlineData("GET", "/?s=0")]
    [InlineData("GET", "/chunked")]
    [InlineData("GET", "/status/404")]
    [InlineData("GET", "/status/204")]
    [InlineData("POST", "/echo")]
    [InlineData("POST", "/reflect")]
    [InlineData("POST", "/early/500")]
    [InlineData("GET", "/health")]
    [InlineData("HEAD", "/anything")]
    public async Task Every_response_names_the_replica(string method, string path)
    {
        await using var client = await Origin.ConnectAsync();
        await client.SendAsync($"{method} {path} HTTP/1.1\r\nHost: downstream.example\r\nContent-Length: 0\r\n\r\n");

        var response = await client.ReadResponseAsync(method);

        Assert.NotNull(response);
        Assert.Equal([NamedDownstream.Name], response.Values("X-Downstream"));
    }

    [Fact]
    public async Task The_replica_name_defaults_to_the_host_name()
    {
        await using var unnamed = await DownstreamUnderTest.StartAsync();
        await using var client = await unnamed.ConnectAsync();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: downstream.example\r\n\r\n");

        var response = await client.ReadResponseAsync();

        Assert.Equal(Dns.GetHostName(), response?.Header("X-Downstream"));
    }

    [Theory]
    [InlineData("two words")]
    [InlineData("caf\u00e9")]
    [InlineData("a-name-longer-than-sixty-four-characters-is-refused-as-a-header-value")]
    public void A_name_that_is_no_header_value_is_refused(string name)
    {
        var e = Assert.Throws<global::Downstream.DownstreamOptionsException>(() => global::Downstream.DownstreamHost.Build(["--name", name]));

        Assert.Equal($"--name '{name}' is not 1 to 64 visible ASCII characters without spaces.", e.Message);
    }

    [Fact]
    public async Task Health_answers_200_and_503_after_fail_until_ok()
    {
        try
        {
            Assert.Equal((200, "healthy\n"), await SendAsync("GET", "/health"));
            Assert.Equal(405, (await SendAsync("GET", "/health/fail")).Status);
            Assert.Equal(200, (await SendAsync("POST", "/health/fail")).Status);
            Assert.Equal((503, "failing\n"), await SendAsync("GET", "/health"));
            Assert.Equal((503, ""), await SendAsync("HEAD", "/health"));
            Assert.Equal(200, (await SendAsync("POST", "/health/ok")).Status);
            Assert.Equal((200, "healthy\n"), await SendAsync("GET", "/health"));
        }
        finally
        {
            await SendAsync("POST", "/health/ok");
        }
    }

    private async Task<(int Status, string Body)> SendAsync(string method, string path)
    {
        await using var client = await Origin.ConnectAsync();
        await client.SendAsync($"{method} {path} HTTP/1.1\r\nHost: downstream.example\r\nContent-Length: 0\r\n\r\n");
        var response = await client.ReadResponseAsync(method);
        Assert.NotNull(response);
        return (response.Status, response.BodyText);
    }

    private static byte[] RandomBody(int size, int seed)
    {
        var body = new byte[size];
        new Random(seed).NextBytes(body);
        return body;
    }

    private static List<(string Name, string Value)> Fields(JsonElement array) =>
        [.. array.EnumerateArray().Select(pair => (pair[0].GetString()!, pair[1].GetString()!))];

    private static async Task<List<string>> ReadHeadAsync(ByteReader reader)
    {
        var lines = new List<string>();
        while (true)
        {
            var line = await reader.ReadLineAsync(1 << 16, Wire.Deadline());
            Assert.True(line is not null && line[^1] == '\n', $"the head ended early after [{string.Join(" | ", lines)}]");
            var text = Encoding.Latin1.GetString(line.AsSpan(0, line.Length - 1)).TrimEnd('\r');
            if (text.Length == 0)
            {
                return lines;
            }
            lines.Add(text);
        }
    }
}
