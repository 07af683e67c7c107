using Downstream;

WebApplication app;
try
{
    app = OriginHost.Build(args);
}
catch (OriginOptionsException e)
{
    Console.Error.WriteLine($"Downstream: {e.Message}");
    return 2;
}
await app.RunAsync();
return 0;
