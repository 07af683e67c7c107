using System.Diagnostics;
using System.Net.WebSockets;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;

namespace LLRP.Jobs.Tests;

/// <summary>The WebSocket job: its options, its figures, its histogram, and short runs (1 s) against Downstream's /ws and
/// against an echo that corrupts and closes.</summary>
public sealed class WebSocketJobTests(EchoOrigin origin) : IClassFixture<EchoOrigin>
{
    [Theory]
    [InlineData("missing URL")]
    [InlineData("unknown option --bogus", "--bogus")]
    [InlineData("more than one URL (ws://a/ws, ws://b/ws)", "ws://a/ws", "ws://b/ws")]
    [InlineData("more than one URL (ws://a/ws, ws://b/ws)", "--url", "ws://a/ws", "--url", "ws://b/ws")]
    [InlineData("the URL must be ws://HOST:PORT/PATH or wss://HOST:PORT/PATH: http://a/ws", "http://a/ws")]
    [InlineData("the URL must be ws://HOST:PORT/PATH or wss://HOST:PORT/PATH: ws:/ws", "ws:/ws")]
    [InlineData("-d must be 1 to 3600 seconds, -w and --warmup-max at most 3600", "-d", "0", "ws://a/ws")]
    [InlineData("-d must be 1 to 3600 seconds, -w and --warmup-max at most 3600", "-d", "3601", "ws://a/ws")]
    [InlineData("-d must be 1 to 3600 seconds, -w and --warmup-max at most 3600", "--warmup-max", "3601s", "ws://a/ws")]
    [InlineData("-c must be 1 to 1024 connections", "-c", "0", "ws://a/ws")]
    [InlineData("-c must be 1 to 1024 connections", "--connections", "1025", "ws://a/ws")]
    [InlineData("--message-size must be 0 to 1048576 bytes", "--message-size", "1048577", "ws://a/ws")]
    [InlineData("-c x --message-size must be at most 67108864 bytes (each connection keeps two copies of its message)",
        "-c", "65", "--message-size", "1048576", "ws://a/ws")]
    [InlineData("not a whole number: 2s", "-c", "2s", "ws://a/ws")]
    [InlineData("not a whole number: -1", "--message-size", "-1", "ws://a/ws")]
    [InlineData("not a whole number: x", "--max-errors", "x", "ws://a/ws")]
    [InlineData("--trust needs a value", "ws://a/ws", "--trust")]
    [InlineData("--trust is for wss:// URLs (TLS), not ws://a/ws", "--trust", "/etc/hostname", "ws://a/ws")]
    [InlineData("--trust /nonexistent/ca.pem: no such file", "--trust", "/nonexistent/ca.pem", "wss://a/ws")]
    public void Bad_usage_is_one_line_and_exit_2(string message, params string[] args) => H2LoadJobsProcess.BadUsage("websocket", message, args);

    [Fact]
    public void A_trust_file_without_a_certificate_is_bad_usage()
    {
        var file = Path.GetTempFileName();
        try
        {
            File.WriteAllText(file, "no PEM here\n");
            H2LoadJobsProcess.BadUsage("websocket", $"--trust {file}: no certificate in it", "-w", "0", "-d", "1", "--trust", file, "wss://127.0.0.1:1/ws");
        }
        finally
        {
            File.Delete(file);
        }
    }

    [Fact]
    public void Defaults_are_the_runner_s_and_the_wrk_job_s()
    {
        var o = WebSocketJob.Parse(["ws://127.0.0.1:8080/ws"]);
        Assert.Equal(new WebSocketJob.Options(20, null, 15, 64, 32, null, "ws://127.0.0.1:8080/ws", null), o);
        var given = WebSocketJob.Parse(["-w", "5s", "--warmup-max", "60", "-d", "10", "-c", "200", "--message-size", "0", "--max-errors", "3", "--url", "wss://h:1/ws"]);
        Assert.Equal(new WebSocketJob.Options(5, 60, 10, 200, 0, 3, "wss://h:1/ws", null), given);
    }

    [Fact]
    public void Help_names_the_figures_and_exits_0()
    {
        var (exit, output, err) = H2LoadJobsProcess.Run("websocket", "--help");
        Assert.Equal(0, exit);
        Assert.Equal("", err);
        Assert.Contains("usage: websocket-job.sh", output, StringComparison.Ordinal);
        Assert.Contains("websocket/rps/mean;http/rps/mean", output, StringComparison.Ordinal);
    }

    /// <summary>A run of 4 round trips of 1, 2, 3 and 10 ms, one mismatch and two closes, over 2 s.</summary>
    private static WebSocketRun Recorded(int roundTrips = 4)
    {
        var latency = new LatencyHistogram();
        foreach (var ms in new[] { 1, 2, 3, 10 }.Take(roundTrips))
        {
            latency.Record(ms * Stopwatch.Frequency / 1000);
        }
        var errors = new long[Enum.GetValues<EchoError>().Length];
        errors[(int)EchoError.Mismatch] = 1;
        errors[(int)EchoError.Closed] = 2;
        return new WebSocketRun(2, 3, latency, errors, 0, new Dictionary<EchoError, string>());
    }

    private static readonly WebSocketTarget Target = new(new Uri("ws://127.0.0.1:8080/ws"), 4, 100, null);

    private static Dictionary<string, double> Figures(IEnumerable<Measurement> rows) =>
        rows.ToDictionary(m => m.Name.Split(';')[0], m => (double)m.Value);

    [Fact]
    public void Round_trips_are_the_requests_and_errors_split_as_the_report_reads_them()
    {
        var rows = WebSocketJob.Rows(Recorded(), Target, 1.5, new WarmResult(20, false));
        var f = Figures(rows);
        Assert.Equal(2, f["websocket/rps/mean"]);
        Assert.Equal(4, f["websocket/requests"]);
        Assert.Equal(4, f["websocket/latency/mean"], 6);
        Assert.Equal(10, f["websocket/latency/max"], 6);
        Assert.Equal(1, f["websocket/errors/mismatches"]);
        Assert.Equal(2, f["websocket/errors/socketerrors"]);
        Assert.Equal(800, f["websocket/bytes"]);
        Assert.Equal(400 / 2 / 1048576.0, f["websocket/throughput"], 12);
        Assert.Equal([4, 3, 100], new[] { f["websocket/connections"], f["websocket/connected"], f["websocket/message-size"] });
        Assert.Equal(1.5, f["http/firstrequest"]);
        Assert.Equal(20, f["warmup/seconds"]);
        Assert.False(f.ContainsKey("warmup/capped"));
        // Nearest rank over 1, 2, 3, 10 ms, each within the histogram's 0.8 %.
        Assert.Equal(2, f["websocket/latency/50"], 0.02);
        Assert.Equal(3, f["websocket/latency/75"], 0.03);
        Assert.Equal(10, f["websocket/latency/90"], 0.1);
        Assert.Equal(10, f["websocket/latency/99.9"], 0.1);

        // The names analysis/Report and the runner read (ResultsReader, RunLocal): the same as the other load jobs'.
        var names = rows.Select(m => m.Name).ToArray();
        Assert.Contains("websocket/requests;http/requests", names);
        Assert.Contains("websocket/rps/mean;http/rps/mean", names);
        Assert.Contains("websocket/latency/99;http/latency/99", names);
        Assert.Contains("websocket/errors/mismatches;http/requests/badresponses", names);
        Assert.Contains("websocket/errors/socketerrors;http/requests/errors", names);
        Assert.All(rows, m => Assert.Equal("Max", m.Aggregate));
    }

    [Fact]
    public void No_round_trip_leaves_out_the_percentiles_and_a_failed_first_echo_its_figure()
    {
        var f = Figures(WebSocketJob.Rows(Recorded(roundTrips: 0), Target, null, new WarmResult(61, true)));
        Assert.Equal(0, f["websocket/requests"]);
        Assert.Equal(0, f["websocket/latency/mean"]);
        Assert.DoesNotContain(f.Keys, k => k.StartsWith("websocket/latency/9", StringComparison.Ordinal));
        Assert.False(f.ContainsKey("http/firstrequest"));
        Assert.Equal(1, f["warmup/capped"]);
    }

    [Fact]
    public void The_histogram_is_exact_below_128_and_within_a_128th_above()
    {
        for (long v = 0; v < 128; v++)
        {
            Assert.Equal(v, LatencyHistogram.Midpoint(LatencyHistogram.Index(v)));
        }
        foreach (var v in new long[] { 128, 255, 256, 1000, 123_456, 999_999_999, 1L << 39, (1L << 40) - 1 })
        {
            var back = LatencyHistogram.Midpoint(LatencyHistogram.Index(v));
            Assert.True(Math.Abs(back - v) <= v / 128.0, $"{v} came back as {back}");
        }
        // Beyond the top, one bucket; the maximum stays exact.
        var h = new LatencyHistogram();
        h.Record(1L << 50);
        h.Record(-5);
        Assert.Equal(1L << 50, h.Max);
        Assert.Equal(0, h.Percentile(50));
        Assert.Equal(1L << 50, h.Percentile(100));
    }

    [Fact]
    public void Histograms_merge_and_rank_like_sorted_values()
    {
        var a = new LatencyHistogram();
        var b = new LatencyHistogram();
        for (var i = 1; i <= 100; i++)
        {
            (i % 2 == 0 ? a : b).Record(i);
        }
        a.Add(b);
        Assert.Equal(100, a.Count);
        Assert.Equal(5050, a.Sum);
        Assert.Equal([1, 50, 99, 100], new[] { a.Percentile(0), a.Percentile(50), a.Percentile(99), a.Percentile(99.9) });
        Assert.Equal(0, new LatencyHistogram().Percentile(99));
    }

    [Fact]
    public void A_short_run_through_Downstream_s_echo_has_no_error()
    {
        var (exit, output, err) = H2LoadJobsProcess.Run("websocket", "-w", "0", "-d", "1", "-c", "4", "--message-size", "100", "--max-errors", "0", origin.WebSocketUrl.ToString());
        Assert.True(exit == 0, $"exit {exit}\n{output}\n{err}");
        var f = H2LoadJobsProcess.Figures(output);
        Assert.True(double.Parse(f["websocket/requests"], System.Globalization.CultureInfo.InvariantCulture) > 0, output);
        Assert.Equal(["0", "0", "4"], new[] { f["websocket/errors/mismatches"], f["websocket/errors/socketerrors"], f["websocket/connected"] });
        Assert.True(f.ContainsKey("http/firstrequest"), output);
        Assert.Contains("websocket-job: measured: 1 s", output, StringComparison.Ordinal);
    }

    [Fact]
    public void A_refused_handshake_is_counted_not_a_crash()
    {
        // Downstream's "/" answers 200, not 101.
        var url = new UriBuilder(origin.WebSocketUrl) { Path = "/" }.Uri.ToString();
        var (exit, output, err) = H2LoadJobsProcess.Run("websocket", "-w", "0", "-d", "1", "-c", "2", url);
        Assert.Equal(JobFailure.TooManyErrors, exit);
        Assert.Equal("websocket-job: no round trip completed in the measured window", err.Split(" (")[0]);
        var f = H2LoadJobsProcess.Figures(output);
        Assert.Equal("0", f["websocket/requests"]);
        Assert.NotEqual("0", f["websocket/errors/socketerrors"]);
        Assert.Contains("first handshake error: The server returned status code '200'", output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Bad_echoes_and_closes_are_counted_and_the_connections_opened_again()
    {
        await using var bad = await BadEcho.StartAsync();
        var (exit, output, err) = H2LoadJobsProcess.Run("websocket", "-w", "0", "-d", "1", "-c", "2", "--max-errors", "0", bad.Url);
        Assert.Equal(JobFailure.TooManyErrors, exit);
        Assert.Contains("errors in the measured run, more than --max-errors 0: failing the job", err, StringComparison.Ordinal);
        var f = H2LoadJobsProcess.Figures(output);
        double N(string name) => double.Parse(f[name], System.Globalization.CultureInfo.InvariantCulture);
        Assert.True(N("websocket/requests") > 0, output);
        Assert.True(N("websocket/errors/mismatches") > 0, output);
        Assert.True(N("websocket/errors/socketerrors") > 0, output);

        // Without --max-errors the same run passes: the errors are figures.
        Assert.Equal(0, H2LoadJobsProcess.Run("websocket", "-w", "0", "-d", "1", "-c", "2", bad.Url).Exit);
    }

    /// <summary>A WebSocket server whose connections take turns: one echoes its third message with a byte changed, the
    /// next closes after its third echo.</summary>
    private sealed class BadEcho : IAsyncDisposable
    {
        private readonly WebApplication _app;
        private int _accepted;

        private BadEcho(WebApplication app) => _app = app;

        public string Url { get; private set; } = "";

        public static async Task<BadEcho> StartAsync()
        {
            var builder = WebApplication.CreateSlimBuilder();
            builder.Logging.ClearProviders();
            builder.WebHost.UseUrls("http://127.0.0.1:0");
            var app = builder.Build();
            var echo = new BadEcho(app);
            app.UseWebSockets();
            app.Run(async context =>
            {
                using var socket = await context.WebSockets.AcceptWebSocketAsync();
                var corrupts = Interlocked.Increment(ref echo._accepted) % 2 == 1;
                var buffer = new byte[4096];
                try
                {
                    for (var n = 1; n <= 3; n++)
                    {
                        var r = await socket.ReceiveAsync(buffer.AsMemory(), CancellationToken.None);
                        if (r.MessageType == WebSocketMessageType.Close)
                        {
                            return;
                        }
                        if (corrupts && n == 3 && r.Count > 0)
                        {
                            buffer[r.Count - 1] ^= 0xff;
                        }
                        await socket.SendAsync(buffer.AsMemory(0, r.Count), r.MessageType, r.EndOfMessage, CancellationToken.None);
                    }
                    if (!corrupts)
                    {
                        await socket.CloseOutputAsync(WebSocketCloseStatus.PolicyViolation, "three is enough", CancellationToken.None);
                    }
                    // Wait for the client's close or its drop.
                    await socket.ReceiveAsync(buffer.AsMemory(), CancellationToken.None);
                }
                catch (WebSocketException)
                {
                    // The job dropped the connection after a bad echo.
                }
            });
            await app.StartAsync();
            echo.Url = $"ws://{new Uri(app.Urls.First()).Authority}/ws";
            return echo;
        }

        public async ValueTask DisposeAsync()
        {
            await _app.StopAsync();
            await _app.DisposeAsync();
        }
    }
}
