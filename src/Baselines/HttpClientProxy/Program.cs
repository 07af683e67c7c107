using HttpClientProxy;
using LLRP.Baselines;

// The full ASP.NET Core stack as users deploy it: the default builder, routing, the middleware pipeline.
var builder = WebApplication.CreateBuilder(args);

ForwarderOptions options;
try
{
    options = ForwarderOptions.From(builder.Configuration);
}
catch (OptionsException e)
{
    Console.Error.WriteLine($"HttpClientProxy: {e.Message}");
    return 2;
}
try
{
    JitActivity.Validate(builder.Configuration);
}
catch (FormatException e)
{
    Console.Error.WriteLine($"HttpClientProxy: {e.Message}");
    return 2;
}

// Only the "Application started." line (crank's ready text) and real problems are logged; the default providers
// stay, as in a deployed app, but no per-request line passes the filter.
builder.Logging.SetMinimumLevel(LogLevel.Warning);
builder.Logging.AddFilter("Microsoft.Hosting.Lifetime", LogLevel.Information);

if (string.IsNullOrWhiteSpace(builder.Configuration["urls"]))
{
    builder.WebHost.UseUrls("http://127.0.0.1:8080");
}

// The load generator keeps every connection busy: skip the zero-byte read that saves memory only on idle connections.
builder.WebHost.UseSockets(o => o.WaitForDataBeforeAllocatingBuffer = false);
builder.WebHost.ConfigureKestrel(k =>
{
    // The downstream's Server header is forwarded instead; Kestrel adding its own would only add bytes.
    k.AddServerHeader = false;
    // Limits (header size and count, body size, timeouts) stay at Kestrel's defaults: they are what a deployed
    // app runs with, and LLRP's own limits copy them. An https:// address in --urls takes its certificate from
    // Kestrel's own configuration, as a deployed app does (--Kestrel:Certificates:Default:Path and :KeyPath).
});

builder.Services.AddSingleton(options);
builder.Services.AddSingleton<Forwarder>();

var app = builder.Build();
// --statsInterval / --statsWindow: the JIT activity of the measured window, for the runner's steadiness check.
JitActivity.Attach(app.Configuration, app.Lifetime);
var forwarder = app.Services.GetRequiredService<Forwarder>();
// Every method and path goes to the downstream through endpoint routing, the way an HttpClient proxy is written.
app.Map("/{**path}", (RequestDelegate)forwarder.ForwardAsync);
await app.RunAsync();
return 0;
