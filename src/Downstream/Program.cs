using Downstream;

var builder = WebApplication.CreateSlimBuilder(args);

// Only the "Application started." line (crank's ready text) and real problems reach the console;
// a per-request log line would cost more than the request itself.
builder.Logging.ClearProviders();
builder.Logging.AddSimpleConsole().SetMinimumLevel(LogLevel.Warning);
builder.Logging.AddFilter("Microsoft.Hosting.Lifetime", LogLevel.Information);

if (string.IsNullOrWhiteSpace(builder.Configuration["urls"]))
{
    builder.WebHost.UseUrls("http://127.0.0.1:8081");
}

// The load generator keeps every connection busy, so skip the zero-byte read that saves memory on idle connections.
builder.WebHost.UseSockets(o => o.WaitForDataBeforeAllocatingBuffer = false);
// A proxy under test must not be credited (or charged) for bytes the origin chose not to send.
builder.WebHost.ConfigureKestrel(k => k.AddServerHeader = false);

var app = builder.Build();
// One terminal handler instead of endpoint routing: the origin is the ceiling every proxy is
// measured against, so it should spend as little as possible per request.
app.Run(OriginHandler.HandleAsync);
app.Run();
