using System.Globalization;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;

namespace LLRP.Tests.Infrastructure;

/// <summary>One response as the client read it.</summary>
public sealed class RawResponse
{
    public required string StatusLine { get; init; }
    public required string Version { get; init; }
    public required int Status { get; init; }
    public required IReadOnlyList<KeyValuePair<string, string>> Headers { get; init; }
    public List<RawResponse> Interim { get; } = [];
    public byte[] Body { get; set; } = [];
    public bool Chunked { get; set; }
    public bool CloseDelimited { get; set; }

    /// <summary>False when the connection ended before the framing said the body was complete.</summary>
    public bool Complete { get; set; } = true;

    public List<KeyValuePair<string, string>> Trailers { get; } = [];
    public List<string> Violations { get; } = [];

    public string BodyText => Wire.Text(Body);

    public IEnumerable<string> Values(string name) =>
        Headers.Where(h => string.Equals(h.Key, name, StringComparison.OrdinalIgnoreCase)).Select(h => h.Value);

    public string? Header(string name)
    {
        var values = Values(name).ToList();
        return values.Count == 0 ? null : string.Join(", ", values);
    }

    public override string ToString() =>
        $"{StatusLine} [{string.Join(", ", Headers.Select(h => $"{h.Key}: {h.Value}"))}] body({Body.Length}{(Complete ? "" : ", INCOMPLETE")})='{Wire.Show(Body, 120)}'" +
        (Interim.Count > 0 ? $" after interim {string.Join(",", Interim.Select(i => i.Status))}" : "");
}

public enum Ending
{
    /// <summary>The proxy closed (FIN or reset) with nothing more to read.</summary>
    Closed,

    /// <summary>The proxy sent bytes that belong to no response.</summary>
    ExtraBytes,

    /// <summary>The connection was still open when the cap elapsed.</summary>
    StillOpen,
}

/// <summary>A raw TCP client that speaks bytes to the proxy and parses responses with a correct HTTP/1.1 parser.</summary>
public sealed class RawClient : IAsyncDisposable
{
    private readonly Socket _socket;
    private readonly Stream _stream;
    private readonly ByteReader _reader;

    private RawClient(Socket socket, Stream stream)
    {
        _socket = socket;
        _stream = stream;
        _reader = new ByteReader(_stream);
    }

    /// <summary>True once a send failed because the proxy had closed or reset the connection.</summary>
    public bool SendFailed { get; private set; }

    public byte[] ExtraBytes { get; private set; } = [];

    public static async Task<RawClient> ConnectAsync(Uri proxy)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, proxy.Port), Wire.Deadline());
        var stream = new NetworkStream(socket, ownsSocket: true);
        if (proxy.Scheme != Uri.UriSchemeHttps)
        {
            return new RawClient(socket, stream);
        }
        // The same raw bytes over TLS: the proxy's https listener with the suite's test certificate.
        var tls = new SslStream(stream, leaveInnerStreamOpen: false);
        await tls.AuthenticateAsClientAsync(TestCertificates.ClientOptions("localhost"), Wire.Deadline());
        return new RawClient(socket, tls);
    }

    public Task SendAsync(string raw) => SendAsync(Wire.Bytes(raw));

    public async Task SendAsync(byte[] bytes)
    {
        if (SendFailed)
        {
            return;
        }
        try
        {
            await _stream.WriteAsync(bytes, Wire.Deadline());
        }
        catch (Exception e) when (e is IOException or SocketException or ObjectDisposedException)
        {
            // The proxy may reject and close before the whole request is sent; its response is still readable.
            SendFailed = true;
        }
    }

    /// <summary>Half-closes the sending side (the client will send nothing more).</summary>
    public void ShutdownSend()
    {
        try
        {
            _socket.Shutdown(SocketShutdown.Send);
        }
        catch (SocketException)
        {
        }
    }

    /// <summary>
    /// Reads one final response (interim 1xx responses are collected into it). Null when the proxy closed the
    /// connection before sending a status line. Fails the test when nothing happens within the cap.
    /// </summary>
    public async Task<RawResponse?> ReadResponseAsync(string method = "GET", TimeSpan? cap = null)
    {
        var ct = Wire.Deadline(cap);
        try
        {
            var interim = new List<RawResponse>();
            while (true)
            {
                var response = await ReadHeadAsync(ct);
                if (response is null)
                {
                    return null;
                }
                if (response.Status is >= 100 and < 200 && response.Status != 101)
                {
                    interim.Add(response);
                    continue;
                }
                response.Interim.AddRange(interim);
                await ReadBodyAsync(response, method, ct);
                return response;
            }
        }
        catch (OperationCanceledException)
        {
            throw new TimeoutException($"no complete response from the proxy within {(cap ?? Wire.Cap).TotalSeconds} s " +
                $"(buffered: '{Wire.Show(_reader.TakeBuffered())}')");
        }
    }

    /// <summary>Reads exactly one response head (interim or final) and nothing after it; null if closed first.</summary>
    public async Task<RawResponse?> ReadOneHeadAsync(TimeSpan? cap = null)
    {
        try
        {
            return await ReadHeadAsync(Wire.Deadline(cap));
        }
        catch (OperationCanceledException)
        {
            throw new TimeoutException($"no response head from the proxy within {(cap ?? Wire.Cap).TotalSeconds} s");
        }
    }

    /// <summary>Waits (bounded) for the proxy to close the connection.</summary>
    public async Task<Ending> WaitForEndAsync(TimeSpan? cap = null)
    {
        try
        {
            if (await _reader.AtEndAsync(Wire.Deadline(cap)))
            {
                return Ending.Closed;
            }
            ExtraBytes = _reader.TakeBuffered();
            return Ending.ExtraBytes;
        }
        catch (OperationCanceledException)
        {
            return Ending.StillOpen;
        }
    }

    /// <summary>Sends a GET for the probe path on this connection and returns its response (null if closed).</summary>
    public async Task<RawResponse?> PingAsync()
    {
        await SendAsync($"GET {Wire.PingPath} HTTP/1.1\r\nHost: ping.example\r\n\r\n");
        return await ReadResponseAsync();
    }

    public async ValueTask DisposeAsync() => await _stream.DisposeAsync();

    private async Task<RawResponse?> ReadHeadAsync(CancellationToken ct)
    {
        var violations = new List<string>();
        var first = await _reader.ReadLineAsync(1 << 20, ct);
        if (first is null)
        {
            return null;
        }
        if (first[^1] != '\n')
        {
            throw new InvalidDataException($"connection ended inside the status line '{Wire.Show(first)}'");
        }
        var statusLine = Line(first, violations);
        var parts = statusLine.Split(' ', 3);
        if (parts.Length < 2 || parts[1].Length != 3 || !int.TryParse(parts[1], NumberStyles.None, CultureInfo.InvariantCulture, out var status))
        {
            throw new InvalidDataException($"malformed status line from the proxy: '{Wire.Show(statusLine)}'");
        }
        var headers = new List<KeyValuePair<string, string>>();
        while (true)
        {
            var raw = await _reader.ReadLineAsync(1 << 20, ct);
            if (raw is null || raw[^1] != '\n')
            {
                throw new InvalidDataException($"connection ended inside the response head after '{statusLine}'");
            }
            var line = Line(raw, violations);
            if (line.Length == 0)
            {
                break;
            }
            var colon = line.IndexOf(':', StringComparison.Ordinal);
            if (colon <= 0 || line[0] is ' ' or '\t' || line[colon - 1] is ' ' or '\t')
            {
                violations.Add($"malformed response header line '{Wire.Show(line)}'");
                continue;
            }
            headers.Add(new(line[..colon], line[(colon + 1)..].Trim(' ', '\t')));
        }
        var response = new RawResponse { StatusLine = statusLine, Version = parts[0], Status = status, Headers = headers };
        response.Violations.AddRange(violations);
        return response;
    }

    private async Task ReadBodyAsync(RawResponse response, string method, CancellationToken ct)
    {
        // RFC 9112 §6.3 (1): no content for HEAD, 1xx, 204 and 304, whatever the framing fields say.
        if (method == "HEAD" || response.Status is 204 or 304 || response.Status < 200)
        {
            return;
        }
        var te = response.Header("Transfer-Encoding");
        var cl = response.Values("Content-Length").ToList();
        if (te is not null)
        {
            if (cl.Count > 0)
            {
                response.Violations.Add("response carries both Transfer-Encoding and Content-Length");
            }
            if (te.Split(',').Last().Trim().Equals("chunked", StringComparison.OrdinalIgnoreCase))
            {
                response.Chunked = true;
                await ReadChunkedAsync(response, ct);
                return;
            }
        }
        else if (cl.Count > 0)
        {
            if (cl.Count != 1 || !long.TryParse(cl[0], NumberStyles.None, CultureInfo.InvariantCulture, out var length))
            {
                throw new InvalidDataException($"invalid Content-Length in the proxy's response: '{string.Join("', '", cl)}'");
            }
            response.Body = await _reader.ReadUpToAsync((int)length, ct);
            response.Complete = response.Body.Length == length;
            return;
        }
        response.CloseDelimited = true;
        response.Body = await _reader.ReadToEndAsync(ct);
    }

    private async Task ReadChunkedAsync(RawResponse response, CancellationToken ct)
    {
        var body = new List<byte>();
        try
        {
            while (true)
            {
                var line = await _reader.ReadLineAsync(1 << 16, ct);
                if (line is null || line[^1] != '\n')
                {
                    response.Complete = false;
                    return;
                }
                var text = Line(line, response.Violations);
                var semicolon = text.IndexOf(';', StringComparison.Ordinal);
                if (semicolon >= 0)
                {
                    text = text[..semicolon];
                }
                if (!long.TryParse(text.Trim(), NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out var size) || size < 0)
                {
                    throw new InvalidDataException($"bad chunk size line '{Wire.Show(line)}' from the proxy");
                }
                if (size == 0)
                {
                    break;
                }
                var data = await _reader.ReadUpToAsync((int)size, ct);
                body.AddRange(data);
                var crlf = await _reader.ReadUpToAsync(2, ct);
                if (data.Length < size || crlf.Length < 2)
                {
                    response.Complete = false;
                    return;
                }
                if (crlf[0] != '\r' || crlf[1] != '\n')
                {
                    throw new InvalidDataException($"chunk data not followed by CRLF in the proxy's response: '{Wire.Show(crlf)}'");
                }
            }
            while (true)
            {
                var line = await _reader.ReadLineAsync(1 << 16, ct);
                if (line is null || line[^1] != '\n')
                {
                    response.Complete = false;
                    return;
                }
                var text = Line(line, response.Violations);
                if (text.Length == 0)
                {
                    return;
                }
                var colon = text.IndexOf(':', StringComparison.Ordinal);
                response.Trailers.Add(colon < 0 ? new(text, "") : new(text[..colon], text[(colon + 1)..].Trim()));
            }
        }
        finally
        {
            response.Body = [.. body];
        }
    }

    private static string Line(byte[] raw, List<string> violations)
    {
        if (raw.Length < 2 || raw[^2] != '\r')
        {
            violations.Add($"response line not ended by CRLF: '{Wire.Show(raw)}'");
            return Wire.Text(raw.AsSpan(0, raw.Length - 1));
        }
        return Wire.Text(raw.AsSpan(0, raw.Length - 2));
    }
}
