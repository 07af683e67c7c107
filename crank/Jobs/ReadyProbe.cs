using System.Net.Sockets;

namespace LLRP.Jobs;

/// <summary>The server jobs' ready line. Debian's nginx (master_process off) and HAProxy (-db) print nothing when they
/// start listening, while crank waits for a readyStateText (its own port probe is not reliable: a refused connect also
/// counts as listening, docs/crank-offline.md), so the job probes the port and prints "NAME: ready on ADDRESS:PORT"
/// once a TCP connect succeeds, or a failure line on stderr when the time is up.</summary>
internal static class ReadyProbe
{
    /// <summary>The pause between two connects: the bash probe's (the bash ready probe it replaces slept 0.1 s).</summary>
    public static readonly TimeSpan Interval = TimeSpan.FromMilliseconds(100);

    /// <summary>One connect's limit. A refused connect on a local port returns at once; this bounds one to an address
    /// that drops packets, so that the deadline still holds (the bash probe's connect had no limit of its own).</summary>
    public static readonly TimeSpan AttemptTimeout = TimeSpan.FromSeconds(1);

    /// <summary>True once a connect to <paramref name="address"/>:<paramref name="port"/> succeeds (0.0.0.0, the
    /// listen address for every interface, connects to this machine); false when <paramref name="timeout"/> passes or
    /// <paramref name="stop"/> is cancelled (the server exited).</summary>
    public static async Task<bool> WaitListeningAsync(string address, int port, TimeSpan timeout, CancellationToken stop)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (DateTime.UtcNow < deadline && !stop.IsCancellationRequested)
        {
            using (var attempt = CancellationTokenSource.CreateLinkedTokenSource(stop))
            {
                attempt.CancelAfter(AttemptTimeout);
                try
                {
                    using var client = new TcpClient();
                    await client.ConnectAsync(address, port, attempt.Token);
                    return true;
                }
                catch (Exception e) when (e is SocketException or OperationCanceledException or ArgumentOutOfRangeException)
                {
                }
            }
            try
            {
                await Task.Delay(Interval, stop);
            }
            catch (OperationCanceledException)
            {
                return false;
            }
        }
        return false;
    }

    /// <summary>Probes and prints the ready line on <paramref name="output"/> (crank's readyStateText is its start,
    /// "NAME: ready"), or the failure line on <paramref name="error"/>; nothing when <paramref name="stop"/> ends it.</summary>
    public static async Task AnnounceAsync(string name, string address, string port, int timeoutSeconds, TextWriter output,
        TextWriter error, CancellationToken stop)
    {
        var portNumber = int.TryParse(port, out var p) ? p : -1;
        if (await WaitListeningAsync(address, portNumber, TimeSpan.FromSeconds(timeoutSeconds), stop))
        {
            output.WriteLine($"{name}: ready on {address}:{port}");
            output.Flush();
        }
        else if (!stop.IsCancellationRequested)
        {
            error.WriteLine($"{name}: nothing listening on {address}:{port} after {timeoutSeconds}s");
        }
    }
}
