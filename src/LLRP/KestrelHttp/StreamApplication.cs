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
    private readonly ProxyServer _server;
    private readonly IdleSlots<ExchangeSlot> _idle;

    public StreamApplication(ProxyServer server)
    {
        _server = server;
        _idle = new IdleSlots<ExchangeSlot>(server);
    }

    public ExchangeSlot CreateContext(IFeatureCollection contextFeatures)
    {
        if (!_idle.TryRent(out var slot))
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
        if (exception is not null)
        {
            context.Dispose();
            return;
        }
        _idle.Return(context);
    }

    public void Dispose() => _idle.Dispose();
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
