using Downstream;

WebApplication app;
try
{
    app = DownstreamHost.Build(args);
}
catch (DownstreamOptionsException e)
{
    Console.Error.WriteLine($"Downstream: {e.Message}");
    return 2;
}
await app.RunAsync();
return 0;
