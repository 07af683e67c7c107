using System.Globalization;
using System.Security.Cryptography;
using System.Text;

namespace LLRP.Soak;

/// <summary>How a client connection behaves over its life.</summary>
internal enum ConnectionKind
{
    /// <summary>Keep-alive for 1 to <see cref="Traffic.MaxRequestsPerConnection"/> requests, then closed by the client.</summary>
    KeepAlive,
    /// <summary>One request with Connection: close; the proxy must close after the response.</summary>
    OneShot,
    /// <summary>Keep-alive; after its last response the client shuts its sending side down and the proxy must close.</summary>
    HalfCloseAfter,
    /// <summary>One request, then the client shuts its sending side down at once. The proxy answers, or (as Kestrel does
    /// with a client's FIN during a request) takes it as the client leaving and closes without an answer, or with the
    /// answer cut.</summary>
    HalfCloseEarly,
    /// <summary>Keep-alive, but the head goes out in pieces, uploads slowly and the body is read slowly.</summary>
    Slow,
}

/// <summary>Counters of what every response came to, by outcome and by whether an origin restart was near.</summary>
internal sealed class Tally
{
    private long _ok;
    private long _errorNearRestart;
    private long _cutNearRestart;
    private long _noAnswerNearRestart;
    private long _halfCloseNoAnswer;
    private long _unexpectedError;
    private long _lost;
    private long _corrupt;
    private long _closeNotSeen;
    private long _bytesChecked;

    public long Ok => Interlocked.Read(ref _ok);
    public long ErrorNearRestart => Interlocked.Read(ref _errorNearRestart);
    public long CutNearRestart => Interlocked.Read(ref _cutNearRestart);
    public long NoAnswerNearRestart => Interlocked.Read(ref _noAnswerNearRestart);
    public long HalfCloseNoAnswer => Interlocked.Read(ref _halfCloseNoAnswer);
    public long UnexpectedError => Interlocked.Read(ref _unexpectedError);
    public long Lost => Interlocked.Read(ref _lost);
    public long Corrupt => Interlocked.Read(ref _corrupt);
    public long CloseNotSeen => Interlocked.Read(ref _closeNotSeen);
    public long BytesChecked => Interlocked.Read(ref _bytesChecked);

    /// <summary>Every response counted, whatever it came to.</summary>
    public long Total => Ok + ErrorNearRestart + CutNearRestart + NoAnswerNearRestart + HalfCloseNoAnswer + UnexpectedError + Lost + Corrupt;

    public readonly List<string> Problems = [];

    public void Count(Outcome outcome, bool nearRestart, ConnectionKind kind, long bytes, string what)
    {
        switch (outcome)
        {
            case Outcome.Ok:
                Interlocked.Increment(ref _ok);
                Interlocked.Add(ref _bytesChecked, bytes);
                return;
            case Outcome.ErrorAnswer when nearRestart:
                Interlocked.Increment(ref _errorNearRestart);
                return;
            case Outcome.Cut when nearRestart:
                Interlocked.Increment(ref _cutNearRestart);
                return;
            // The proxy takes a client's FIN during an exchange as the client leaving and aborts the exchange, so the
            // answer may be missing or cut (its framing shows it): either is what that client asked for, not a loss.
            case Outcome.NoAnswer or Outcome.Cut when kind == ConnectionKind.HalfCloseEarly:
                Interlocked.Increment(ref _halfCloseNoAnswer);
                return;
            case Outcome.NoAnswer when nearRestart:
                Interlocked.Increment(ref _noAnswerNearRestart);
                return;
            case Outcome.ErrorAnswer:
                Interlocked.Increment(ref _unexpectedError);
                break;
            case Outcome.Corrupt:
                Interlocked.Increment(ref _corrupt);
                break;
            default:
                Interlocked.Increment(ref _lost);
                break;
        }
        Note($"{outcome}: {what}");
    }

    public void CountCloseNotSeen(string what)
    {
        Interlocked.Increment(ref _closeNotSeen);
        Note($"close not seen: {what}");
    }

    private void Note(string problem)
    {
        lock (Problems)
        {
            // The first ones say what went wrong; thousands more would say nothing new.
            if (Problems.Count < 200)
            {
                Problems.Add($"{DateTime.UtcNow:HH:mm:ss.fff} {problem}");
            }
        }
    }
}

/// <summary>
/// The soak's clients: workers that each keep one client connection of a random <see cref="ConnectionKind"/> and send
/// a random mix of downloads (Content-Length and chunked) and uploads (echoed back, Content-Length and chunked) of
/// sizes from 10 B to 1 MiB, each body checked by SHA-256.
/// </summary>
internal sealed class Traffic
{
    public const int MaxRequestsPerConnection = 50;

    // How soon the proxy must close a connection the client ended (its FIN) or asked to close: it closes at once, so
    // anything near this bound is a connection left open.
    private static readonly TimeSpan CloseWithin = TimeSpan.FromSeconds(10);

    // Sizes of bodies, both ways: mostly small, as real traffic is, with the large ones that cross buffer sizes (the
    // proxy's 16 KiB request-body and 64 KiB response-body buffers) and take many sends.
    private static readonly int[] Sizes = [10, 10, 10, 100, 1024, 1024, 4096, 16 * 1024 + 1, 65536, 100_000, 262_144, 1024 * 1024];

    private readonly int _port;
    private readonly Func<bool> _nearRestart;
    private readonly Tally _tally;
    private readonly byte[] _random = new byte[1024 * 1024 + 4096];
    private readonly Dictionary<int, Expected> _downloads = [];
    private readonly Pacer _pacer;

    public Traffic(int port, Func<bool> nearRestart, Tally tally, Pacer pacer)
    {
        _port = port;
        _nearRestart = nearRestart;
        _tally = tally;
        _pacer = pacer;
        new Random(41).NextBytes(_random);
        foreach (var size in Sizes)
        {
            _downloads[size] = new Expected(size, SHA256.HashData(Enumerable.Repeat((byte)'a', size).ToArray()));
        }
    }

    public async Task RunWorkerAsync(int seed, CancellationToken stop)
    {
        var random = new Random(seed);
        while (!stop.IsCancellationRequested)
        {
            try
            {
                await RunConnectionAsync(random, stop);
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                return;
            }
        }
    }

    private static ConnectionKind PickKind(Random random) => random.Next(100) switch
    {
        < 55 => ConnectionKind.KeepAlive,
        < 70 => ConnectionKind.OneShot,
        < 80 => ConnectionKind.HalfCloseAfter,
        < 90 => ConnectionKind.HalfCloseEarly,
        _ => ConnectionKind.Slow,
    };

    private async Task RunConnectionAsync(Random random, CancellationToken stop)
    {
        var kind = PickKind(random);
        var requests = kind is ConnectionKind.OneShot or ConnectionKind.HalfCloseEarly ? 1 : random.Next(1, MaxRequestsPerConnection + 1);
        await _pacer.WaitTurnAsync(stop);
        Wire wire;
        try
        {
            wire = await Wire.ConnectAsync(_port, stop);
        }
        catch (Exception e) when (e is not OperationCanceledException || !stop.IsCancellationRequested)
        {
            _tally.Count(Outcome.NoAnswer, _nearRestart(), ConnectionKind.KeepAlive, 0, $"connect failed: {e.Message}");
            return;
        }
        using (wire)
        {
            for (var i = 0; i < requests; i++)
            {
                if (i > 0)
                {
                    await _pacer.WaitTurnAsync(stop);
                }
                var last = i == requests - 1;
                var (outcome, close) = await OneRequestAsync(wire, random, kind, last, stop);
                if (outcome != Outcome.Ok || close)
                {
                    if (outcome == Outcome.Ok && kind == ConnectionKind.OneShot)
                    {
                        break;
                    }
                    if (outcome == Outcome.Ok && kind is not ConnectionKind.OneShot and not ConnectionKind.HalfCloseEarly)
                    {
                        _tally.CountCloseNotSeen($"{kind}: the proxy closed a keep-alive connection after a 200");
                    }
                    return;
                }
            }
            // Every answered connection of these kinds must end with the proxy's close: no descriptor left behind.
            if (kind is ConnectionKind.HalfCloseAfter or ConnectionKind.OneShot)
            {
                if (kind == ConnectionKind.HalfCloseAfter)
                {
                    wire.ShutdownSend();
                }
                if (!await wire.ClosedByPeerAsync(CloseWithin, stop))
                {
                    _tally.CountCloseNotSeen($"{kind}: the proxy did not close within {CloseWithin.TotalSeconds} s");
                }
            }
        }
    }

    private async Task<(Outcome Outcome, bool Close)> OneRequestAsync(Wire wire, Random random, ConnectionKind kind, bool last, CancellationToken stop)
    {
        var size = Sizes[random.Next(Sizes.Length)];
        var closeHeader = kind == ConnectionKind.OneShot ? "Connection: close\r\n" : "";
        var slow = kind == ConnectionKind.Slow;
        byte[] head;
        ReadOnlyMemory<byte> body = default;
        Expected expected;
        string what;
        var chunkedUpload = false;
        switch (random.Next(4))
        {
            case 0:
                head = Head($"GET /?s={size} HTTP/1.1\r\nHost: soak\r\n{closeHeader}\r\n");
                expected = _downloads[size];
                what = $"GET /?s={size}";
                break;
            case 1:
                head = Head($"GET /chunked?s={size} HTTP/1.1\r\nHost: soak\r\n{closeHeader}\r\n");
                expected = _downloads[size];
                what = $"GET /chunked?s={size}";
                break;
            default:
                chunkedUpload = random.Next(2) == 0;
                body = _random.AsMemory(random.Next(4096), size);
                expected = new Expected(size, SHA256.HashData(body.Span));
                head = Head(chunkedUpload
                    ? $"POST /echo HTTP/1.1\r\nHost: soak\r\nTransfer-Encoding: chunked\r\n{closeHeader}\r\n"
                    : $"POST /echo HTTP/1.1\r\nHost: soak\r\nContent-Length: {size}\r\n{closeHeader}\r\n");
                what = $"POST /echo {(chunkedUpload ? "chunked" : "Content-Length")} {size} B";
                break;
        }
        what = $"{kind} request {wire.Requests + 1}: {what}";
        wire.Requests++;

        // The upload goes out while the response is read: /echo answers as it reads, so a client that sent a large
        // body before reading would deadlock against full socket buffers (as it would with any streaming origin).
        var send = SendRequestAsync(wire, head, body, chunkedUpload, slow, kind == ConnectionKind.HalfCloseEarly, stop);
        var response = await wire.ReadResponseAsync(expected, slow, stop);
        try
        {
            // Bounded: a proxy that answered and neither reads the rest nor closes must not hold the worker.
            await send.WaitAsync(Wire.ReadTimeout, stop);
        }
        catch (Exception) when (!stop.IsCancellationRequested)
        {
            // A send fails when the proxy answered and closed (an origin restart) or gave up: the response decides.
        }
        var near = _nearRestart();
        _tally.Count(response.Outcome, near, kind, expected.Length, $"{what}: {response.Detail}{(near ? " (near a restart)" : "")}");
        return (response.Outcome, response.Close || last && kind == ConnectionKind.OneShot);
    }

    private static async Task SendRequestAsync(Wire wire, byte[] head, ReadOnlyMemory<byte> body, bool chunked, bool slow,
        bool shutdownAfter, CancellationToken stop)
    {
        // A slow client sends its head in three pieces and its body in 8 KiB pieces, 20 ms and 2 ms apart: well
        // inside requestHeadersTimeout (30 s), yet every wait for more of a head or body is exercised.
        var headPiece = slow ? Math.Max(1, head.Length / 3) : head.Length;
        await wire.SendAsync(head, headPiece, TimeSpan.FromMilliseconds(20), stop);
        if (chunked)
        {
            // Chunks of up to 32 KiB, then the last chunk.
            while (!body.IsEmpty)
            {
                var piece = body[..Math.Min(32 * 1024, body.Length)];
                await wire.SendAsync(Head($"{piece.Length:x}\r\n"), int.MaxValue, default, stop);
                await wire.SendAsync(piece, slow ? 8192 : int.MaxValue, TimeSpan.FromMilliseconds(2), stop);
                await wire.SendAsync("\r\n"u8.ToArray(), int.MaxValue, default, stop);
                body = body[piece.Length..];
            }
            await wire.SendAsync("0\r\n\r\n"u8.ToArray(), int.MaxValue, default, stop);
        }
        else if (!body.IsEmpty)
        {
            await wire.SendAsync(body, slow ? 8192 : int.MaxValue, TimeSpan.FromMilliseconds(2), stop);
        }
        if (shutdownAfter)
        {
            wire.ShutdownSend();
        }
    }

    private static byte[] Head(string text) => Encoding.ASCII.GetBytes(text);
}

/// <summary>
/// Spaces the workers' requests at a target rate (open loop: each turn has its own start time, whether or not
/// earlier ones were late); a rate of 0 runs unpaced, as fast as the workers go.
/// </summary>
internal sealed class Pacer
{
    private long _turns;
    private long _startTicks = Environment.TickCount64;
    private double _perSecond;

    public void Start(double perSecond)
    {
        Volatile.Write(ref _perSecond, perSecond);
        Volatile.Write(ref _startTicks, Environment.TickCount64);
        Interlocked.Exchange(ref _turns, 0);
    }

    public async Task WaitTurnAsync(CancellationToken stop)
    {
        var rate = Volatile.Read(ref _perSecond);
        var turn = Interlocked.Increment(ref _turns);
        if (rate <= 0)
        {
            stop.ThrowIfCancellationRequested();
            return;
        }
        var due = Volatile.Read(ref _startTicks) + (long)(turn * 1000 / rate);
        var wait = due - Environment.TickCount64;
        if (wait > 0)
        {
            await Task.Delay(TimeSpan.FromMilliseconds(wait), stop);
        }
        stop.ThrowIfCancellationRequested();
    }

    public override string ToString() => Volatile.Read(ref _perSecond).ToString("F0", CultureInfo.InvariantCulture);
}
