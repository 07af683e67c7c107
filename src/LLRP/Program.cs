using System.Net.Sockets;
using LLRP;
using LLRP.Hosting;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;

if (CommandLine.AsksForMarkdown(args))
{
    Console.Out.Write(CommandLine.Markdown());
    return 0;
}

if (CommandLine.AsksForHelp(args))
{
    Console.Out.Write(CommandLine.Usage());
    return 0;
}

WebApplication app;
try
{
    app = ProxyHost.Build(args);
}
catch (OptionsException e)
{
    return Refuse(e.Message);
}

try
{
    await app.StartAsync();
}
catch (IOException e) when (e.InnerException is Microsoft.AspNetCore.Connections.AddressInUseException)
{
    // Kestrel's message names the address: "Failed to bind to address http://…: address already in use."
    return await RefuseAsync(app, e.Message);
}
catch (SocketException e)
{
    // Any other bind failure (an address this host does not have, a port it may not use) names no address.
    return await RefuseAsync(app, $"cannot listen on --urls '{app.Services.GetRequiredService<ProxyOptions>().Urls}': {e.Message}.");
}
await app.WaitForShutdownAsync();
await app.DisposeAsync();
return 0;

// A configuration the proxy cannot run with: one line, exit code 2 (the usage-error convention).
static int Refuse(string message)
{
    Console.Error.WriteLine($"LLRP: {message}");
    return 2;
}

static async Task<int> RefuseAsync(WebApplication app, string message)
{
    await app.DisposeAsync();
    return Refuse(message);
}
