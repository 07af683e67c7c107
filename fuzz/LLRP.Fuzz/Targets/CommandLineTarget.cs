using System.Text;
using LLRP.Fuzz.Support;
using Microsoft.Extensions.Configuration;

namespace LLRP.Fuzz.Targets;

/// <summary>
/// The command line, read as ProxyHost reads it: the input is split into arguments at NUL and LF, held to the known
/// options (CommandLine.Check), then read by .NET's command-line configuration into ProxyOptions. OptionsException is
/// the expected answer to a bad command line (one line and exit code 2); any other exception would end the proxy with
/// a stack trace, and is a finding.
/// </summary>
internal static class CommandLineTarget
{
    // A command line longer than this says nothing new about the parser.
    private const int MaxArguments = 32;

    public static void Run(ReadOnlySpan<byte> input)
    {
        var args = Encoding.UTF8.GetString(input).Split(['\0', '\n']).Take(MaxArguments).ToArray();
        _ = CommandLine.AsksForHelp(args);
        try
        {
            CommandLine.Check(args);
            var config = new ConfigurationBuilder().AddCommandLine(args).Build();
            var options = CommandLine.Read(config);
            Finding.Check(options.Balancing.Downstreams.Length > 0 && options.ListenEndPoints.Length > 0, "Options without a downstream or a listen address.");
        }
        catch (OptionsException)
        {
            // The expected answer to a bad command line.
        }
    }
}
