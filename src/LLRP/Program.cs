using LLRP;
using LLRP.Hosting;

try
{
    var app = ProxyHost.Build(args);
    await app.RunAsync();
    return 0;
}
catch (OptionsException e)
{
    Console.Error.WriteLine($"LLRP: {e.Message}");
    return 2;
}
