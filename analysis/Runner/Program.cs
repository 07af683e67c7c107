using System.Globalization;
using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Nodes;

namespace LLRP.Runner;

/// <summary>Entry point. Subcommands:
///   run-local [options] [SCENARIO...]   crank/run-local.sh (its --help has every option)
///   comparisons COMPARISON [options]    crank/run-local.sh scaling|sweep|ab|ramp|comparisons (--help)
///   sweep [options] [SCENARIO...]       analysis/sweep.sh (--help)
///   ab-options [--summary] OUT NAME=... analysis/ab-options.sh (--help)
///   fixed-rate [options] [SCENARIO...]  crank/run-local.sh fixed-rate (--help): run-local at shares of a maximum
///   stepped [options] [SCENARIO...]     crank/run-local.sh stepped (--help): the stepped h2-over-TLS comparison
///   order ROUND ITEM...                 the items in that round's interleaved order, one per line (for scripts)</summary>
internal static class Program
{
    public static int Main(string[] args)
    {
        switch (args.FirstOrDefault())
        {
            case "run-local":
                return RunLocal.Run(args[1..], Checkout.Root());
            case "comparisons":
                return Comparisons.Run(args[1..], Checkout.Root());
            case "sweep":
                return Sweep.Run(args[1..], Checkout.Root());
            case "ab-options":
                return AbOptions.Run(args[1..], Checkout.Root());
            case "fixed-rate":
                return FixedRateStudy.Run(args[1..], Checkout.Root());
            case "stepped":
                return SteppedStudy.Run(args[1..], Checkout.Root());
            case "order" when args.Length >= 2 && int.TryParse(args[1], NumberStyles.None, CultureInfo.InvariantCulture, out var round) && round >= 1:
                foreach (var item in Rounds.Order(round, args[2..]))
                {
                    Console.Out.WriteLine(item);
                }
                return 0;
            default:
                Console.Error.WriteLine("runner: usage: Runner run-local|sweep|fixed-rate|stepped [options] [SCENARIO...] | Runner comparisons COMPARISON [options] | Runner ab-options [--summary] OUT NAME=... | Runner order ROUND ITEM... (ROUND >= 1)");
                return 2;
        }
    }

    private static readonly JsonSerializerOptions Indented = new() { WriteIndented = true, Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping };

    /// <summary>Writes <paramref name="json"/> to <paramref name="path"/> indented, non-ASCII text as it is (readable in a diff), with a final newline.</summary>
    public static void WriteJson(string path, JsonNode json) => File.WriteAllText(path, json.ToJsonString(Indented) + "\n");

    /// <summary><paramref name="path"/> relative to the checkout <paramref name="root"/> when it is under it, else as it is.</summary>
    public static string Relative(string root, string path) => path.StartsWith(root + "/", StringComparison.Ordinal) ? path[(root.Length + 1)..] : path;
}
