using Microsoft.AspNetCore.Builder;

namespace LLRP.Tests.Infrastructure;

/// <summary>src/Downstream, the benchmark and test downstream, running in-process on an ephemeral port.</summary>
public sealed class DownstreamUnderTest : IAsyncDisposable
{
    private readonly WebApplication _app;

    private DownstreamUnderTest(WebApplication app, Uri url)
    {
        _app = app;
        Url = url;
    }

    public Uri Url { get; }

    public static async Task<DownstreamUnderTest> StartAsync(params string[] options)
    {
        var app = global::Downstream.DownstreamHost.Build(["--urls", "http://127.0.0.1:0", .. options]);
        await app.StartAsync(Wire.Deadline(TimeSpan.FromSeconds(30)));
        return new DownstreamUnderTest(app, new Uri(global::Downstream.DownstreamHost.Addresses(app).First()));
    }

    public Task<RawClient> ConnectAsync() => RawClient.ConnectAsync(Url);

    public async ValueTask DisposeAsync()
    {
        try
        {
            await _app.StopAsync(Wire.Deadline());
        }
        finally
        {
            await _app.DisposeAsync();
        }
    }
}

/// <summary>Class fixture: one Downstream named <see cref="Name"/>, shared by the tests of a class.</summary>
public sealed class NamedDownstream : IAsyncLifetime
{
    public const string Name = "replica-b";

    private DownstreamUnderTest? _downstream;

    public DownstreamUnderTest Downstream => _downstream ?? throw new InvalidOperationException("not started");

    public async Task InitializeAsync() => _downstream = await DownstreamUnderTest.StartAsync("--name", Name);

    public async Task DisposeAsync()
    {
        if (_downstream is not null)
        {
            await _downstream.DisposeAsync();
        }
    }
}
