namespace LLRP.Fuzz.Support;

/// <summary>
/// A property a target checks did not hold (two readings disagree, an invariant broke, an await never completed).
/// Not caught by any target, so afl-fuzz records the input as a crash.
/// </summary>
public sealed class Finding(string message) : Exception(message)
{
    public static void Check(bool condition, string message)
    {
        if (!condition)
        {
            throw new Finding(message);
        }
    }
}
