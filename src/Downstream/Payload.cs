namespace Downstream;

/// <summary>
/// The response body bytes ('a' × size, as aspnet/Benchmarks' Downstream): one shared buffer, grown to the largest
/// size asked for and sliced per request, so the steady state allocates nothing and no size is stored twice.
/// </summary>
internal static class Payload
{
    // 64 MiB: room for any body-size sweep, yet one buffer of it is harmless on a load-test machine.
    public const int MaxSize = 64 * 1024 * 1024;

    private static readonly Lock _growLock = new();
    private static byte[] _bytes = Create(4096);

    public static ReadOnlyMemory<byte> Get(int size)
    {
        var bytes = Volatile.Read(ref _bytes);
        if (bytes.Length < size)
        {
            bytes = Grow(size);
        }
        return bytes.AsMemory(0, size);
    }

    private static byte[] Grow(int size)
    {
        // The lock keeps concurrent first requests for a large size from each allocating up to 64 MiB.
        lock (_growLock)
        {
            var bytes = _bytes;
            if (bytes.Length < size)
            {
                // Doubling means a rising sweep of sizes reallocates only log2(max) times.
                bytes = Create((int)Math.Min(Math.Max(size, 2L * bytes.Length), MaxSize));
                Volatile.Write(ref _bytes, bytes);
            }
            return bytes;
        }
    }

    private static byte[] Create(int size)
    {
        var bytes = GC.AllocateUninitializedArray<byte>(size);
        bytes.AsSpan().Fill((byte)'a');
        return bytes;
    }
}
