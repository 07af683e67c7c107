using Xunit;

namespace LLRP.Analysis.Tests;

/// <summary>
/// The TLS parts of the report (the schemes of a point, what each proxy negotiated, the handshake rate, the TLS layer) and
/// the table of what each layer costs.
/// </summary>
public sealed class TlsReportTests : IDisposable
{
    private const string Tls13 = """ "tls/protocol": "TLSv1.3", "tls/cipher": "TLS_AES_256_GCM_SHA384", "tls/group": "X25519" """;

    private readonly string _dir = Directory.CreateTempSubdirectory("llrp-report-tls-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Fact]
    public void APointKnowsItsSchemesAndAHandshakePointCountsHandshakes()
    {
        Write("hs", "nginx", 1, "https", "http", "handshake", 900, 400, $$"""{{Tls13}}, "tls/resumed": 1""");

        var (runs, _, _) = ResultsReader.ReadAll(Path.Combine(_dir, "hs"), skipDirectory: null);

        var run = Assert.Single(runs);
        Assert.Equal(("https", "http", true), (run.Point.ServerScheme, run.Point.DownstreamScheme, run.Point.Handshakes));
        Assert.Contains("https → http, a TLS handshake per request", run.Point.Label, StringComparison.Ordinal);
        Assert.Equal(new TlsFigures("TLSv1.3", "TLS_AES_256_GCM_SHA384", "X25519", true), run.Tls);
    }

    [Fact]
    public void AFileWithoutSchemesRanCleartextAndOneWithAnUnknownSchemeIsRefused()
    {
        Write("old", "nginx", 1, null, null, "plaintext", 10, 50, "");
        Write("bad", "nginx", 1, "quic", "http", "plaintext", 10, 50, "");

        var point = Assert.Single(ResultsReader.ReadAll(Path.Combine(_dir, "old"), null).Runs).Point;
        var e = Assert.Throws<ReportException>(() => ResultsReader.ReadAll(Path.Combine(_dir, "bad"), null));

        Assert.Equal(("http", "http", false), (point.ServerScheme, point.DownstreamScheme, point.Handshakes));
        Assert.Contains("\"serverScheme\" is 'quic'", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void AHandshakePointLabelsItsRateAndCpuPerHandshakeAndSaysWhoResumed()
    {
        Write("hs", "nginx", 1, "https", "http", "handshake", 900, 400, $$"""{{Tls13}}, "tls/resumed": 1""");
        Write("hs", "llrp-llhttp", 1, "https", "http", "handshake", 1500, 300, $$"""{{Tls13}}, "tls/resumed": 0""");

        var markdown = Report("hs");

        Assert.Contains("| scenario | runs | handshakes/s median |", markdown, StringComparison.Ordinal);
        Assert.Contains("| CPU µs/handshake |", markdown, StringComparison.Ordinal);
        Assert.Contains("every proxy negotiated **TLSv1.3, TLS_AES_256_GCM_SHA384, X25519** in every run", markdown, StringComparison.Ordinal);
        Assert.Contains("| nginx | TLSv1.3, TLS_AES_256_GCM_SHA384, X25519 | yes |", markdown, StringComparison.Ordinal);
        Assert.Contains("| llrp-llhttp | TLSv1.3, TLS_AES_256_GCM_SHA384, X25519 | no |", markdown, StringComparison.Ordinal);
    }

    [Fact]
    public void ProxiesThatNegotiatedDifferentSuitesAreCalledOut()
    {
        Write("https", "nginx", 1, "https", "http", "plaintext", 10, 50, Tls13);
        Write("https", "haproxy", 1, "https", "http", "plaintext", 10, 50,
            """ "tls/protocol": "TLSv1.3", "tls/cipher": "TLS_AES_128_GCM_SHA256", "tls/group": "X25519" """);
        Write("https", "yarp", 1, "https", "http", "plaintext", 10, 50, "");

        var markdown = Report("https");

        Assert.Contains("**The proxies did not all negotiate the same TLS**", markdown, StringComparison.Ordinal);
        Assert.Contains("| haproxy | TLSv1.3, TLS_AES_128_GCM_SHA256, X25519 | not probed |", markdown, StringComparison.Ordinal);
        Assert.Contains("| yarp | not probed | not probed |", markdown, StringComparison.Ordinal);
        // A cleartext point has no TLS line at all.
        Write("http", "nginx", 1, "http", "http", "plaintext", 10, 50, "");
        Assert.DoesNotContain("| negotiated (protocol", Report("http"), StringComparison.Ordinal);
    }

    [Fact]
    public void RunsFromBeforeTheProbeSayNotProbedAndWarnOfNothing()
    {
        Write("https", "nginx", 1, "https", "http", "plaintext", 10, 50, "");
        Write("https", "llrp-llhttp", 1, "https", "http", "plaintext", 10, 50, "");

        var markdown = Report("https");

        Assert.Contains("TLS from the load to the proxy: not probed", markdown, StringComparison.Ordinal);
        Assert.DoesNotContain("did not all negotiate", markdown, StringComparison.Ordinal);
        Assert.DoesNotContain("| negotiated (protocol", markdown, StringComparison.Ordinal);
    }

    [Fact]
    public void TheTlsLayerIsEachScenarioWithTlsMinusWithoutPairedByRound()
    {
        // llrp-llhttp: CPU µs/request 10, 12 in cleartext; 15, 18 with TLS from the clients; 20, 22 with TLS on both sides.
        // Allocated B/request 100, 100; 160, 180; 200, 230. The origin costs 7, 7 then 7.5, 6.5.
        double[][] cpu = [[10, 12], [15, 18], [20, 22]];
        double[][] alloc = [[100, 100], [160, 180], [200, 230]];
        double[][] origin = [[7, 7], [7.5, 6.5], [9, 9]];
        (string, string)[] schemes = [("http", "http"), ("https", "http"), ("https", "https")];
        for (var d = 0; d < 3; d++)
        {
            for (var round = 1; round <= 2; round++)
            {
                Write($"d{d}", "llrp-llhttp", round, schemes[d].Item1, schemes[d].Item2, "plaintext", cpu[d][round - 1], origin[d][round - 1],
                    schemes[d].Item1 == "https" ? Tls13 : "", alloc[d][round - 1]);
            }
        }
        // nginx only in cleartext and https → http: an inbound figure, no outbound one.
        Write("d0", "nginx", 1, "http", "http", "plaintext", 8, 7, "");
        Write("d1", "nginx", 1, "https", "http", "plaintext", 11, 7, Tls13);

        var (runs, metas) = TlsLayerCommand.Read([Path.Combine(_dir, "d0"), Path.Combine(_dir, "d1"), Path.Combine(_dir, "d2")], null);
        var markdown = new MarkdownReport(_dir, _dir, runs, metas, drawCharts: false).Build();

        Assert.Contains("## What TLS costs", markdown, StringComparison.Ordinal);
        Assert.Contains("Inbound: https → http − http → http; outbound: https → https − https → http.", markdown, StringComparison.Ordinal);
        // Inbound: 5 and 6 µs, 60 and 80 B, the origin +0.5 and -0.5; outbound: 5 and 4 µs, 40 and 50 B.
        Assert.Contains("| llrp-llhttp | 5.5 (5.0 to 6.0) | 70 (60 to 80) | 0.0 (-0.5 to 0.5) **inside noise** | 4.5 (4.0 to 5.0) | 45 (40 to 50) |", markdown, StringComparison.Ordinal);
        Assert.Contains("| nginx | 3.0 (3.0 to 3.0), 1 round | - | 0.0 (0.0 to 0.0), 1 round | - | - |", markdown, StringComparison.Ordinal);
    }

    [Fact]
    public void KestrelsHttpLayerIsARowOnlyWhereItsVariantRan()
    {
        // Kestrel's layer in front of llhttp: 31 and 33 µs against 15 and 16 with the proxy's own front end.
        Write("h2", "llrp-llhttp", 1, "https", "http", "plaintext", 15, 7, Tls13, 1);
        Write("h2", "llrp-llhttp", 2, "https", "http", "plaintext", 16, 7, Tls13, 1);
        Write("h2", "llrp-kestrel-h1", 1, "https", "http", "plaintext", 31, 7, Tls13, 1301);
        Write("h2", "llrp-kestrel-h1", 2, "https", "http", "plaintext", 33, 7, Tls13, 1311);
        Write("h1", "llrp-llhttp", 1, "http", "http", "plaintext", 15, 7, "", 0);

        var withKestrel = Report("h2");
        var without = Report("h1");

        Assert.Contains("| Kestrel's HTTP layer instead of the proxy's own front end | llrp-kestrel-h1 − llrp-llhttp | 16.5 (16.0 to 17.0) | 1305 (1300 to 1310) |",
            withKestrel, StringComparison.Ordinal);
        Assert.Contains("| Kestrel transport + request side + LLHttp | llrp-llhttp |", without, StringComparison.Ordinal);
        Assert.DoesNotContain("Kestrel's HTTP layer", without, StringComparison.Ordinal);
    }

    [Fact]
    public void TheTlsLayerRefusesAFolderOfOtherSchemesByName()
    {
        Write("d0", "nginx", 1, "http", "http", "plaintext", 8, 7, "");
        Write("d1", "nginx", 1, "https", "https", "plaintext", 11, 7, Tls13);

        var e = Assert.Throws<ReportException>(() => TlsLayerCommand.Read([Path.Combine(_dir, "d0"), Path.Combine(_dir, "d1")], null));

        Assert.Contains("nginx.r1.json: ran https → https, but its directory is argument 2 of --tls-layer, the https → http runs", e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(new[] { "only-one", "--out", "o" }, 2)]
    [InlineData(new[] { "a", "b" }, 2)]
    [InlineData(new[] { "a", "b", "c", "d", "--out", "o" }, 2)]
    [InlineData(new[] { "a", "b", "--out", "o", "--bogus" }, 2)]
    public void TheTlsLayerCommandAnswersBadUsageWithExitCode2(string[] args, int exit) =>
        Assert.Equal(exit, ReportCli.Run(["--tls-layer", .. args]));

    private string Report(string folder)
    {
        var (runs, metas, _) = ResultsReader.ReadAll(Path.Combine(_dir, folder), skipDirectory: null);
        return new MarkdownReport(_dir, _dir, runs, metas, drawCharts: false).Build();
    }

    private void Write(string folder, string scenario, int round, string? serverScheme, string? downstreamScheme, string headers,
        double cpuPerRequest, double originCpuPerRequest, string tls, double? allocated = null)
    {
        var dir = Path.Combine(_dir, folder);
        Directory.CreateDirectory(dir);
        var schemes = serverScheme is null ? "" : $$""" "serverScheme": "{{serverScheme}}", "downstreamScheme": "{{downstreamScheme}}", """;
        var inv = System.Globalization.CultureInfo.InvariantCulture;
        var load = $$"""{ "wrk/rps/mean": 1000 {{(tls.Length > 0 ? ", " + tls : "")}} }""";
        var proxy = $$"""{ "proc/cpu/per-request": {{cpuPerRequest.ToString(inv)}} {{(allocated is { } a ? $", \"llrp/allocated-per-request\": {a.ToString(inv)}" : "")}} }""";
        File.WriteAllText(Path.Combine(dir, $"{scenario}.r{round}.json"), $$"""
            {
              "returnCode": 0,
              "jobResults": {
                "properties": { "scenario": "{{scenario}}", "round": "{{round}}" },
                "jobs": {
                  "load": { "results": {{load}},
                            "variables": { {{schemes}} "connections": 64, "path": "/", "loadThreads": 1, "threads": 1, "presetHeaders": "{{headers}}", "load": "wrk" } },
                  "application": { "results": {{proxy}} },
                  "downstream": { "results": { "proc/cpu/per-request": {{originCpuPerRequest.ToString(inv)}} } }
                }
              }
            }
            """);
    }
}
