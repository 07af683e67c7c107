namespace LLRP.Fuzz.Support;

/// <summary>
/// Every byte a target feeds is in memory, so every await of the code under test must complete at once; one that does
/// not would wait forever on a real connection too (a hang), and is reported as a finding.
/// </summary>
public static class Sync
{
    public static T Result<T>(ValueTask<T> task, string what)
    {
        Finding.Check(task.IsCompleted, $"{what} did not complete with all its input in memory (a hang).");
        return task.GetAwaiter().GetResult();
    }

    public static void Wait(ValueTask task, string what)
    {
        Finding.Check(task.IsCompleted, $"{what} did not complete with all its input in memory (a hang).");
        task.GetAwaiter().GetResult();
    }
}
