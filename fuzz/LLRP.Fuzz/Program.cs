using LLRP.Fuzz.Targets;
using SharpFuzz;

namespace LLRP.Fuzz;

/// <summary>
/// One executable, one target per run: `LLRP.Fuzz TARGET` under afl-fuzz (SharpFuzz's fork server, persistent), or
/// `LLRP.Fuzz TARGET FILE|DIR...` to run inputs once each without afl (triage, regression, corpus checks). A target
/// treats the proxy's own rejections as normal; any other exception is a crash for afl-fuzz.
/// </summary>
public static class Program
{
    /// <summary>Inputs larger than this are cut: every parser under test has limits far below it.</summary>
    private const int MaxInputLength = 256 * 1024;

    public static readonly IReadOnlyDictionary<string, Action<ReadOnlySpan<byte>>> Targets = new Dictionary<string, Action<ReadOnlySpan<byte>>>
    {
        ["request-head"] = RequestHeadTarget.Run,
        ["request-body"] = RequestBodyTarget.Run,
        ["response"] = ResponseTarget.Run,
        ["host"] = HostTarget.Run,
        ["command-line"] = CommandLineTarget.Run,
        ["differential"] = DifferentialTarget.Run,
        ["h2-frames"] = H2FramesTarget.Run,
        ["hpack"] = HpackTarget.Run,
        ["h2-connection"] = H2ConnectionTarget.Run,
        ["h2-client-connection"] = H2ClientConnectionTarget.Run,
    };

    public static int Main(string[] args)
    {
        if (args.Length == 0 || !Targets.TryGetValue(args[0], out var target))
        {
            Console.Error.WriteLine($"usage: LLRP.Fuzz TARGET [FILE|DIR...]; targets: {string.Join(", ", Targets.Keys)}");
            return 2;
        }
        if (args.Length == 1)
        {
            Fuzzer.Run(stream => target(Read(stream)));
            return 0;
        }
        return Replay(args[0], target, args[1..]);
    }

    private static byte[] Read(Stream stream)
    {
        var buffer = new MemoryStream();
        stream.CopyTo(buffer);
        return buffer.Length > MaxInputLength ? buffer.GetBuffer()[..MaxInputLength] : buffer.ToArray();
    }

    /// <summary>Runs every file once; prints each failure with its input's name and returns 1 if any failed.</summary>
    private static int Replay(string name, Action<ReadOnlySpan<byte>> target, string[] paths)
    {
        var files = paths.SelectMany(p => Directory.Exists(p) ? Directory.GetFiles(p).Order(StringComparer.Ordinal) : (IEnumerable<string>)[p]).ToList();
        var failures = 0;
        foreach (var file in files)
        {
            try
            {
                using var stream = File.OpenRead(file);
                target(Read(stream));
            }
            catch (Exception e)
            {
                failures++;
                Console.Error.WriteLine($"{name}: {file}: {e.GetType().Name}: {e.Message}");
                Console.Error.WriteLine(e.StackTrace);
            }
        }
        Console.WriteLine($"{name}: {files.Count} inputs, {failures} failed");
        return failures == 0 ? 0 : 1;
    }
}
