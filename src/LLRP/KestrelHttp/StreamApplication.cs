using System.Collections.Concurrent;
using LLRP.Connections;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Http.Features;

namespace LLRP.KestrelHttp;

/// <summary>
/// The application Kestrel's HTTP layer runs for every request it parses (each HTTP/2 stream; each HTTP/1.1 request
/// with --frontEnd kestrel): no middleware pipeline and no HttpContext, only an <see cref="ExchangeSlot"/> lent for the
/// request and given back after it.
/// </summary>
internal sealed class StreamApplication : IHttpApplication<ExchangeSlot>, IDisposable
{
    /// <summary>
    /// The most idle slots kept: 1,024, the exchanges in flight the buffer pools are sized for (ProxyBuffers). A slot holds
    /// a forwarder (and with llhttp its downstream connection), so beyond a burst's peak they are disposed, not kept.
    /// </summary>
    internal const int MaxIdleSlots = 1024;

    private readonly ProxyServer _server;
    private readonly ConcurrentQueue<ExchangeSlot> _idle = new();
    private volatile bool _disposed;

    public StreamApplication(ProxyServer server)
    {
        _server = server;
        // The pooled slots' forwarders get the deadline sweep's idle calls, as a raw connection's forwarder does between
        // requests: without them an idle slot would keep its downstream connection past downstreamIdleTimeout.
        server.UsePooledForwarders(() => _idle.Select(static slot => slot.Forwarder));
    }

    public ExchangeSlot CreateContext(IFeatureCollection contextFeatures)
    {
        if (!_idle.TryDequeue(out var slot))
        {
            slot = new ExchangeSlot(_server);
        }
        slot.Features = contextFeatures;
        return slot;
    }

    public Task ProcessRequestAsync(ExchangeSlot context) => context.RunAsync();

    public void DisposeContext(ExchangeSlot context, Exception? exception)
    {
        context.Features = null!;
        if (context.Reusable && exception is null && !_disposed && _idle.Count < MaxIdleSlots)
        {
            _idle.Enqueue(context);
            return;
        }
        context.Dispose();
    }

    public void Dispose()
    {
        _disposed = true;
        while (_idle.TryDequeue(out var slot))
        {
            slot.Dispose();
        }
    }
}

/// <summary>
/// Kestrel's server (<see cref="IServer"/>) started with <see cref="StreamApplication"/> in place of the host's
/// pipeline: Kestrel's public server API, so its HTTP/2 (and HTTP/1.1) implementation runs the proxy's application
/// directly. Listeners that stay on the raw connection handler never reach any application.
/// </summary>
internal sealed class ApplicationServer(IServer kestrel, StreamApplication application) : IServer
{
    public IFeatureCollection Features => kestrel.Features;

    public Task StartAsync<TContext>(IHttpApplication<TContext> hostApplication, CancellationToken cancellationToken) where TContext : notnull =>
        kestrel.StartAsync(application, cancellationToken);

    public Task StopAsync(CancellationToken cancellationToken) => kestrel.StopAsync(cancellationToken);

    public void Dispose() => kestrel.Dispose();
}
