using System.Globalization;
using System.Text;

namespace LLRP.Diagnostics;

/// <summary>
/// Exchanges that ended without the response the downstream would have given, counted by what the client saw: an
/// error status the proxy answered (502, 503, 504, a 408 for a client too slow with its head or body, a 400 or 413
/// for a bad body...), its connection aborted mid-response, or nothing because the client had gone. Heads the request
/// side refused before any exchange began are counted apart, as rejections. Interlocked counters only: a failure
/// costs one increment and the counts cost nothing while nothing fails.
/// </summary>
internal sealed class FailedExchanges
{
    // Every status the proxy answers with is a 4xx or a 5xx.
    private const int FirstStatus = 400;
    private const int LastStatus = 599;

    private readonly long[] _answered = new long[LastStatus - FirstStatus + 1];
    private long _aborted;
    private long _clientGone;

    /// <summary>The proxy answered <paramref name="status"/> in place of a response.</summary>
    public void Answered(int status)
    {
        if (status is >= FirstStatus and <= LastStatus)
        {
            Interlocked.Increment(ref _answered[status - FirstStatus]);
        }
    }

    /// <summary>The response had begun and could not be completed: the client connection was aborted.</summary>
    public void Aborted() => Interlocked.Increment(ref _aborted);

    /// <summary>The client closed or reset its connection during the exchange: nobody was left to answer.</summary>
    public void ClientGone() => Interlocked.Increment(ref _clientGone);

    public long AnsweredWith(int status) =>
        status is >= FirstStatus and <= LastStatus ? Interlocked.Read(ref _answered[status - FirstStatus]) : 0;

    public long AbortedCount => Interlocked.Read(ref _aborted);

    public long ClientGoneCount => Interlocked.Read(ref _clientGone);

    public long Total
    {
        get
        {
            var total = AbortedCount + ClientGoneCount;
            for (var i = 0; i < _answered.Length; i++)
            {
                total += Interlocked.Read(ref _answered[i]);
            }
            return total;
        }
    }

    /// <summary>"failed 6 (5 answered 502, 1 client gone)", or "failed 0".</summary>
    public string Describe()
    {
        var total = Total;
        var text = new StringBuilder(string.Create(CultureInfo.InvariantCulture, $"failed {total}"));
        if (total == 0)
        {
            return text.ToString();
        }
        var separator = " (";
        for (var i = 0; i < _answered.Length; i++)
        {
            if (Interlocked.Read(ref _answered[i]) is > 0 and var count)
            {
                text.Append(CultureInfo.InvariantCulture, $"{separator}{count} answered {FirstStatus + i}");
                separator = ", ";
            }
        }
        if (AbortedCount is > 0 and var aborted)
        {
            text.Append(CultureInfo.InvariantCulture, $"{separator}{aborted} aborted mid-response");
            separator = ", ";
        }
        if (ClientGoneCount is > 0 and var gone)
        {
            text.Append(CultureInfo.InvariantCulture, $"{separator}{gone} client gone");
        }
        return text.Append(')').ToString();
    }
}
