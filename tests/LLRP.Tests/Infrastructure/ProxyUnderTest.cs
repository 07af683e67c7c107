using System.Security.Cryptography.X509Certificates;

namespace LLRP.Tests.Infrastructure;

/// <summary>
/// One running proxy in front of its own recording downstream: an LLRP variant (one option set) in-process, or a
/// full-stack baseline as its own process (<see cref="BaselineProcess"/>).
/// </summary>
public sealed class ProxyUnderTest : IAsyncDisposable
{
    private readonly Func<ValueTask> _stop;
    private readonly RefusingPort? _refusing;
    private readonly TlsRelay? _relay;

    private ProxyUnderTest(Variant variant, RecordingDownstream downstream, Func<ValueTask> stop, Uri url, RefusingPort? refusing = null, TlsRelay? relay = null)
    {
        _refusing = refusing;
        _relay = relay;
        Variant = variant;
        Downstream = downstream;
        _stop = stop;
        Url = url;
    }

    public Variant Variant { get; }
    public RecordingDownstream Downstream { get; }
    public Uri Url { get; }

    /// <summary>
    /// Starts the variant in-process. <paramref name="tls"/>: the proxy listens on https:// with the suite's test
    /// certificate (<see cref="ConnectAsync"/> then speaks TLS). <paramref name="downstreamCertificate"/>: the downstream
    /// is https://, a <see cref="TlsRelay"/> presenting that certificate in front of the recording downstream.
    /// </summary>
    public static async Task<ProxyUnderTest> StartAsync(
        Variant variant, IReadOnlyList<string> options, bool unreachableDownstream, bool tls = false, X509Certificate2? downstreamCertificate = null,
        string[]? certificateArguments = null)
    {
        var downstream = new RecordingDownstream();
        downstream.Start();
        // Held for the proxy's life, so the downstream address keeps refusing connections.
        var refusing = unreachableDownstream ? new RefusingPort() : null;
        TlsRelay? relay = null;
        if (downstreamCertificate is not null)
        {
            relay = new TlsRelay(downstreamCertificate, downstream.Port);
            relay.Start();
        }
        var downstreamUrl = relay is not null ? $"https://127.0.0.1:{relay.Port}" : $"http://127.0.0.1:{refusing?.Port ?? downstream.Port}";
        tls |= variant.Tls;
        string[] listen = tls
            ? ["--urls", "https://127.0.0.1:0", .. certificateArguments ?? ["--certificate", TestCertificates.LocalhostPem, "--certificateKey", TestCertificates.LocalhostKeyPem]]
            : ["--urls", "http://127.0.0.1:0"];
        string[] args =
        [
            .. listen,
            "--downstream", downstreamUrl,
            .. variant.Arguments,
            .. options,
        ];
        var app = LLRP.Hosting.ProxyHost.Build(args);
        await app.StartAsync(Wire.Deadline(TimeSpan.FromSeconds(30)));
        var url = new Uri(LLRP.Hosting.ProxyHost.Addresses(app).First());
        return new ProxyUnderTest(variant, downstream, async () =>
        {
            try
            {
                await app.StopAsync(Wire.Deadline());
            }
            finally
            {
                await app.DisposeAsync();
            }
        }, url, refusing, relay);
    }

    /// <summary>A full-stack baseline (src/Baselines) as its own process, in front of a new recording downstream.</summary>
    public static async Task<ProxyUnderTest> StartBaselineAsync(Baseline baseline)
    {
        var downstream = new RecordingDownstream();
        downstream.Start();
        try
        {
            var process = await BaselineProcess.StartAsync(baseline, $"http://127.0.0.1:{downstream.Port}");
            return new ProxyUnderTest(baseline.AsVariant, downstream, process.DisposeAsync, process.Url);
        }
        catch
        {
            await downstream.DisposeAsync();
            throw;
        }
    }

    public Task<RawClient> ConnectAsync() => RawClient.ConnectAsync(Url);

    /// <summary>
    /// A fresh connection carrying GET /__canary: once the downstream has recorded it, whatever the proxy did with
    /// earlier requests has reached the downstream (or never will).
    /// </summary>
    public async Task CanaryAsync()
    {
        await using var client = await ConnectAsync();
        await client.SendAsync($"GET {Wire.CanaryPath} HTTP/1.1\r\nHost: canary.example\r\n\r\n");
        var response = await client.ReadResponseAsync();
        Assert.True(response?.Status == 200, $"canary request through the proxy failed: {response?.ToString() ?? "connection closed"}; {Downstream.Describe()}");
        Assert.True(await Downstream.WaitUntilAsync(o => o.Requests.Any(r => r.Target == Wire.CanaryPath)), "the downstream never saw the canary");
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            await _stop();
        }
        finally
        {
            await Downstream.DisposeAsync();
            _refusing?.Dispose();
            if (_relay is not null)
            {
                await _relay.DisposeAsync();
            }
        }
    }
}

/// <summary>
/// Class fixture: one proxy + downstream per variant, started on first use and shared by the tests of a class
/// (xunit runs them one at a time), reset before each test.
/// </summary>
public abstract class ProxyFarm : IAsyncLifetime
{
    private readonly Dictionary<string, Task<ProxyUnderTest>> _proxies = [];
    private readonly object _lock = new();

    protected virtual IReadOnlyList<string> Options => [];

    protected virtual bool UnreachableDownstream => false;

    /// <summary>Starts the proxy a test asks for by name (an LLRP variant, unless a farm says otherwise).</summary>
    protected virtual Task<ProxyUnderTest> StartAsync(string name) =>
        ProxyUnderTest.StartAsync(Variants.Get(name), Options, UnreachableDownstream);

    public async Task<ProxyUnderTest> GetAsync(string variant)
    {
        Task<ProxyUnderTest> task;
        lock (_lock)
        {
            if (!_proxies.TryGetValue(variant, out task!))
            {
                task = StartAsync(variant);
                _proxies[variant] = task;
            }
        }
        var proxy = await task;
        proxy.Downstream.Reset();
        return proxy;
    }

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        foreach (var task in _proxies.Values)
        {
            try
            {
                await (await task).DisposeAsync();
            }
            catch (Exception e) when (e is OperationCanceledException or InvalidOperationException or IOException)
            {
            }
        }
    }
}

public sealed class DefaultProxies : ProxyFarm;

/// <summary>Small limits so each is reachable with small requests.</summary>
public sealed class LimitedProxies : ProxyFarm
{
    public const int MaxRequestLineSize = 1024;
    public const int MaxRequestHeadersTotalSize = 4096;
    public const int MaxRequestHeaderCount = 20;
    public const int MaxRequestBodySize = 1000;
    public const int MaxResponseHeadersTotalSize = 2048;

    protected override IReadOnlyList<string> Options =>
    [
        "--maxRequestLineSize", $"{MaxRequestLineSize}",
        "--maxRequestHeadersTotalSize", $"{MaxRequestHeadersTotalSize}",
        "--maxRequestHeaderCount", $"{MaxRequestHeaderCount}",
        "--maxRequestBodySize", $"{MaxRequestBodySize}",
        "--maxResponseHeadersTotalSize", $"{MaxResponseHeadersTotalSize}",
    ];
}

/// <summary>The largest request head limits the options accept.</summary>
public sealed class LargestHeadProxies : ProxyFarm
{
    public const int MaxRequestLineSize = 1024 * 1024;
    public const int MaxRequestHeadersTotalSize = 512 * 1024;

    protected override IReadOnlyList<string> Options =>
    [
        "--maxRequestLineSize", $"{MaxRequestLineSize}",
        "--maxRequestHeadersTotalSize", $"{MaxRequestHeadersTotalSize}",
    ];
}

/// <summary>A short requestHeadersTimeout alone: a head started and not finished is the only thing that times out.</summary>
public sealed class SlowHeadProxies : ProxyFarm
{
    protected override IReadOnlyList<string> Options => ["--requestHeadersTimeout", "1"];
}

/// <summary>
/// A short keepAliveTimeout alone: an idle connection is the only thing that times out. Three seconds, not one: the
/// timeout also covers the wait for a connection's first request, and on a machine loaded by the whole suite a request
/// sent right after the connect has been seen to reach the proxy more than a second later, so the test's own request
/// met the timeout it means to observe afterwards.
/// </summary>
public sealed class IdleProxies : ProxyFarm
{
    protected override IReadOnlyList<string> Options => ["--keepAliveTimeout", "3"];
}

/// <summary>
/// A short downstreamResponseTimeout alone. Two seconds, not one: the tests also send requests the downstream answers,
/// and those must not meet the deadline on a loaded machine.
/// </summary>
public sealed class SlowDownstreamProxies : ProxyFarm
{
    public const int DownstreamResponseTimeoutSeconds = 2;

    protected override IReadOnlyList<string> Options => ["--downstreamResponseTimeout", $"{DownstreamResponseTimeoutSeconds}"];
}

public sealed class UnreachableDownstreamProxies : ProxyFarm
{
    protected override IReadOnlyList<string> Options => ["--downstreamConnectTimeout", "5"];

    protected override bool UnreachableDownstream => true;
}
