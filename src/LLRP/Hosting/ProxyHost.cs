using System.Globalization;
using LLHttp;
using LLHttp.Sockets;
using LLRP.Balancing;
using LLRP.Connections;
using LLRP.Diagnostics;
using LLRP.Forwarding;
using LLRP.Http2;
using LLRP.KestrelHttp;
using LLRP.Transport;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace LLRP.Hosting;

/// <summary>Builds the proxy: Kestrel's socket transport with one raw connection handler per listen address.</summary>
public static class ProxyHost
{
    public static WebApplication Build(string[] args)
    {
        CommandLine.Check(args);
        var builder = WebApplication.CreateSlimBuilder(args);
        builder.Logging.ClearProviders();
        // One line per entry: a failed exchange's warning (ExchangeFailureLog) reads as one line, as grep sees it.
        builder.Logging.AddSimpleConsole(o => o.SingleLine = true).SetMinimumLevel(LogLevel.Warning);
        builder.Logging.AddFilter("Microsoft.Hosting.Lifetime", LogLevel.Information);
        // Downstreams taken out (Warning) and back in (Information).
        builder.Logging.AddFilter("LLRP.Balancing", LogLevel.Information);
        // --urls is served by explicit Listen calls, which Kestrel reports as "Overriding address(es)" at Warning.
        // Kestrel's own category is off and its subcategories (the trailing dot) keep Error: Kestrel opens a logging scope
        // for every connection whenever its category logs at all, which costs each connection a scope, an
        // ExecutionContext and its async-local map (~150 B while idle), and makes every await of the connection restore
        // that context. The one error it would log there, a connection handler's unhandled exception, ProxyServer logs.
        builder.Logging.AddFilter("Microsoft.AspNetCore.Server.Kestrel", LogLevel.None);
        builder.Logging.AddFilter("Microsoft.AspNetCore.Server.Kestrel.", LogLevel.Error);
        // A failed start (a port in use) is reported by Program in one line; the host would log it again with its stack.
        builder.Logging.AddFilter("Microsoft.Extensions.Hosting.Internal.Host", LogLevel.None);

        var options = CommandLine.Read(builder.Configuration);
        builder.Services.AddSingleton(options);
        // The bound of the graceful stop: Kestrel waits this long for connections to end, then aborts them.
        builder.Services.Configure<HostOptions>(o => o.ShutdownTimeout = options.ShutdownTimeout);

        // Kestrel's default (true): an idle connection waits with a zero-byte read and holds no 4 KiB pipe block.
        // 10,000 idle connections cost 6.4 KiB each with true against 10.6 KiB with false; the CPU per request the
        // two showed on a noisy shared box overlapped. Bounded memory per idle connection is the goal here, so true;
        // re-check the CPU cost on a quiet machine (docs/methodology.md, "Decisions and their evidence").
        builder.WebHost.UseSockets(o =>
        {
            o.WaitForDataBeforeAllocatingBuffer = true;
            o.UnsafePreferInlineScheduling = options.InlineScheduling;
        });
        InlineSocketCompletions.Request(options.InlineScheduling);
        var downstreams = new DownstreamSet(options.Balancing);
        var server = new ProxyServer(options, downstreams, ForwarderFactory.Create(options, downstreams));
        builder.Services.AddSingleton(server);
        var kestrelHttp = KestrelFrontEnd.IsUsed(options) ? new StreamApplication(server) : null;
        var rawHttp2 = options.FrontEnd == FrontEnd.Raw && KestrelFrontEnd.ServesHttp2(options) ? new Http2FrontEnd(server) : null;
        builder.WebHost.UseKestrel(k =>
        {
            k.AddServerHeader = false;
            if (kestrelHttp is not null || rawHttp2 is not null)
            {
                KestrelFrontEnd.Configure(k, options);
            }
            foreach (var endPoint in options.ListenEndPoints)
            {
                k.Listen(endPoint.EndPoint, listen =>
                {
                    var protocols = options.ProtocolsOf(endPoint);
                    // Before the TLS middleware, which offers these by ALPN.
                    listen.Protocols = KestrelFrontEnd.KestrelProtocols(protocols, endPoint.Tls);
                    if (endPoint.Tls)
                    {
                        ServerTls.Use(listen, options);
                    }
                    if (protocols == ListenProtocols.Http1 && options.FrontEnd == FrontEnd.Raw)
                    {
                        // HTTP/1.1 only: the raw connection handler, nothing in front of it.
                        listen.Use(_ => server.OnConnectionAsync);
                    }
                    else
                    {
                        listen.Use(KestrelFrontEnd.Route(server, protocols, endPoint.Tls, rawHttp2));
                    }
                });
            }
        });
        if (kestrelHttp is not null)
        {
            KestrelFrontEnd.UseApplication(builder.Services, kestrelHttp);
        }

        if (options.SocketEngine == LLHttpSocketEngine.Epoll)
        {
            // Before any socket registers: no connection is opened until the app runs.
            EpollEngine.ThreadCount = options.EngineThreads;
            // Kestrel binds with the transport registered last; registered here, after UseSockets, this one.
            builder.Services.AddSingleton<IConnectionListenerFactory, EpollConnectionListenerFactory>();
        }

        var app = builder.Build();
        server.UseLogging(app.Services.GetRequiredService<ILoggerFactory>());
        var report = new SelfReport(server, options.StatsInterval);
        downstreams.Start(app.Services.GetRequiredService<ILoggerFactory>());
        app.Lifetime.ApplicationStopping.Register(() =>
        {
            var inFlight = server.BeginStopping();
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"LLRP stopping: no new connections; waiting up to {options.ShutdownTimeout.TotalSeconds} s for {Wording.Count(inFlight, "exchange", "exchanges")} in flight, then aborting what is left."));
        });
        app.Lifetime.ApplicationStarted.Register(() => Console.WriteLine($"{options.Describe()}\n{server.ClientDescription}"));
        app.Lifetime.ApplicationStopped.Register(() =>
        {
            report.Dispose();
            kestrelHttp?.Dispose();
            rawHttp2?.Dispose();
            server.Dispose();
            var summary = report.Summary();
            Console.Out.Write(report.Block());
            Console.WriteLine(summary);
        });
        return app;
    }

    /// <summary>The addresses the proxy listens on once started (port 0 resolved to the real port).</summary>
    public static IReadOnlyCollection<string> Addresses(WebApplication app) =>
        app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.ToArray();
}
