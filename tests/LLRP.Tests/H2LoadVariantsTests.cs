using System.Diagnostics;
using System.Globalization;
using System.Text.RegularExpressions;
using LLRP.Tests.Infrastructure;

namespace LLRP.Tests;

/// <summary>
/// LLRP's HTTP/2 front end under real load: h2load (nghttp2-client) through every variant, over TLS with ALPN h2 and
/// over prior-knowledge h2c, to Downstream. Every run must end with every request done and answered 2xx, none failed,
/// errored or timed out, and h2load saying it negotiated h2 (h2c in cleartext). Where the answer's size is known (the
/// origin's fixed body, /?s=N, and /echo, which returns the request body verbatim) the DATA bytes h2load received must
/// be exactly requests x size, so a truncated or duplicated body fails too. LLRP's own count on shutdown must agree:
/// every request served, none rejected or failed. Per case: GETs of the default 10-byte body, 1 KiB and 64 KiB
/// answers, and POSTs of a 64 KiB body to /echo. A functional check, not a measurement: nothing is timed.
/// </summary>
public sealed partial class H2LoadVariantsTests(NamedDownstream origin) : IClassFixture<NamedDownstream>
{
    // 4 connections with 10 streams in flight on each: concurrency without reaching the proxy's limit of 100 streams
    // per connection; one thread, as the machine's other core serves the proxy and the origin.
    private static readonly string[] s_shape = ["-c", "4", "-m", "10", "-t", "1"];

    // Small answers: enough requests to keep every stream busy for a while.
    private const int Requests = 2000;

    // The 64 KiB answers and uploads: fewer requests keep each run to a second or two.
    private const int LargeRequests = 200;
    private const int LargeSize = 64 * 1024;

    // Downstream answers "/" with 10 bytes (src/Downstream, DefaultSize).
    private const int DefaultSize = 10;

    // One h2load call takes a few seconds when it works; a stall fails the case instead of hanging the suite.
    private static readonly TimeSpan s_h2loadCap = TimeSpan.FromSeconds(60);

    [Theory]
    [InlineData("llhttp", "tls")]
    [InlineData("llhttp", "h2c")]
    [InlineData("httpclient", "tls")]
    [InlineData("httpclient", "h2c")]
    [InlineData("httpclient-httpcontext", "tls")]
    [InlineData("httpclient-httpcontext", "h2c")]
    [InlineData("yarp", "tls")]
    [InlineData("yarp", "h2c")]
    public async Task Every_request_is_answered_2xx_with_exact_bytes_and_counted(string client, string mode)
    {
        var h2load = H2Load();
        var tls = mode == "tls";
        // https:// defaults to --protocols http1,h2: ALPN must pick h2 for h2load.
        string[] listen = tls
            ? ["--urls", "https://127.0.0.1:0", "--certificate", TestCertificates.LocalhostPem, "--certificateKey", TestCertificates.LocalhostKeyPem]
            : ["--urls", "http://127.0.0.1:0", "--protocols", "h2"];
        await using var llrp = ProgramRun.Start([.. listen, "--downstream", origin.Downstream.Url.ToString(), "--client", client]);
        var url = (await llrp.ListeningAsync()).ToString().TrimEnd('/');
        var protocol = tls ? "h2" : "h2c";

        var body = Path.GetTempFileName();
        try
        {
            // The POSTs' body: a repeating pattern, so a misplaced piece would change the bytes.
            var pattern = "h2load-variants 0123456789abcdef\n"u8.ToArray();
            await File.WriteAllBytesAsync(body, [.. Enumerable.Range(0, LargeSize).Select(i => pattern[i % pattern.Length])]);

            var failures = new List<string>();
            failures.AddRange(await RunAsync(h2load, protocol, Requests, (long)Requests * DefaultSize, $"{url}/"));
            failures.AddRange(await RunAsync(h2load, protocol, Requests, Requests * 1024L, $"{url}/?s=1024"));
            failures.AddRange(await RunAsync(h2load, protocol, LargeRequests, (long)LargeRequests * LargeSize, $"{url}/?s={LargeSize}"));
            failures.AddRange(await RunAsync(h2load, protocol, LargeRequests, (long)LargeRequests * LargeSize, $"{url}/echo", "-d", body));
            Assert.True(failures.Count == 0, string.Join("\n", failures));
        }
        finally
        {
            File.Delete(body);
        }

        // LLRP's own count on shutdown: every request h2load sent reached it as an exchange, none refused or failed.
        llrp.Terminate();
        var result = await llrp.WaitForExitAsync();
        var sent = 2 * Requests + 2 * LargeRequests;
        // The whole line on failure, not a truncated list of every line: which count disagreed is the diagnosis.
        var served = result.Output.FirstOrDefault(l => l.StartsWith("LLRP served ", StringComparison.Ordinal)) ?? "(no \"LLRP served\" line)";
        Assert.StartsWith($"LLRP served {sent} requests, rejected 0, failed 0", served, StringComparison.Ordinal);
    }

    /// <summary>h2load's closing lines, as nghttp2-client 1.52 prints them.</summary>
    internal sealed record H2LoadSummary(long Total, long Done, long Succeeded, long Failed, long Errored, long TimedOut, long Ok2xx, long DataBytes, string Protocol)
    {
        public static H2LoadSummary? Parse(string output)
        {
            // "requests: 2000 total, 2000 started, 2000 done, 2000 succeeded, 0 failed, 0 errored, 0 timeout"
            var requests = RequestsLine().Match(output);
            // "status codes: 2000 2xx, 0 3xx, 0 4xx, 0 5xx"
            var codes = CodesLine().Match(output);
            // "traffic: 1.23MB (1289920) total, 61.52KB (62996) headers (space savings 90.12%), 19.53KB (20000) data"
            var traffic = TrafficLine().Match(output);
            var protocol = ProtocolLine().Match(output);
            if (!requests.Success || !codes.Success || !traffic.Success || !protocol.Success)
            {
                return null;
            }
            long N(Match m, int group) => long.Parse(m.Groups[group].Value, CultureInfo.InvariantCulture);
            return new(N(requests, 1), N(requests, 3), N(requests, 4), N(requests, 5), N(requests, 6), N(requests, 7),
                N(codes, 1), N(traffic, 1), protocol.Groups[1].Value);
        }
    }

    [Fact]
    public void Reads_h2load_s_closing_lines()
    {
        const string output = """
            Application protocol: h2
            finished in 1.02s, 1960.78 req/s, 1.21MB/s
            requests: 2000 total, 2000 started, 1990 done, 1989 succeeded, 11 failed, 1 errored, 2 timeout
            status codes: 1985 2xx, 0 3xx, 0 4xx, 4 5xx
            traffic: 1.23MB (1289920) total, 61.52KB (62996) headers (space savings 90.12%), 19.53KB (20000) data
            """;
        Assert.Equal(new H2LoadSummary(2000, 1990, 1989, 11, 1, 2, 1985, 20000, "h2"), H2LoadSummary.Parse(output));
        Assert.Null(H2LoadSummary.Parse("connect: Connection refused"));
    }

    private static async Task<List<string>> RunAsync(string h2load, string protocol, int n, long dataBytes, string url, params string[] extra)
    {
        var info = new ProcessStartInfo(h2load) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var a in (string[])[.. s_shape, "-n", n.ToString(CultureInfo.InvariantCulture), .. extra, url])
        {
            info.ArgumentList.Add(a);
        }
        using var process = Process.Start(info)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        using var cap = new CancellationTokenSource(s_h2loadCap);
        try
        {
            await process.WaitForExitAsync(cap.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
        }
        var output = await stdout + await stderr;
        var s = H2LoadSummary.Parse(output);
        var name = $"{url}{(extra.Length > 0 ? " (POST)" : "")}";
        if (s is null)
        {
            return [$"{name}: h2load printed no summary: {output}"];
        }
        var expected = new H2LoadSummary(n, n, n, 0, 0, 0, n, dataBytes, protocol);
        return s == expected ? [] : [$"{name}: got {s}, expected {expected}"];
    }

    private static string H2Load() =>
        new[] { "/usr/bin/h2load", "/usr/local/bin/h2load" }.FirstOrDefault(File.Exists)
        ?? throw new InvalidOperationException("h2load not found (apt-get install -y nghttp2-client; ./test.sh installs it when missing)");

    [GeneratedRegex(@"^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout", RegexOptions.Multiline)]
    private static partial Regex RequestsLine();

    [GeneratedRegex(@"^status codes: (\d+) 2xx", RegexOptions.Multiline)]
    private static partial Regex CodesLine();

    [GeneratedRegex(@"^traffic: .*\((\d+)\) data", RegexOptions.Multiline)]
    private static partial Regex TrafficLine();

    [GeneratedRegex(@"^Application protocol: *(\S+)", RegexOptions.Multiline)]
    private static partial Regex ProtocolLine();
}
