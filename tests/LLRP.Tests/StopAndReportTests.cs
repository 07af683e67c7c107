using System.Net;
using System.Net.Sockets;
using System.Text;
using LLRP.Connections;
using LLRP.Diagnostics;
using LLRP.Errors;
using LLRP.Tests.Infrastructure;
using Microsoft.Extensions.Logging;

namespace LLRP.Tests;

/// <summary>
/// What the running proxy tells its operator and how it stops: a graceful stop on SIGTERM bounded by shutdownTimeout,
/// warnings for the exchanges the downstream side failed (rate-limited), statistics every statsInterval, and counts in
/// the right number. The process tests run LLRP itself (exit codes and output are the real ones).
/// </summary>
public sealed class StopAndReportTests
{
    private const string Get = "GET /slow HTTP/1.1\r\nHost: example.com\r\n\r\n";

    [Fact]
    public async Task Sigterm_lets_the_exchange_in_flight_finish_says_what_it_waits_for_and_exits_0()
    {
        await using var origin = new GatedOrigin();
        await using var llrp = ProgramRun.Start(["--urls", "http://127.0.0.1:0", "--downstream", origin.Url, "--shutdownTimeout", "60"]);
        var url = await llrp.ListeningAsync();
        await using var busy = await RawClient.ConnectAsync(url);
        await using var idle = await RawClient.ConnectAsync(url);
        await busy.SendAsync(Get);
        // The origin has the request (a TimeoutException fails the test otherwise).
        await origin.RequestSeen.Task.WaitAsync(Wire.Cap);

        llrp.Terminate();

        Assert.True(await llrp.WaitForOutputAsync(lines => lines.Any(l => l.StartsWith("LLRP stopping:", StringComparison.Ordinal))),
            string.Join(" | ", llrp.Output));
        Assert.Equal(
            "LLRP stopping: no new connections; waiting up to 60 s for 1 exchange in flight, then aborting what is left.",
            llrp.Output.Single(l => l.StartsWith("LLRP stopping:", StringComparison.Ordinal)));
        // The idle connection is closed at once; the busy one is not cut.
        Assert.Equal(Ending.Closed, await idle.WaitForEndAsync());
        Assert.True(await RefusedAsync(url), "the proxy still accepted connections while stopping");

        origin.Release();
        var response = await busy.ReadResponseAsync();
        Assert.True(response is { Status: 200, BodyText: "ok" }, $"the exchange in flight did not finish: {response}");
        Assert.Equal(Ending.Closed, await busy.WaitForEndAsync());

        var result = await llrp.WaitForExitAsync();
        Assert.True(result.ExitCode == 0, result.ToString());
        Assert.Contains(result.Output, l => l.StartsWith("LLRP served 1 request, rejected 0, ", StringComparison.Ordinal));
    }

    /// <summary>
    /// The proxy's own HTTP/2 front end ends its connections on a stop as the raw HTTP/1.1 one does: one the client closed
    /// is gone already, an idle one gets GOAWAY and closes, so the process exits at once, not after shutdownTimeout.
    /// </summary>
    [Fact]
    public async Task Sigterm_after_http2_traffic_closes_its_connections_and_exits_0_without_waiting_for_the_bound()
    {
        await using var origin = await DownstreamUnderTest.StartAsync();
        await using var llrp = ProgramRun.Start(["--urls", "http://127.0.0.1:0", "--downstream", origin.Url.ToString(), "--protocols", "h2", "--shutdownTimeout", "600"]);
        var url = await llrp.ListeningAsync();
        using (var closed = H2cClient())
        {
            Assert.Equal(2, (await closed.GetByteArrayAsync(new Uri(url, "/?s=2"))).Length);
        }
        using var idle = H2cClient();
        Assert.Equal(2, (await idle.GetByteArrayAsync(new Uri(url, "/?s=2"))).Length);

        llrp.Terminate();

        var result = await llrp.WaitForExitAsync();
        Assert.True(result.ExitCode == 0, result.ToString());
        Assert.Contains(result.Output, l => l.StartsWith("LLRP served 2 requests, rejected 0, ", StringComparison.Ordinal));

        static HttpClient H2cClient() => new(new SocketsHttpHandler { UseProxy = false })
        {
            DefaultRequestVersion = HttpVersion.Version20,
            DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact,
            Timeout = Wire.Cap,
        };
    }

    [Fact]
    public async Task Sigterm_aborts_what_is_still_in_flight_after_shutdownTimeout_and_exits_0()
    {
        await using var origin = new GatedOrigin();
        await using var llrp = ProgramRun.Start(["--urls", "http://127.0.0.1:0", "--downstream", origin.Url, "--shutdownTimeout", "1"]);
        var url = await llrp.ListeningAsync();
        await using var client = await RawClient.ConnectAsync(url);
        await client.SendAsync(Get);
        // The origin has the request (a TimeoutException fails the test otherwise).
        await origin.RequestSeen.Task.WaitAsync(Wire.Cap);

        llrp.Terminate();

        // The origin never answers: the exchange is aborted at the bound, the client sees its connection end.
        Assert.Equal(Ending.Closed, await client.WaitForEndAsync(TimeSpan.FromSeconds(30)));
        var result = await llrp.WaitForExitAsync();
        Assert.True(result.ExitCode == 0, result.ToString());
        Assert.Contains(result.Output, l => l == "LLRP stopping: no new connections; waiting up to 1 s for 1 exchange in flight, then aborting what is left.");
        Assert.Contains(result.Output, l => l.StartsWith("LLRP served 0 requests, ", StringComparison.Ordinal));
    }

    [Fact]
    public async Task A_502_is_one_warning_line_naming_the_downstream_and_the_reason()
    {
        using var refusing = new RefusingPort();
        var downstream = $"{refusing.Url}/";
        await using var llrp = ProgramRun.Start(["--urls", "http://127.0.0.1:0", "--downstream", downstream]);
        var url = await llrp.ListeningAsync();
        await using (var client = await RawClient.ConnectAsync(url))
        {
            await client.SendAsync(Get);
            var response = await client.ReadResponseAsync();
            Assert.True(response?.Status == 502, $"expected 502, got {response}");
        }

        Assert.True(await llrp.WaitForOutputAsync(lines => lines.Any(l => l.StartsWith("warn: LLRP.Exchanges", StringComparison.Ordinal))),
            string.Join(" | ", llrp.Output));
        var warning = llrp.Output.Single(l => l.StartsWith("warn: LLRP.Exchanges", StringComparison.Ordinal));
        Assert.Contains($"answered 502: downstream {downstream} DownstreamUnavailable: ", warning, StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_summary_counts_failed_exchanges_by_what_the_client_saw_beside_the_rejected_heads()
    {
        using var refusing = new RefusingPort();
        await using var llrp = ProgramRun.Start(["--urls", "http://127.0.0.1:0", "--downstream", refusing.Url]);
        var url = await llrp.ListeningAsync();
        for (var i = 0; i < 5; i++)
        {
            await using var client = await RawClient.ConnectAsync(url);
            await client.SendAsync(Get);
            var response = await client.ReadResponseAsync();
            Assert.True(response?.Status == 502, $"expected 502, got {response}");
        }
        await using (var client = await RawClient.ConnectAsync(url))
        {
            await client.SendAsync("GET / HTTP/1.1\r\n\r\n");
            var response = await client.ReadResponseAsync();
            Assert.True(response?.Status == 400, $"expected 400 for a request without Host, got {response}");
        }

        llrp.Terminate();

        var result = await llrp.WaitForExitAsync();
        Assert.True(result.ExitCode == 0, result.ToString());
        Assert.Contains(result.Output, l => l.StartsWith("LLRP served 0 requests, rejected 1, failed 5 (5 answered 502), ", StringComparison.Ordinal));
    }

    [Fact]
    public void Failed_exchanges_are_described_by_kind_in_status_order()
    {
        var failed = new FailedExchanges();
        Assert.Equal("failed 0", failed.Describe());
        failed.Answered(504);
        failed.Answered(502);
        failed.Answered(502);
        failed.Answered(408);
        failed.Aborted();
        failed.ClientGone();
        failed.ClientGone();
        Assert.Equal(7, failed.Total);
        Assert.Equal("failed 7 (1 answered 408, 2 answered 502, 1 answered 504, 1 aborted mid-response, 2 client gone)", failed.Describe());
    }

    [Fact]
    public async Task Statistics_print_every_interval_even_without_requests()
    {
        await using var llrp = ProgramRun.Start(["--urls", "http://127.0.0.1:0", "--downstream", "http://127.0.0.1:9", "--statsInterval", "0.2"]);
        await llrp.ListeningAsync();

        Assert.True(await llrp.WaitForOutputAsync(lines => lines.Count(l => l == "#EndJobStatistics") >= 3),
            $"fewer than 3 statistics blocks without requests: {string.Join(" | ", llrp.Output)}");
    }

    [Fact]
    public void Failures_are_logged_once_per_interval_per_reason_with_the_count_left_out()
    {
        var time = new ManualTime();
        var logger = new ListLogger();
        var log = new ExchangeFailureLog(logger, time);
        var downstream = new Uri("http://10.0.0.1:80");
        var cause = new ProxyException(ProxyError.DownstreamUnavailable, "Connecting to the downstream failed.", new SocketException((int)SocketError.ConnectionRefused));

        log.Report(ProxyError.DownstreamUnavailable, 502, downstream, cause);
        log.Report(ProxyError.DownstreamUnavailable, 502, downstream, cause);
        log.Report(ProxyError.DownstreamUnavailable, 502, downstream, cause);
        log.Report(ProxyError.DownstreamTimeout, 504, downstream, new OperationCanceledException("The operation was canceled."));
        time.Advance(ExchangeFailureLog.Interval - TimeSpan.FromMilliseconds(1));
        log.Report(ProxyError.DownstreamUnavailable, 502, downstream, cause);
        time.Advance(TimeSpan.FromMilliseconds(1));
        log.Report(ProxyError.DownstreamUnavailable, 502, downstream, cause);
        log.Report(ProxyError.DownstreamBodyCutShort, 0, downstream, new ProxyException(ProxyError.DownstreamBodyCutShort, "The downstream closed mid-body."));

        var refused = new SocketException((int)SocketError.ConnectionRefused).Message;
        Assert.Equal(
        [
            $"Warning answered 502: downstream http://10.0.0.1/ DownstreamUnavailable: Connecting to the downstream failed: {refused}",
            "Warning answered 504: downstream http://10.0.0.1/ DownstreamTimeout: The operation was canceled.",
            $"Warning answered 502: downstream http://10.0.0.1/ DownstreamUnavailable: Connecting to the downstream failed: {refused} (3 more like it since the last line)",
            "Warning client connection aborted mid-response: downstream http://10.0.0.1/ DownstreamBodyCutShort: The downstream closed mid-body.",
        ], logger.Lines);
    }

    [Theory]
    [InlineData(nameof(ProxyError.BadRequest))]
    [InlineData(nameof(ProxyError.RequestTimeout))]
    [InlineData(nameof(ProxyError.ContentTooLarge))]
    [InlineData(nameof(ProxyError.ClientGone))]
    public void Client_faults_are_not_logged_as_downstream_failures(string reason) =>
        Assert.False(ExchangeFailureLog.IsLogged(Enum.Parse<ProxyError>(reason)));

    [Theory]
    [InlineData(0, "0 requests")]
    [InlineData(1, "1 request")]
    [InlineData(2, "2 requests")]
    public void Counts_take_the_noun_in_the_right_number(long count, string expected) =>
        Assert.Equal(expected, Wording.Count(count, "request", "requests"));

    private static async Task<bool> RefusedAsync(Uri url)
    {
        try
        {
            await using var late = await RawClient.ConnectAsync(url);
            await late.SendAsync(Get);
            return await late.WaitForEndAsync() == Ending.Closed && late.ExtraBytes.Length == 0;
        }
        catch (Exception e) when (e is SocketException or IOException)
        {
            return true;
        }
    }

    /// <summary>An origin that reads one request head per connection and answers 200 "ok" only once released.</summary>
    private sealed class GatedOrigin : IAsyncDisposable
    {
        private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
        private readonly TaskCompletionSource _gate = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly CancellationTokenSource _stop = new();
        private readonly List<TcpClient> _clients = [];
        private readonly Task _accept;

        public GatedOrigin()
        {
            _listener.Start();
            Url = $"http://127.0.0.1:{((IPEndPoint)_listener.LocalEndpoint).Port}";
            _accept = AcceptAsync();
        }

        public string Url { get; }

        public TaskCompletionSource RequestSeen { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public void Release() => _gate.TrySetResult();

        private async Task AcceptAsync()
        {
            try
            {
                while (true)
                {
                    var client = await _listener.AcceptTcpClientAsync(_stop.Token);
                    lock (_clients)
                    {
                        _clients.Add(client);
                    }
                    _ = ServeAsync(client);
                }
            }
            catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
            {
            }
        }

        private async Task ServeAsync(TcpClient client)
        {
            try
            {
                var stream = client.GetStream();
                var head = new StringBuilder();
                var buffer = new byte[4096];
                while (!head.ToString().Contains("\r\n\r\n", StringComparison.Ordinal))
                {
                    var n = await stream.ReadAsync(buffer, _stop.Token);
                    if (n == 0)
                    {
                        return;
                    }
                    head.Append(Encoding.Latin1.GetString(buffer, 0, n));
                }
                RequestSeen.TrySetResult();
                await _gate.Task.WaitAsync(_stop.Token);
                await stream.WriteAsync("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"u8.ToArray(), _stop.Token);
            }
            catch (Exception e) when (e is OperationCanceledException or IOException or ObjectDisposedException)
            {
            }
        }

        public async ValueTask DisposeAsync()
        {
            await _stop.CancelAsync();
            _listener.Stop();
            await _accept;
            lock (_clients)
            {
                _clients.ForEach(c => c.Dispose());
            }
            _stop.Dispose();
        }
    }

    private sealed class ManualTime : TimeProvider
    {
        private long _ticks = 1_000_000;

        public override long TimestampFrequency => TimeSpan.TicksPerSecond;

        public override long GetTimestamp() => _ticks;

        public void Advance(TimeSpan by) => _ticks += by.Ticks;
    }

    private sealed class ListLogger : ILogger
    {
        public List<string> Lines { get; } = [];

        public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
            Lines.Add($"{logLevel} {formatter(state, exception)}");
    }
}
