using System.Globalization;

namespace LLRP.Soak;

/// <summary>One second of the soak: the proxy process as /proc shows it, and the responses of that second.</summary>
internal sealed record Sample(
    double Seconds,
    long RssKiB,
    int Descriptors,
    int Threads,
    double CpuSeconds,
    long Responses,
    long Ok,
    long NotOk,
    bool Restarting)
{
    public const string CsvHeader = "seconds,rss_kib,descriptors,threads,cpu_seconds,responses,ok,not_ok,cpu_us_per_response,restarting";

    /// <summary>CPU µs of the proxy per response in this second, from the CPU time since the previous sample.</summary>
    public double CpuMicrosPerResponse { get; init; } = double.NaN;

    public string ToCsv() => string.Join(',',
        Seconds.ToString("F1", CultureInfo.InvariantCulture),
        RssKiB.ToString(CultureInfo.InvariantCulture),
        Descriptors.ToString(CultureInfo.InvariantCulture),
        Threads.ToString(CultureInfo.InvariantCulture),
        CpuSeconds.ToString("F2", CultureInfo.InvariantCulture),
        Responses.ToString(CultureInfo.InvariantCulture),
        Ok.ToString(CultureInfo.InvariantCulture),
        NotOk.ToString(CultureInfo.InvariantCulture),
        double.IsNaN(CpuMicrosPerResponse) ? "" : CpuMicrosPerResponse.ToString("F1", CultureInfo.InvariantCulture),
        Restarting ? "1" : "0");

    /// <summary>One line of samples.csv, as <see cref="ToCsv"/> wrote it.</summary>
    public static Sample FromCsv(string line)
    {
        var f = line.Split(',');
        double D(int i) => double.Parse(f[i], CultureInfo.InvariantCulture);
        return new Sample(D(0), (long)D(1), (int)D(2), (int)D(3), D(4), (long)D(5), (long)D(6), (long)D(7), f[9] == "1")
        {
            CpuMicrosPerResponse = f[8].Length == 0 ? double.NaN : D(8),
        };
    }

    /// <summary>
    /// Reads /proc/PID: VmRSS and Threads from status, the entries of fd/, utime + stime from stat (clock ticks of
    /// USER_HZ, 100 on Linux x86-64). Null once the process is gone.
    /// </summary>
    public static (long RssKiB, int Threads, int Descriptors, double CpuSeconds)? ReadProcess(int pid)
    {
        try
        {
            long rss = 0;
            var threads = 0;
            foreach (var line in File.ReadLines($"/proc/{pid}/status"))
            {
                if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
                {
                    rss = long.Parse(line["VmRSS:".Length..].Trim().Split(' ')[0], CultureInfo.InvariantCulture);
                }
                else if (line.StartsWith("Threads:", StringComparison.Ordinal))
                {
                    threads = int.Parse(line["Threads:".Length..].Trim(), CultureInfo.InvariantCulture);
                }
            }
            var descriptors = Directory.GetFileSystemEntries($"/proc/{pid}/fd").Length;
            // The command name (field 2) may hold spaces: the fields after it start after the last ')'.
            var stat = File.ReadAllText($"/proc/{pid}/stat");
            var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
            // utime and stime are fields 14 and 15 of stat, so 11 and 12 after the command name (field 3 is index 0).
            var ticks = long.Parse(fields[11], CultureInfo.InvariantCulture) + long.Parse(fields[12], CultureInfo.InvariantCulture);
            return (rss, threads, descriptors, ticks / UserHz);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException or IndexOutOfRangeException)
        {
            return null;
        }
    }

    private const double UserHz = 100;
}
