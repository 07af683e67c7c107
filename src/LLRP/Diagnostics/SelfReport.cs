using System.Globalization;
using System.Text;
using LLRP.Connections;

namespace LLRP.Diagnostics;

/// <summary>
/// The proxy's own numbers: requests served and bytes allocated per request, printed as crank's stdout statistics
/// block (#StartJobStatistics ... #EndJobStatistics, parsed by crank's agent) every statsInterval and at shutdown.
/// </summary>
internal sealed class SelfReport : IDisposable
{
    private readonly ProxyServer _server;
    private readonly Timer? _timer;
    private long _lastRequests;
    private long _lastAllocated;
    private double _lastPerRequest = double.NaN;

    public SelfReport(ProxyServer server, TimeSpan interval)
    {
        _server = server;
        _lastAllocated = GC.GetTotalAllocatedBytes();
        if (interval > TimeSpan.Zero)
        {
            _timer = new Timer(static s => ((SelfReport)s!).Sample(print: true), this, interval, interval);
        }
    }

    /// <summary>Bytes allocated per request over the last interval that served requests (the steady state once warm).</summary>
    private void Sample(bool print)
    {
        lock (this)
        {
            var requests = _server.Requests;
            var allocated = GC.GetTotalAllocatedBytes();
            if (requests > _lastRequests)
            {
                _lastPerRequest = (double)(allocated - _lastAllocated) / (requests - _lastRequests);
                _lastRequests = requests;
                _lastAllocated = allocated;
                if (print)
                {
                    Console.Out.Write(Block());
                }
            }
        }
    }

    public string Summary()
    {
        Sample(print: false);
        return string.Create(CultureInfo.InvariantCulture,
            $"LLRP served {_server.Requests} requests, rejected {_server.Rejected}, allocated {GC.GetTotalAllocatedBytes()} bytes in all; " +
            $"{(double.IsNaN(_lastPerRequest) ? "n/a" : _lastPerRequest.ToString("F1", CultureInfo.InvariantCulture))} bytes/request over the last sampled interval.");
    }

    public string Block()
    {
        var now = DateTime.UtcNow.ToString("o", CultureInfo.InvariantCulture);
        var perRequest = double.IsNaN(_lastPerRequest) ? 0 : _lastPerRequest;
        var sb = new StringBuilder("#StartJobStatistics\n{\"Metadata\":[");
        Meta(sb, "llrp/requests", "Max", "Sum", "Proxy requests", "Requests the proxy completed", "n0").Append(',');
        Meta(sb, "llrp/rejected", "Max", "Sum", "Proxy rejections", "Requests the proxy refused (4xx it generated)", "n0").Append(',');
        Meta(sb, "llrp/allocated-per-request", "Last", "Avg", "Allocated B/request", "Bytes allocated per proxied request over the last interval", "n1");
        sb.Append("],\"Measurements\":[");
        Measure(sb, now, "llrp/requests", _server.Requests).Append(',');
        Measure(sb, now, "llrp/rejected", _server.Rejected).Append(',');
        Measure(sb, now, "llrp/allocated-per-request", perRequest);
        return sb.Append("]}\n#EndJobStatistics\n").ToString();
    }

    private static StringBuilder Meta(StringBuilder sb, string name, string aggregate, string reduce, string shortDescription, string longDescription, string format) =>
        sb.Append(CultureInfo.InvariantCulture,
            $"{{\"Source\":\"llrp\",\"Name\":\"{name}\",\"Aggregate\":\"{aggregate}\",\"Reduce\":\"{reduce}\",\"ShortDescription\":\"{shortDescription}\",\"LongDescription\":\"{longDescription}\",\"Format\":\"{format}\"}}");

    private static StringBuilder Measure(StringBuilder sb, string timestamp, string name, double value) =>
        sb.Append(CultureInfo.InvariantCulture, $"{{\"Timestamp\":\"{timestamp}\",\"Name\":\"{name}\",\"Value\":{value:0.###}}}");

    public void Dispose() => _timer?.Dispose();
}
