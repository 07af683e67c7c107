namespace LLRP.Balancing;

/// <summary>
/// The available downstreams as an implicit list (no array is built per request): the policies index into it, as
/// YARP's index into their list of available destinations.
/// </summary>
internal static class Candidates
{
    public static bool Is(Destination destination, long now, Destination? exclude) =>
        !ReferenceEquals(destination, exclude) && destination.IsAvailable(now);

    public static int Count(Destination[] destinations, long now, Destination? exclude)
    {
        var count = 0;
        foreach (var destination in destinations)
        {
            if (Is(destination, now, exclude))
            {
                count++;
            }
        }
        return count;
    }

    /// <summary>The <paramref name="index"/>-th candidate in configured order (0-based); null if there are fewer.</summary>
    public static Destination? At(Destination[] destinations, int index, long now, Destination? exclude)
    {
        foreach (var destination in destinations)
        {
            if (Is(destination, now, exclude) && index-- == 0)
            {
                return destination;
            }
        }
        return null;
    }
}
