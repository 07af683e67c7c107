using System.Globalization;
using System.Net;
using System.Net.Sockets;

namespace LLRP.Tests.Infrastructure;

/// <summary>
/// A raw TCP downstream on 127.0.0.1 that parses what the proxy forwards with strict canonical framing (CRLF only,
/// exactly one of Content-Length / chunked / none), records it, and answers with a scripted reply.
/// </summary>
public sealed class RecordingDownstream : IAsyncDisposable
{
    private const string Tchars = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly CancellationTokenSource _stop = new();
    private readonly object _lock = new();
    private readonly List<RecordedRequest> _requests = [];
    private readonly List<PartialRequest> _partials = [];
    private readonly Dictionary<int, string> _midRequest = [];
    private readonly List<Socket> _sockets = [];
    private Func<RecordedRequest, DownstreamReply>? _responder;
    private TaskCompletionSource _release = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _epoch;
    private int _connections;
    private int _heldClosed;
    private int _closedBetweenRequests;
    private Task? _acceptLoop;

    public int Port { get; private set; }

    /// <summary>Connections accepted since the downstream started.</summary>
    public int AcceptedConnections => Volatile.Read(ref _connections);

    /// <summary>Connections held by <see cref="DownstreamReply.NeverWatchingClose"/> that the proxy closed.</summary>
    public int HeldConnectionsClosed => Volatile.Read(ref _heldClosed);

    /// <summary>Connections the proxy closed while idle: the stream ended where the next request line would start.</summary>
    public int ClosedBetweenRequests => Volatile.Read(ref _closedBetweenRequests);

    public void Start()
    {
        _listener.Start(512);
        Port = ((IPEndPoint)_listener.LocalEndpoint).Port;
        _acceptLoop = AcceptLoopAsync();
    }

    /// <summary>
    /// Refuses new connections from now on (the port is closed) and keeps serving the ones already open: a downstream
    /// on its way down, as seen between its last answer and its last close.
    /// </summary>
    public void StopAccepting() => _listener.Stop();

    /// <summary>The reply for every request that is not a probe; null restores the default (200, "ok").</summary>
    public Func<RecordedRequest, DownstreamReply>? Responder
    {
        set
        {
            lock (_lock)
            {
                _responder = value;
            }
        }
    }

    /// <summary>Forget everything recorded, restore the default reply and let held connections go.</summary>
    public void Reset()
    {
        TaskCompletionSource release;
        lock (_lock)
        {
            _epoch++;
            _requests.Clear();
            _partials.Clear();
            _responder = null;
            release = _release;
            _release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        }
        release.TrySetResult();
    }

    public IReadOnlyList<RecordedRequest> Requests
    {
        get
        {
            lock (_lock)
            {
                return [.. _requests];
            }
        }
    }

    /// <summary>Recorded requests other than the suite's own probes.</summary>
    public IReadOnlyList<RecordedRequest> Forwarded => Requests.Where(r => !r.IsProbe).ToList();

    public IReadOnlyList<PartialRequest> Partials
    {
        get
        {
            lock (_lock)
            {
                return [.. _partials];
            }
        }
    }

    /// <summary>Heads of requests whose bytes have started to arrive and are not complete yet.</summary>
    public IReadOnlyList<string> InFlight
    {
        get
        {
            lock (_lock)
            {
                return [.. _midRequest.Values];
            }
        }
    }

    /// <summary>Waits (bounded) until <paramref name="count"/> non-probe requests are recorded.</summary>
    public async Task<IReadOnlyList<RecordedRequest>> WaitForForwardedAsync(int count, TimeSpan? cap = null)
    {
        var deadline = DateTime.UtcNow + (cap ?? Wire.Cap);
        while (true)
        {
            var forwarded = Forwarded;
            if (forwarded.Count >= count || DateTime.UtcNow > deadline)
            {
                return forwarded;
            }
            await Task.Delay(5);
        }
    }

    public async Task<bool> WaitUntilAsync(Func<RecordingDownstream, bool> condition, TimeSpan? cap = null)
    {
        var deadline = DateTime.UtcNow + (cap ?? Wire.Cap);
        while (!condition(this))
        {
            if (DateTime.UtcNow > deadline)
            {
                return false;
            }
            await Task.Delay(5);
        }
        return true;
    }

    public string Describe()
    {
        lock (_lock)
        {
            return $"downstream recorded {_requests.Count} request(s): [{string.Join(" | ", _requests)}]; " +
                $"partial: [{string.Join(" | ", _partials)}]; in flight: [{string.Join(" | ", _midRequest.Values)}]";
        }
    }

    public async ValueTask DisposeAsync()
    {
        _stop.Cancel();
        _listener.Stop();
        Reset();
        lock (_lock)
        {
            foreach (var s in _sockets)
            {
                s.Dispose();
            }
        }
        if (_acceptLoop is not null)
        {
            await _acceptLoop.ConfigureAwait(false);
        }
        _stop.Dispose();
    }

    private async Task AcceptLoopAsync()
    {
        while (!_stop.IsCancellationRequested)
        {
            Socket socket;
            try
            {
                socket = await _listener.AcceptSocketAsync(_stop.Token);
            }
            catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
            {
                return;
            }
            socket.NoDelay = true;
            var id = Interlocked.Increment(ref _connections);
            lock (_lock)
            {
                _sockets.Add(socket);
            }
            _ = Task.Run(() => ServeAsync(socket, id));
        }
    }

    private async Task ServeAsync(Socket socket, int id)
    {
        try
        {
            await using var stream = new NetworkStream(socket, ownsSocket: true);
            var reader = new ByteReader(stream);
            for (var index = 0; ; index++)
            {
                var keepGoing = await ServeOneAsync(stream, reader, id, index);
                if (!keepGoing)
                {
                    return;
                }
            }
        }
        catch (Exception e) when (e is IOException or SocketException or ObjectDisposedException or OperationCanceledException)
        {
        }
        finally
        {
            lock (_lock)
            {
                _midRequest.Remove(id);
                _sockets.Remove(socket);
            }
        }
    }

    private async Task<bool> ServeOneAsync(NetworkStream stream, ByteReader reader, int id, int index)
    {
        var ct = _stop.Token;
        var first = await reader.ReadLineAsync(1 << 20, ct);
        if (first is null)
        {
            Interlocked.Increment(ref _closedBetweenRequests);
            return false;
        }
        int epoch;
        lock (_lock)
        {
            epoch = _epoch;
            _midRequest[id] = Wire.Show(first, 200);
        }

        var head = new List<byte>(first);
        var lines = new List<byte[]> { first };
        while (true)
        {
            var line = lines[^1];
            if (line[^1] != '\n')
            {
                RecordPartial(epoch, id, Wire.Show(head.ToArray(), 300), 0, "connection ended inside the head");
                return false;
            }
            if (lines.Count > 1 && (line.Length == 1 || (line.Length == 2 && line[0] == '\r')))
            {
                break;
            }
            var next = await reader.ReadLineAsync(1 << 20, ct);
            if (next is null)
            {
                RecordPartial(epoch, id, Wire.Show(head.ToArray(), 300), 0, "connection ended inside the head");
                return false;
            }
            head.AddRange(next);
            lines.Add(next);
        }

        var request = ParseHead(id, index, [.. head], lines);
        lock (_lock)
        {
            _midRequest[id] = request.RequestLine;
        }

        // RFC 9110 §10.1.1: asked for 100 (Continue), an origin that will read the body says so first, as Kestrel does;
        // the HttpMessageInvoker variants' own expectation then waits for no Expect100ContinueTimeout here.
        if (request.Values("Expect").Any(v => v.Equals("100-continue", StringComparison.OrdinalIgnoreCase)))
        {
            await stream.WriteAsync("HTTP/1.1 100 Continue\r\n\r\n"u8.ToArray(), ct);
        }

        var (complete, canContinue) = await ReadBodyAsync(reader, request, ct);
        if (!complete)
        {
            RecordPartial(epoch, id, request.RequestLine, request.Body.Length, "connection ended inside the body");
            return false;
        }

        Func<RecordedRequest, DownstreamReply>? responder;
        Task release;
        lock (_lock)
        {
            _midRequest.Remove(id);
            if (epoch == _epoch)
            {
                _requests.Add(request);
            }
            responder = _responder;
            release = _release.Task;
        }
        if (!canContinue)
        {
            return false;
        }

        var reply = request.IsProbe || responder is null ? DownstreamReply.Ok() : responder(request);
        if (reply.Hold)
        {
            if (reply.WatchClose)
            {
                var closed = ReadUntilClosedAsync(stream, ct);
                if (await Task.WhenAny(release.WaitAsync(ct), closed) == closed)
                {
                    Interlocked.Increment(ref _heldClosed);
                }
                return false;
            }
            await release.WaitAsync(ct);
            return false;
        }
        if (reply.ByteByByte)
        {
            for (var i = 0; i < reply.Bytes.Length; i++)
            {
                await stream.WriteAsync(reply.Bytes.AsMemory(i, 1), ct);
                await stream.FlushAsync(ct);
            }
        }
        else if (reply.Bytes.Length > 0)
        {
            await stream.WriteAsync(reply.Bytes, ct);
        }
        return !reply.CloseAfter;
    }

    // Ends when the peer closes or resets the connection; bytes it sends meanwhile are dropped.
    private static async Task ReadUntilClosedAsync(NetworkStream stream, CancellationToken ct)
    {
        var scratch = new byte[256];
        try
        {
            while (await stream.ReadAsync(scratch, ct) > 0)
            {
            }
        }
        catch (IOException)
        {
            // A reset is a close too.
        }
    }

    private void RecordPartial(int epoch, int id, string head, int bodyBytes, string reason)
    {
        lock (_lock)
        {
            _midRequest.Remove(id);
            if (epoch == _epoch)
            {
                _partials.Add(new PartialRequest(id, head, bodyBytes, reason));
            }
        }
    }

    private static RecordedRequest ParseHead(int id, int index, byte[] rawHead, List<byte[]> lines)
    {
        var violations = new List<string>();
        foreach (var line in lines)
        {
            var crs = line.Count(b => b == '\r');
            if (line.Length < 2 || line[^2] != '\r' || crs != 1)
            {
                violations.Add($"line not ended by exactly one CRLF: '{Wire.Show(line, 100)}' (RFC 9112 §2.2)");
            }
        }

        var requestLine = Wire.Text(Trim(lines[0]));
        var parts = requestLine.Split(' ');
        string method = "", target = "", version = "";
        if (parts.Length == 3)
        {
            (method, target, version) = (parts[0], parts[1], parts[2]);
        }
        else
        {
            violations.Add($"request line is not 'method SP target SP version': '{requestLine}' (RFC 9112 §3)");
        }
        if (version != "HTTP/1.1")
        {
            violations.Add($"forwarded version '{version}' is not HTTP/1.1");
        }
        if (method.Length == 0 || method.Any(c => !Tchars.Contains(c)))
        {
            violations.Add($"method '{method}' is not a token");
        }

        var headers = new List<KeyValuePair<string, string>>();
        foreach (var raw in lines.Skip(1).Take(lines.Count - 2))
        {
            var line = Wire.Text(Trim(raw));
            if (line.Length > 0 && (line[0] == ' ' || line[0] == '\t'))
            {
                violations.Add($"obs-fold or whitespace-led line '{Wire.Show(line)}' (RFC 9112 §5.2)");
                continue;
            }
            var colon = line.IndexOf(':', StringComparison.Ordinal);
            if (colon < 0)
            {
                violations.Add($"header line without ':' '{Wire.Show(line)}'");
                continue;
            }
            var name = line[..colon];
            var value = line[(colon + 1)..].Trim(' ', '\t');
            if (name.Length == 0 || name.Any(c => !Tchars.Contains(c)))
            {
                violations.Add($"field name '{Wire.Show(name)}' is not a token (RFC 9112 §5.1)");
            }
            if (value.Any(c => (c < 0x20 && c != '\t') || c == 0x7F))
            {
                violations.Add($"field value of '{name}' has a control byte: '{Wire.Show(value)}' (RFC 9110 §5.5)");
            }
            headers.Add(new(name, value));
        }

        var request = new RecordedRequest
        {
            ConnectionId = id,
            IndexOnConnection = index,
            RawHead = rawHead,
            RequestLine = requestLine,
            Method = method,
            Target = target,
            Version = version,
            Headers = headers,
        };
        request.Violations.AddRange(violations);
        return request;
    }

    /// <summary>(complete, connection still usable).</summary>
    private static async Task<(bool Complete, bool CanContinue)> ReadBodyAsync(ByteReader reader, RecordedRequest request, CancellationToken ct)
    {
        var cls = request.Values("Content-Length").ToList();
        var tes = request.Values("Transfer-Encoding").ToList();
        if (cls.Count > 0 && tes.Count > 0)
        {
            request.Violations.Add("forwarded both Content-Length and Transfer-Encoding (RFC 9112 §6.3)");
            return (true, false);
        }
        if (tes.Count > 0)
        {
            if (tes.Count != 1 || !string.Equals(tes[0], "chunked", StringComparison.OrdinalIgnoreCase))
            {
                request.Violations.Add($"forwarded Transfer-Encoding '{string.Join("' '", tes)}' is not exactly one 'chunked'");
                return (true, false);
            }
            request.Framing = Framing.Chunked;
            return await ReadChunkedAsync(reader, request, ct);
        }
        if (cls.Count > 0)
        {
            if (cls.Count != 1 || cls[0].Length == 0 || !cls[0].All(char.IsAsciiDigit) || cls[0].Length > 15)
            {
                request.Violations.Add($"forwarded Content-Length '{string.Join("' '", cls)}' is not exactly one 1*DIGIT");
                return (true, false);
            }
            request.Framing = Framing.ContentLength;
            var length = long.Parse(cls[0], CultureInfo.InvariantCulture);
            request.Body = await reader.ReadUpToAsync((int)length, ct);
            return (request.Body.Length == length, true);
        }
        request.Framing = Framing.None;
        return (true, true);
    }

    private static async Task<(bool, bool)> ReadChunkedAsync(ByteReader reader, RecordedRequest request, CancellationToken ct)
    {
        var body = new List<byte>();
        while (true)
        {
            var line = await reader.ReadLineAsync(1 << 16, ct);
            if (line is null || line[^1] != '\n')
            {
                request.Body = [.. body];
                return (false, false);
            }
            if (line.Length < 2 || line[^2] != '\r')
            {
                request.Violations.Add($"chunk-size line not ended by CRLF: '{Wire.Show(line)}'");
            }
            var text = Wire.Text(Trim(line));
            var semicolon = text.IndexOf(';', StringComparison.Ordinal);
            if (semicolon >= 0)
            {
                request.Violations.Add($"chunk extension forwarded: '{Wire.Show(text)}' (the proxy must re-chunk, not copy)");
                text = text[..semicolon];
            }
            if (text.Length == 0 || text.Length > 15 || !text.All(char.IsAsciiHexDigit))
            {
                request.Violations.Add($"chunk-size '{Wire.Show(text)}' is not 1*HEXDIG");
                request.Body = [.. body];
                return (true, false);
            }
            var size = long.Parse(text, NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture);
            if (size == 0)
            {
                break;
            }
            var data = await reader.ReadUpToAsync((int)size, ct);
            body.AddRange(data);
            if (data.Length < size)
            {
                request.Body = [.. body];
                return (false, false);
            }
            var crlf = await reader.ReadUpToAsync(2, ct);
            if (crlf.Length < 2)
            {
                request.Body = [.. body];
                return (false, false);
            }
            if (crlf[0] != '\r' || crlf[1] != '\n')
            {
                request.Violations.Add($"chunk data not followed by CRLF: '{Wire.Show(crlf)}'");
                request.Body = [.. body];
                return (true, false);
            }
        }
        request.Body = [.. body];
        while (true)
        {
            var line = await reader.ReadLineAsync(1 << 16, ct);
            if (line is null || line[^1] != '\n')
            {
                return (false, false);
            }
            if (line.Length < 2 || line[^2] != '\r')
            {
                request.Violations.Add($"trailer line not ended by CRLF: '{Wire.Show(line)}'");
            }
            var text = Wire.Text(Trim(line));
            if (text.Length == 0)
            {
                return (true, true);
            }
            var colon = text.IndexOf(':', StringComparison.Ordinal);
            request.Trailers.Add(colon < 0 ? new(text, "") : new(text[..colon], text[(colon + 1)..].Trim(' ', '\t')));
        }
    }

    private static ReadOnlySpan<byte> Trim(byte[] line)
    {
        var span = line.AsSpan();
        if (span.Length > 0 && span[^1] == '\n')
        {
            span = span[..^1];
        }
        if (span.Length > 0 && span[^1] == '\r')
        {
            span = span[..^1];
        }
        return span;
    }
}
