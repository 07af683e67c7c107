namespace LLRP.Jobs;

/// <summary>The one error type of the jobs: a message for stderr ("NAME-job: message") and the exit status that goes
/// with it. The statuses are the jobs' contract with crank and the runner (benchmarks.yml's comments name them).</summary>
internal sealed class JobFailure(int exitCode, string message) : Exception(message)
{
    /// <summary>Bad usage: an unknown option, a missing or malformed value, a missing tool.</summary>
    public const int Usage = 2;

    /// <summary>The tool's report could not be read: no statistics printed.</summary>
    public const int Unreadable = 3;

    /// <summary>The measured run had more bad responses and errors than --max-errors (statistics printed first).</summary>
    public const int TooManyErrors = 4;

    public int ExitCode { get; } = exitCode;

    public static JobFailure BadUsage(string message) => new(Usage, message);

    public static JobFailure NotReadable(string message) => new(Unreadable, message);

    /// <summary>A tool the job ran has already said on stderr why it failed (a configuration check, the address
    /// rules): the job exits with <paramref name="exitCode"/> and prints nothing more.</summary>
    public static JobFailure Reported(int exitCode) => new(exitCode, "");
}
