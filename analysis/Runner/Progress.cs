using System.Globalization;

namespace LLRP.Runner;

/// <summary>
/// The progress of a long run that a person can watch: run n of N, the time elapsed, the time left at the pace so far
/// and the plan's expected time, and the last run's result (RPS and steadiness). On a terminal it is one line rewritten
/// in place, with the log lines printed above it (<see cref="WriteAbove"/>); in a log (output redirected) each update is
/// one plain line, so a file keeps the history.
/// </summary>
internal sealed class Progress(string name, int total, TimeSpan expected, TextWriter output, bool terminal, Func<TimeSpan> elapsed)
{
    // Clears the terminal line the cursor is on, after a carriage return (ECMA-48 EL, "erase in line", mode 2).
    private const string ClearLine = "\r\u001b[2K";

    private readonly object _lock = new();
    private int _done;
    private string? _line;

    /// <summary>The progress the run's log lines are printed above (null: nothing to keep in place).</summary>
    public static Progress? Current { get; set; }

    /// <summary>Progress on the process's standard output, rewritten in place when that is a terminal.</summary>
    public static Progress OnConsole(string name, int total, TimeSpan expected)
    {
        var started = DateTime.UtcNow;
        return new Progress(name, total, expected, Console.Out, !Console.IsOutputRedirected, () => DateTime.UtcNow - started);
    }

    /// <summary>One more run ended; <paramref name="result"/> says what it gave ("63,535 RPS, steady").</summary>
    public void Completed(string run, string result)
    {
        lock (_lock)
        {
            _done = Math.Min(_done + 1, total);
            var spent = elapsed();
            var left = TimeSpan.FromSeconds(spent.TotalSeconds / _done * (total - _done));
            var line = string.Create(CultureInfo.InvariantCulture,
                $"{name}: run {_done} of {total} ({100 * _done / total} %), {Clock(spent)} elapsed, ~{Clock(left)} left " +
                $"(expected ~{Clock(expected)} in all); last: {run}, {result}");
            if (terminal)
            {
                output.Write(ClearLine + line);
                _line = line;
            }
            else
            {
                output.WriteLine(line);
            }
            output.Flush();
        }
    }

    /// <summary>Writes a log line; on a terminal the progress line is cleared first and drawn again below it.</summary>
    public void WriteAbove(TextWriter writer, string line)
    {
        lock (_lock)
        {
            if (_line is null)
            {
                writer.WriteLine(line);
                return;
            }
            output.Write(ClearLine);
            output.Flush();
            writer.WriteLine(line);
            writer.Flush();
            output.Write(_line);
            output.Flush();
        }
    }

    /// <summary>Ends the in-place line so that what follows starts on a line of its own.</summary>
    public void Finish()
    {
        lock (_lock)
        {
            if (_line is not null)
            {
                output.WriteLine();
                _line = null;
            }
        }
    }

    /// <summary>A log line, above the current progress when there is one.</summary>
    public static void Write(TextWriter writer, string line)
    {
        if (Current is { } progress)
        {
            progress.WriteAbove(writer, line);
        }
        else
        {
            writer.WriteLine(line);
        }
    }

    private static string Clock(TimeSpan t) =>
        t.TotalHours >= 1 ? $"{(int)t.TotalHours}h{t.Minutes:00}m" : t.TotalMinutes >= 1 ? $"{(int)t.TotalMinutes}m{t.Seconds:00}s" : $"{t.Seconds}s";
}
