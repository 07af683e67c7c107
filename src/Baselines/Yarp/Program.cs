using System.Globalization;
using LLRP.Baselines;
using Yarp.ReverseProxy.LoadBalancing;

// Full YARP as users deploy it: the default builder, AddReverseProxy().LoadFromConfig(...), MapReverseProxy() with one
// catch-all route to one cluster. The configuration is the "ReverseProxy" section users write in appsettings.json;
// here it is generated from --downstream so that every scenario takes the same options.
var builder = WebApplication.CreateBuilder(args);

Dictionary<string, string?> proxyConfig;
try
{
    proxyConfig = ReverseProxySection(builder.Configuration);
    JitActivity.Validate(builder.Configuration);
}
catch (FormatException e)
{
    Console.Error.WriteLine($"YarpProxy: {e.Message}");
    return 2;
}
builder.Configuration.AddInMemoryCollection(proxyConfig);

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
// The downstream's Server header is forwarded instead; Kestrel adding its own would only add bytes. Every limit and
// timeout stays at Kestrel's default (what a deployed app runs with, and what LLRP's own limits copy). An https://
// address in --urls takes its certificate from Kestrel's own configuration (--Kestrel:Certificates:Default:Path, :KeyPath).
builder.WebHost.ConfigureKestrel(k => k.AddServerHeader = false);

builder.Services.AddReverseProxy().LoadFromConfig(builder.Configuration.GetSection("ReverseProxy"));

var app = builder.Build();
// --statsInterval / --statsWindow: the JIT activity of the measured window, for the runner's steadiness check.
JitActivity.Attach(app.Configuration, app.Lifetime);
app.MapReverseProxy();
await app.RunAsync();
return 0;

// One route matching every path, one cluster with a destination per --downstream address, the load-balancing policy
// of --loadBalancing (default RoundRobin, closest to LLRP's rotation), and the activity timeout LLRP's
// downstreamResponseTimeout also controls.
static Dictionary<string, string?> ReverseProxySection(IConfiguration config)
{
    var downstream = config["downstream"];
    if (string.IsNullOrWhiteSpace(downstream))
    {
        throw new FormatException("--downstream is required: one or more http://IP:PORT or https://IP:PORT separated by ';'.");
    }
    var section = new Dictionary<string, string?>
    {
        ["ReverseProxy:Routes:all:ClusterId"] = "downstream",
        ["ReverseProxy:Routes:all:Match:Path"] = "{**catch-all}",
        ["ReverseProxy:Clusters:downstream:LoadBalancingPolicy"] = LoadBalancingPolicy(config["loadBalancing"]),
    };
    var index = 0;
    foreach (var part in downstream.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
    {
        if (!Uri.TryCreate(part, UriKind.Absolute, out var uri) || (uri.Scheme != Uri.UriSchemeHttp && uri.Scheme != Uri.UriSchemeHttps)
            || uri.AbsolutePath != "/" || !string.IsNullOrEmpty(uri.Query) || !string.IsNullOrEmpty(uri.UserInfo))
        {
            throw new FormatException($"--downstream '{part}' is not an http://IP:PORT or https://IP:PORT address (paths and queries are not supported).");
        }
        // https: YARP's own TLS, checked against the runtime's root store (on Linux, SSL_CERT_FILE and SSL_CERT_DIR name where it is read from).
        section[$"ReverseProxy:Clusters:downstream:Destinations:d{index++}:Address"] = $"{uri.Scheme}://{uri.Authority}/";
    }
    if (index == 0)
    {
        throw new FormatException("--downstream names no address.");
    }

    // Matches YARP's own ActivityTimeout default (100 s) and LLRP's option of the same name.
    var timeout = 100.0;
    if (config["downstreamResponseTimeout"] is { Length: > 0 } value
        && (!double.TryParse(value, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out timeout) || timeout <= 0 || timeout > 86_400))
    {
        throw new FormatException($"--downstreamResponseTimeout '{value}' is not a number of seconds above 0 and at most 86400.");
    }
    section["ReverseProxy:Clusters:downstream:HttpRequest:ActivityTimeout"] = TimeSpan.FromSeconds(timeout).ToString("c", CultureInfo.InvariantCulture);
    return section;
}

// YARP's built-in policy names (Yarp.ReverseProxy.LoadBalancing.LoadBalancingPolicies), case-insensitive. An unknown
// name is refused here with one line and exit code 2, instead of YARP's configuration-validation exception.
static string LoadBalancingPolicy(string? value)
{
    string[] names =
    [
        LoadBalancingPolicies.PowerOfTwoChoices, LoadBalancingPolicies.FirstAlphabetical, LoadBalancingPolicies.Random,
        LoadBalancingPolicies.RoundRobin, LoadBalancingPolicies.LeastRequests,
    ];
    if (string.IsNullOrEmpty(value))
    {
        return LoadBalancingPolicies.RoundRobin;
    }
    return names.FirstOrDefault(n => n.Equals(value, StringComparison.OrdinalIgnoreCase))
        ?? throw new FormatException($"--loadBalancing '{value}' is not one of {string.Join(", ", names)}.");
}
