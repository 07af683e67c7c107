using Microsoft.AspNetCore.Builder;

namespace LLRP.Tests.Infrastructure;

/// <summary>One in-process LLRP variant in front of several recording downstreams (or addresses nobody listens on).</summary>
public sealed class BalancedProxy : IAsyncDisposable
{
    private readonly WebApplication _app;
    private readonly bool[] _killed;
    // Ports that must keep refusing until the proxy is disposed: the unreachable downstreams' and the killed ones'.
    private readonly List<RefusingPort> _heldPorts;

    private BalancedProxy(WebApplication app, RecordingDownstream[] downstreams, RefusingPort[] refusing, Uri url)
    {
        _app = app;
        _heldPorts = [.. refusing];
        Downstreams = downstreams;
        Url = url;
        _killed = new bool[downstreams.Length];
    }

    /// <summary>
    /// Stops downstream <paramref name="index"/>: its listener closes, its open connections are reset, and its port
    /// refuses connections from then on (held, so no parallel test's listener takes it; a test may listen on it again).
    /// </summary>
    public async Task KillAsync(int index)
    {
        _killed[index] = true;
        await Downstreams[index].DisposeAsync();
        _heldPorts.Add(new RefusingPort(Downstreams[index].Port));
    }

    public RecordingDownstream[] Downstreams { get; }
    public Uri Url { get; }

    public static async Task<BalancedProxy> StartAsync(string variant, int downstreamCount, params string[] options)
    {
        var downstreams = new RecordingDownstream[downstreamCount];
        for (var i = 0; i < downstreams.Length; i++)
        {
            downstreams[i] = new RecordingDownstream();
            downstreams[i].Start();
        }
        return await StartAsync(variant, downstreams, [], [.. downstreams.Select(d => $"http://127.0.0.1:{d.Port}")], options);
    }

    /// <summary>A proxy whose downstreams all refuse connections (ports held without a listener while it runs).</summary>
    public static async Task<BalancedProxy> StartUnreachableAsync(string variant, int downstreamCount, params string[] options)
    {
        var refusing = new RefusingPort[downstreamCount];
        for (var i = 0; i < refusing.Length; i++)
        {
            refusing[i] = new RefusingPort();
        }
        return await StartAsync(variant, [], refusing, [.. refusing.Select(r => r.Url)], options);
    }

    private static async Task<BalancedProxy> StartAsync(
        string variant, RecordingDownstream[] downstreams, RefusingPort[] refusing, string[] addresses, string[] options)
    {
        string[] args =
        [
            "--urls", "http://127.0.0.1:0",
            "--downstream", string.Join(';', addresses),
            .. Variants.Get(variant).Arguments,
            .. options,
        ];
        var app = LLRP.Hosting.ProxyHost.Build(args);
        await app.StartAsync(Wire.Deadline(TimeSpan.FromSeconds(30)));
        return new BalancedProxy(app, downstreams, refusing, new Uri(LLRP.Hosting.ProxyHost.Addresses(app).First()));
    }

    /// <summary>Requests each downstream received, health checks left out.</summary>
    public int[] Counts() => [.. Downstreams.Select(d => d.Forwarded.Count(r => !r.Target.StartsWith("/health", StringComparison.Ordinal)))];

    public Task<RawClient> ConnectAsync() => RawClient.ConnectAsync(Url);

    /// <summary>One GET on a new connection; the status, or 0 when the proxy closed without one.</summary>
    public async Task<int> GetAsync(string target = "/")
    {
        await using var client = await ConnectAsync();
        await client.SendAsync($"GET {target} HTTP/1.1\r\nHost: example.com\r\n\r\n");
        return (await client.ReadResponseAsync())?.Status ?? 0;
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            await _app.StopAsync(Wire.Deadline());
        }
        finally
        {
            await _app.DisposeAsync();
            for (var i = 0; i < Downstreams.Length; i++)
            {
                if (!_killed[i])
                {
                    await Downstreams[i].DisposeAsync();
                }
            }
            foreach (var port in _heldPorts)
            {
                port.Dispose();
            }
        }
    }
}
