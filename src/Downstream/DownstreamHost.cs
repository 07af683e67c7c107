using System.Net;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.Configuration;

namespace Downstream;

/// <summary>Builds Downstream: Kestrel with one terminal handler and the /ws WebSocket echo on a branch of its own,
/// options --urls and --name.</summary>
internal static class DownstreamHost
{
    // The port run-local.sh and crank/smoke.sh expect of Downstream.
    public const string DefaultUrls = "http://127.0.0.1:8081";

    // Header field values must be visible ASCII (RFC 9110 §5.5); 64 characters name any replica.
    private const int MaxNameLength = 64;

    public static WebApplication Build(string[] args)
    {
        var builder = WebApplication.CreateSlimBuilder(args);

        // Only the "Application started." line (crank's ready text) and real problems reach the console;
        // a per-request log line would cost more than the request itself.
        builder.Logging.ClearProviders();
        builder.Logging.AddSimpleConsole().SetMinimumLevel(LogLevel.Warning);
        builder.Logging.AddFilter("Microsoft.Hosting.Lifetime", LogLevel.Information);

        if (string.IsNullOrWhiteSpace(builder.Configuration["urls"]))
        {
            builder.WebHost.UseUrls(DefaultUrls);
        }
        // --name is read from the command line only: the host's configuration also holds every environment variable,
        // and some shells set NAME.
        var name = ReplicaName(new ConfigurationBuilder().AddCommandLine(args).Build()["name"]);

        // The load generator keeps every connection busy, so skip the zero-byte read that saves memory on idle connections.
        builder.WebHost.UseSockets(o => o.WaitForDataBeforeAllocatingBuffer = false);
        // A proxy under test must not be credited (or charged) for bytes Downstream chose not to send.
        builder.WebHost.ConfigureKestrel(k => k.AddServerHeader = false);
        // https:// in --urls (the https downstream of https→https scenarios): the certificate comes from Kestrel's
        // configuration (--Kestrel:Certificates:Default:Path and :KeyPath), which the slim builder leaves out.
        builder.WebHost.UseKestrelHttpsConfiguration();

        var app = builder.Build();
        // The WebSocket echo on a branch of its own (its middleware runs for /ws only).
        WebSocketEcho.Map(app, name);
        // One terminal handler instead of endpoint routing: Downstream is the ceiling every proxy is
        // measured against, so it should spend as little as possible per request.
        app.Run(new DownstreamHandler(name).HandleAsync);
        return app;
    }

    /// <summary>The addresses Downstream listens on once started (port 0 resolved to the real port).</summary>
    public static IReadOnlyCollection<string> Addresses(WebApplication app) =>
        app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.ToArray();

    /// <summary>--name, default the host name: which replica answered, in every response's X-Downstream field.</summary>
    private static string ReplicaName(string? value)
    {
        var name = string.IsNullOrEmpty(value) ? Dns.GetHostName() : value;
        if (name.Length is 0 or > MaxNameLength || name.Any(c => c is <= ' ' or > '~'))
        {
            throw new DownstreamOptionsException($"--name '{value}' is not 1 to {MaxNameLength} visible ASCII characters without spaces.");
        }
        return name;
    }
}

/// <summary>A bad option: the message names it and what it accepts.</summary>
internal sealed class DownstreamOptionsException(string message) : Exception(message);
