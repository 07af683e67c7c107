using System.Globalization;
using LLRP.Errors;
using Microsoft.Extensions.Logging;

namespace LLRP.Connections;

/// <summary>
/// Logs exchanges the downstream side failed (502, 504, a client connection aborted mid-response) at Warning, with the
/// downstream and the reason. At most one line per reason per <see cref="Interval"/>: a downstream that is down fails
/// every request, and a line per request would cost more than the requests themselves. The next line for that reason
/// says how many were left out since the last one.
/// </summary>
internal sealed class ExchangeFailureLog(ILogger logger, TimeProvider time)
{
    /// <summary>One line per second per reason: enough to see a failure as it starts and how often it recurs.</summary>
    public static readonly TimeSpan Interval = TimeSpan.FromSeconds(1);

    private readonly Slot[] _slots = CreateSlots();

    /// <summary>Whether a failure with this reason is the downstream side's, and so logged.</summary>
    public static bool IsLogged(ProxyError reason) =>
        reason is ProxyError.DownstreamUnavailable or ProxyError.DownstreamInvalidResponse
            or ProxyError.DownstreamTimeout or ProxyError.DownstreamBodyCutShort;

    /// <param name="answer">What the client got: a status code, or 0 when its connection was aborted.</param>
    public void Report(ProxyError reason, int answer, Uri? downstream, Exception cause)
    {
        var slot = _slots[(int)reason];
        var now = time.GetTimestamp();
        long suppressed;
        lock (slot)
        {
            if (slot.LastLine != 0 && time.GetElapsedTime(slot.LastLine, now) < Interval)
            {
                slot.Suppressed++;
                return;
            }
            slot.LastLine = now;
            suppressed = slot.Suppressed;
            slot.Suppressed = 0;
        }
        var outcome = answer == 0 ? "client connection aborted mid-response" : $"answered {answer}";
        var more = suppressed == 0 ? "" : string.Create(CultureInfo.InvariantCulture, $" ({suppressed} more like it since the last line)");
        logger.LogWarning("{Outcome}: downstream {Downstream} {Reason}: {Detail}{More}", outcome, downstream?.ToString() ?? "(none chosen)", reason, Detail(cause), more);
    }

    // The message and what caused it ("Connecting to the downstream failed: Connection refused").
    private static string Detail(Exception e) =>
        e.InnerException is { } inner && inner.Message != e.Message ? $"{e.Message.TrimEnd('.')}: {inner.Message}" : e.Message;

    private static Slot[] CreateSlots()
    {
        var slots = new Slot[Enum.GetValues<ProxyError>().Length];
        for (var i = 0; i < slots.Length; i++)
        {
            slots[i] = new Slot();
        }
        return slots;
    }

    private sealed class Slot
    {
        public long LastLine;
        public long Suppressed;
    }
}
