using System.Diagnostics;
using System.Net.Security;
using System.Net.WebSockets;
using System.Security.Cryptography.X509Certificates;

namespace LLRP.Jobs;

/// <summary>Where the WebSocket load goes and what it sends: the URL (ws:// or wss://), the connections, the size of
/// each binary message, and for wss:// the certificates to trust besides the system's (null: the system's only).</summary>
internal sealed record WebSocketTarget(Uri Url, int Connections, int MessageSize, X509Certificate2Collection? Trust);

/// <summary>What went wrong with a round trip or a connection.</summary>
internal enum EchoError
{
    /// <summary>The handshake failed (refused, not a 101, timed out).</summary>
    Handshake,

    /// <summary>The server (or a proxy) closed the WebSocket or the connection instead of echoing.</summary>
    Closed,

    /// <summary>The echo differs from the message: type, length or bytes.</summary>
    Mismatch,

    /// <summary>A send or receive failed (reset, aborted, protocol error).</summary>
    Failed,

    /// <summary>No echo within <see cref="WebSocketLoad.GraceSeconds"/> after the end of the run.</summary>
    Late,
}

/// <summary>The figures of one run. <see cref="Seconds"/>: the window the round trips were counted in;
/// <see cref="Connected"/>: the connections open when it began; <see cref="Errors"/>: by <see cref="EchoError"/>,
/// for round trips and handshakes begun in the window; <see cref="SetupErrors"/>: handshakes that failed before it
/// (retried; not counted as errors); <see cref="FirstErrors"/>: the first message of each kind seen.</summary>
internal sealed record WebSocketRun(
    double Seconds, int Connected, LatencyHistogram Latency, long[] Errors, long SetupErrors, IReadOnlyDictionary<EchoError, string> FirstErrors)
{
    public long RoundTrips => Latency.Count;

    public long Mismatches => Errors[(int)EchoError.Mismatch];

    /// <summary>Every error but a mismatch: the socket errors of the statistics.</summary>
    public long SocketErrors => Errors.Sum() - Mismatches;
}

/// <summary>The WebSocket job's load (<see cref="WebSocketJob"/>): <see cref="WebSocketTarget.Connections"/> connections,
/// each in a loop of one binary message sent, its echo received and compared byte for byte, the next message at once
/// (closed loop, one message in flight per connection). A run opens its connections (at most
/// <see cref="SetupSeconds"/>), then counts round trips for its duration, lets the last echoes come back (at most
/// <see cref="GraceSeconds"/>) and closes its connections (at most <see cref="CloseSeconds"/>). A failed connection is
/// opened again after <see cref="RetryPauseMilliseconds"/>: a failure is counted, never fatal.
/// The loop allocates nothing per message: each connection keeps its two buffers and its histogram for the run, and
/// the runtime's WebSocket sends and receives into memory it is given without a task per call.</summary>
internal sealed class WebSocketLoad
{
    /// <summary>The longest a handshake may take.</summary>
    public const int HandshakeSeconds = 10;

    /// <summary>The longest the connections may take to open before the window starts anyway (those still opening
    /// join it when they are open).</summary>
    public const int SetupSeconds = 30;

    /// <summary>How long an echo sent before the end has to come back; later, it is an error (Late).</summary>
    public const int GraceSeconds = 5;

    /// <summary>How long the closing handshakes may take after the grace.</summary>
    public const int CloseSeconds = 5;

    /// <summary>A run's longest overrun of its duration: setup, grace, close, and a second of slack.</summary>
    public const int OverheadSeconds = SetupSeconds + GraceSeconds + CloseSeconds + 1;

    /// <summary>The pause before a failed connection is opened again: a proxy that refuses every handshake costs
    /// each connection ten attempts a second, not a busy loop.</summary>
    public const int RetryPauseMilliseconds = 100;

    // Handshakes at once: enough to open a thousand connections in a few seconds, few enough not to overflow a
    // server's listen backlog (511 for nginx and Kestrel).
    private const int ParallelHandshakes = 32;

    private readonly WebSocketTarget _target;
    private readonly SemaphoreSlim _handshakes = new(ParallelHandshakes);
    private readonly TaskCompletionSource _go = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _setupDone = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _stopped = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Dictionary<EchoError, string> _firstErrors = [];
    private int _setupPending;
    private long _setupErrors;
    // Stopwatch timestamps of the window; until it starts, every time is before it and none after.
    private long _start = long.MaxValue, _end = long.MaxValue;

    private WebSocketLoad(WebSocketTarget target) => _target = target;

    /// <summary>One run of <paramref name="duration"/>: <paramref name="atStart"/> once the connections are open, right
    /// before the window; <paramref name="atEnd"/> right after it, before the last echoes are waited for and the
    /// connections closed (the runner's samples then cover the messages, not the handshakes).</summary>
    public static Task<WebSocketRun> RunAsync(WebSocketTarget target, TimeSpan duration, Action? atStart = null, Action? atEnd = null) =>
        new WebSocketLoad(target).RunAsync(duration, atStart, atEnd);

    /// <summary>A run of at most <paramref name="seconds"/> that the warm-up can stop early; its summary goes to
    /// <paramref name="output"/>.</summary>
    public static ILoadRun Start(WebSocketTarget target, int seconds, string output)
    {
        var load = new WebSocketLoad(target);
        var run = Task.Run(async () =>
        {
            var result = await load.RunAsync(TimeSpan.FromSeconds(seconds), null, null);
            await File.WriteAllTextAsync(output, Summary(result, target) + "\n");
        });
        return new InProcessRun(load, run);
    }

    /// <summary>One line: connections, round trips, rate, latency, errors.</summary>
    public static string Summary(WebSocketRun run, WebSocketTarget target)
    {
        var rate = run.Seconds > 0 ? run.RoundTrips / run.Seconds : 0;
        var p = run.RoundTrips == 0 ? ""
            : $"; round trip p50 {ToolText.F(Milliseconds(run.Latency.Percentile(50)), 3)} ms, p99 {ToolText.F(Milliseconds(run.Latency.Percentile(99)), 3)} ms, max {ToolText.F(Milliseconds(run.Latency.Max), 3)} ms";
        var line = $"{run.Connected} of {target.Connections} connection(s) open at the start; {run.RoundTrips} round trips in "
            + $"{ToolText.F(run.Seconds, 2)} s ({ToolText.F(rate, 1)}/s){p}; errors {run.Errors.Sum()}";
        if (run.Errors.Sum() > 0 || run.SetupErrors > 0)
        {
            line += $" ({string.Join(", ", Enum.GetValues<EchoError>().Select(e => $"{e.ToString().ToLowerInvariant()} {run.Errors[(int)e]}"))})";
        }
        if (run.SetupErrors > 0)
        {
            line += $"; {run.SetupErrors} handshake(s) failed before the start and were retried";
        }
        foreach (var (kind, message) in run.FirstErrors.OrderBy(e => e.Key))
        {
            line += $"\n  first {kind.ToString().ToLowerInvariant()} error: {message}";
        }
        return line;
    }

    public static double Milliseconds(long ticks) => ticks * 1000.0 / Stopwatch.Frequency;

    /// <summary>One connection, one message, its echo: the time of the handshake and the round trip in ms, or the
    /// reason it failed.</summary>
    public static async Task<(double? Ms, string? Failure)> FirstRoundTripAsync(WebSocketTarget target)
    {
        var load = new WebSocketLoad(target);
        var connection = new Connection(target.MessageSize);
        var started = Stopwatch.GetTimestamp();
        try
        {
            using var socket = await load.ConnectAsync();
            connection.Socket = socket;
            var echo = load.RoundTripAsync(connection, socket).AsTask();
            if (await Task.WhenAny(echo, Task.Delay(TimeSpan.FromSeconds(GraceSeconds))) != echo)
            {
                socket.Abort();
                return (null, $"no echo within {GraceSeconds} s");
            }
            var error = await echo;
            var ms = Milliseconds(Stopwatch.GetTimestamp() - started);
            await CloseQuietlyAsync(socket);
            return error is null ? (Math.Round(ms, 2), null) : (null, error.Value.Message);
        }
        catch (Exception e) when (IsConnectionFailure(e))
        {
            return (null, Describe(e));
        }
    }

    private async Task<WebSocketRun> RunAsync(TimeSpan duration, Action? atStart, Action? atEnd)
    {
        var connections = Enumerable.Range(0, _target.Connections).Select(_ => new Connection(_target.MessageSize)).ToArray();
        _setupPending = connections.Length;
        var loops = connections.Select(c => Task.Run(() => LoopAsync(c))).ToArray();

        await Task.WhenAny(_setupDone.Task, _stopped.Task, Task.Delay(TimeSpan.FromSeconds(SetupSeconds)));
        var connected = connections.Count(c => c.Socket is not null);
        atStart?.Invoke();
        var start = Stopwatch.GetTimestamp();
        Volatile.Write(ref _end, start + (long)(duration.TotalSeconds * Stopwatch.Frequency));
        Volatile.Write(ref _start, start);
        _go.TrySetResult();

        await Task.WhenAny(_stopped.Task, Task.Delay(duration));
        // Stopped early (the warm-up's probe said warm): the window ends now.
        var end = Math.Min(Volatile.Read(ref _end), Stopwatch.GetTimestamp());
        Volatile.Write(ref _end, end);
        atEnd?.Invoke();

        // The last echoes: a connection still waiting for one after the grace is aborted and its echo counted late.
        var graceEnd = DateTime.UtcNow.AddSeconds(GraceSeconds);
        while (connections.Any(c => c.InRoundTrips) && DateTime.UtcNow < graceEnd)
        {
            await Task.Delay(50);
        }
        foreach (var c in connections.Where(c => c.InRoundTrips))
        {
            c.Late = true;
            c.Socket?.Abort();
        }
        var all = Task.WhenAll(loops);
        if (await Task.WhenAny(all, Task.Delay(TimeSpan.FromSeconds(CloseSeconds + 1))) != all)
        {
            // A closing handshake that did not finish: those connections are dropped (not an error of the window).
            foreach (var c in connections)
            {
                c.Socket?.Abort();
            }
            await Task.WhenAny(all, Task.Delay(TimeSpan.FromSeconds(1)));
        }

        var latency = new LatencyHistogram();
        var errors = new long[Enum.GetValues<EchoError>().Length];
        foreach (var c in connections)
        {
            latency.Add(c.Latency);
            for (var i = 0; i < errors.Length; i++)
            {
                errors[i] += c.Errors[i];
            }
        }
        Dictionary<EchoError, string> first;
        lock (_firstErrors)
        {
            first = new(_firstErrors);
        }
        return new WebSocketRun((end - start) / (double)Stopwatch.Frequency, connected, latency, errors, Interlocked.Read(ref _setupErrors), first);
    }

    /// <summary>Stops the run now: its window ends, its connections close.</summary>
    private void StopEarly() => _stopped.TrySetResult();

    private bool Ending => Stopwatch.GetTimestamp() >= Volatile.Read(ref _end) || _stopped.Task.IsCompleted;

    private async Task LoopAsync(Connection c)
    {
        var firstAttempt = true;
        while (!Ending)
        {
            var attempted = Stopwatch.GetTimestamp();
            ClientWebSocket socket;
            try
            {
                socket = await ConnectAsync();
            }
            catch (Exception e) when (IsConnectionFailure(e))
            {
                Count(c, EchoError.Handshake, attempted, e);
                SetupAttempted(ref firstAttempt);
                await Task.WhenAny(_stopped.Task, Task.Delay(RetryPauseMilliseconds));
                continue;
            }
            c.Socket = socket;
            SetupAttempted(ref firstAttempt);
            await Task.WhenAny(_go.Task, _stopped.Task);
            var failed = false;
            c.InRoundTrips = true;
            while (!Ending)
            {
                var sent = Stopwatch.GetTimestamp();
                var error = await RoundTripAsync(c, socket);
                if (error is { } e)
                {
                    Count(c, c.Late ? EchoError.Late : e.Kind, sent, e.Exception, e.Message);
                    failed = true;
                    break;
                }
                var received = Stopwatch.GetTimestamp();
                // A round trip counts when it ended in the window (it began in it: the loop starts at the window's start).
                if (received <= Volatile.Read(ref _end))
                {
                    c.Latency.Record(received - sent);
                }
            }
            c.InRoundTrips = false;
            if (failed)
            {
                socket.Abort();
                socket.Dispose();
                c.Socket = null;
                await Task.WhenAny(_stopped.Task, Task.Delay(RetryPauseMilliseconds));
                continue;
            }
            await CloseQuietlyAsync(socket);
            socket.Dispose();
        }
        SetupAttempted(ref firstAttempt);
    }

    private void SetupAttempted(ref bool firstAttempt)
    {
        if (firstAttempt)
        {
            firstAttempt = false;
            if (Interlocked.Decrement(ref _setupPending) == 0)
            {
                _setupDone.TrySetResult();
            }
        }
    }

    /// <summary>One message and its echo, compared; null when it came back intact, else why not. Pooled: a round trip
    /// that completes later than it starts reuses a state machine instead of allocating one.</summary>
    [System.Runtime.CompilerServices.AsyncMethodBuilder(typeof(System.Runtime.CompilerServices.PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<(EchoError Kind, string Message, Exception? Exception)?> RoundTripAsync(Connection c, ClientWebSocket socket)
    {
        var send = c.Send;
        var receive = c.Receive;
        // A sequence number in the message, so that an echo of an earlier message (or another connection's) differs.
        c.Sequence++;
        for (var i = 0; i < Math.Min(sizeof(long), send.Length); i++)
        {
            send[i] = (byte)(c.Sequence >> (8 * i));
        }
        try
        {
            await socket.SendAsync(send, WebSocketMessageType.Binary, endOfMessage: true, CancellationToken.None);
            var got = 0;
            var whole = true;
            ValueWebSocketReceiveResult r;
            while (true)
            {
                r = await socket.ReceiveAsync(receive.AsMemory(got), CancellationToken.None);
                if (r.MessageType == WebSocketMessageType.Close)
                {
                    return (EchoError.Closed, $"the server closed the WebSocket ({socket.CloseStatus?.ToString() ?? "no code"} {socket.CloseStatusDescription})", null);
                }
                got += r.Count;
                if (r.EndOfMessage)
                {
                    break;
                }
                if (got == receive.Length)
                {
                    // Longer than the message (the buffer holds one byte more): the rest is read and dropped.
                    whole = false;
                    got = 0;
                }
            }
            if (!whole || r.MessageType != WebSocketMessageType.Binary || got != send.Length || !receive.AsSpan(0, got).SequenceEqual(send))
            {
                return (EchoError.Mismatch, $"the echo differs from the message ({r.MessageType}, {(whole ? got.ToString(System.Globalization.CultureInfo.InvariantCulture) : "more than " + receive.Length)} bytes for a {send.Length}-byte binary message)", null);
            }
            return null;
        }
        catch (Exception e) when (IsConnectionFailure(e))
        {
            var closed = e is WebSocketException { WebSocketErrorCode: WebSocketError.ConnectionClosedPrematurely };
            return (closed ? EchoError.Closed : EchoError.Failed, Describe(e), e);
        }
    }

    private void Count(Connection c, EchoError kind, long began, Exception? e, string? message = null)
    {
        if (began < Volatile.Read(ref _start))
        {
            Interlocked.Increment(ref _setupErrors);
        }
        else
        {
            c.Errors[(int)kind]++;
        }
        lock (_firstErrors)
        {
            _firstErrors.TryAdd(kind, message ?? (e is null ? kind.ToString() : Describe(e)));
        }
    }

    private async Task<ClientWebSocket> ConnectAsync()
    {
        var socket = new ClientWebSocket();
        // Straight to the URL (never an http_proxy of the environment), no pings of our own (only the messages travel),
        // no compression (none of the proxies would see the same bytes).
        socket.Options.Proxy = null;
        socket.Options.KeepAliveInterval = TimeSpan.Zero;
        if (_target.Trust is { } trust)
        {
            socket.Options.RemoteCertificateValidationCallback = (_, certificate, _, errors) => Trusted(certificate, errors, trust);
        }
        await _handshakes.WaitAsync();
        try
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(HandshakeSeconds));
            await socket.ConnectAsync(_target.Url, timeout.Token);
            return socket;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
        finally
        {
            _handshakes.Release();
        }
    }

    /// <summary>A certificate the system does not trust is trusted when it chains to one of <paramref name="trust"/>
    /// and names the host (the run's authority, crank/tls-cert.sh).</summary>
    internal static bool Trusted(System.Security.Cryptography.X509Certificates.X509Certificate? certificate, SslPolicyErrors errors, X509Certificate2Collection trust)
    {
        if (errors == SslPolicyErrors.None)
        {
            return true;
        }
        if (certificate is null || (errors & ~SslPolicyErrors.RemoteCertificateChainErrors) != 0)
        {
            return false;
        }
        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.CustomTrustStore.AddRange(trust);
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        using var leaf = X509CertificateLoader.LoadCertificate(certificate.GetRawCertData());
        return chain.Build(leaf);
    }

    private static async Task CloseQuietlyAsync(ClientWebSocket socket)
    {
        try
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(CloseSeconds));
            await socket.CloseAsync(WebSocketCloseStatus.NormalClosure, null, timeout.Token);
        }
        catch (Exception e) when (IsConnectionFailure(e))
        {
            // After the window: a close that fails costs the run nothing.
        }
    }

    private static bool IsConnectionFailure(Exception e) =>
        e is WebSocketException or IOException or OperationCanceledException or ObjectDisposedException or InvalidOperationException
            or System.Net.Http.HttpRequestException or System.Security.Authentication.AuthenticationException;

    /// <summary>The exception's message with its innermost cause's (a handshake's "status code '502'" is the outer one,
    /// a refused connection the inner one).</summary>
    private static string Describe(Exception e)
    {
        var inner = e;
        while (inner.InnerException is not null)
        {
            inner = inner.InnerException;
        }
        return inner == e ? e.Message : $"{e.Message} ({inner.Message})";
    }

    /// <summary>One connection's state for a run: its socket, its buffers, its counts.</summary>
    private sealed class Connection
    {
        public Connection(int messageSize)
        {
            Send = new byte[messageSize];
            // Random bytes: an echo that is all zeros, or all of one byte, would not pass for the message.
            Random.Shared.NextBytes(Send);
            // One byte more than the message, to see an echo that is longer.
            Receive = new byte[messageSize + 1];
        }

        public byte[] Send { get; }

        public byte[] Receive { get; }

        public long Sequence { get; set; }

        public LatencyHistogram Latency { get; } = new();

        public long[] Errors { get; } = new long[Enum.GetValues<EchoError>().Length];

        public volatile ClientWebSocket? Socket;

        public volatile bool InRoundTrips;

        public volatile bool Late;
    }

    /// <summary>A run as the warm-up sees it: a tool's run, stopped by any signal.</summary>
    private sealed class InProcessRun(WebSocketLoad load, Task run) : ILoadRun
    {
        public bool HasExited => run.IsCompleted;

        public int WaitForExit()
        {
            run.GetAwaiter().GetResult();
            return 0;
        }

        public bool WaitForExit(TimeSpan timeout) => ((IAsyncResult)run).AsyncWaitHandle.WaitOne(timeout);

        public void Signal(int signal) => load.StopEarly();

        public void Dispose()
        {
            load.StopEarly();
            WaitForExit();
        }
    }
}
