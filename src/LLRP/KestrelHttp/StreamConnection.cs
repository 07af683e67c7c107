using LLRP.Connections;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;

namespace LLRP.KestrelHttp;

/// <summary>
/// One client connection that Kestrel's HTTP layer serves (HTTP/2, or HTTP/1.1 with --frontEnd kestrel): what its
/// exchanges share (the client's address for X-Forwarded-For, whether it spoke TLS) and the cap on streams the client
/// resets. Set as a feature of the connection by <see cref="KestrelFrontEnd"/>'s connection middleware; Kestrel's
/// per-request features fall back to the connection's, so each stream finds it.
/// </summary>
internal sealed class StreamConnection
{
    /// <summary>
    /// Rapid reset (CVE-2023-44487): a client that opens streams and resets them at once makes the proxy start work for
    /// each and never pays for a response. More than this many streams reset by the client within
    /// <see cref="ResetWindow"/> close the connection with GOAWAY. 200 per 30 s is Netty's default
    /// (Http2FrameCodecBuilder's decoderEnforceMaxRstFramesPerWindow); a browser cancelling navigations resets a few.
    /// Kestrel's own mitigation (ENHANCE_YOUR_CALM once reset streams whose application still runs exceed the stream
    /// limit) stays on underneath: it catches resets of slow streams, this catches resets of fast ones.
    /// </summary>
    internal const int MaxResetsPerWindow = 200;

    /// <summary>The window <see cref="MaxResetsPerWindow"/> counts in (Netty's default, 30 s).</summary>
    internal static readonly TimeSpan ResetWindow = TimeSpan.FromSeconds(30);

    /// <summary>
    /// How long a connection closed for too many resets may take to end gracefully (GOAWAY, then the streams in flight)
    /// before it is aborted: the deadline sweep's order of magnitude, so a client that ignores GOAWAY is cut off soon.
    /// </summary>
    internal static readonly TimeSpan ResetCloseGrace = TimeSpan.FromSeconds(1);

    private readonly ConnectionContext _context;
    private readonly Lock _lock = new();
    private long _windowStart;
    private int _resets;
    private int _closing;

    public StreamConnection(ConnectionContext context)
    {
        _context = context;
        Peer = ClientPeer.Of(context);
        _windowStart = Environment.TickCount64;
    }

    /// <summary>The client's address and whether it spoke TLS, for the fields the proxy adds.</summary>
    public ClientPeer Peer { get; }

    /// <summary>Whether the connection is being closed for too many resets.</summary>
    public bool Closing => Volatile.Read(ref _closing) != 0;

    /// <summary>The client reset a stream before its response was complete: counted against <see cref="MaxResetsPerWindow"/>.</summary>
    public void StreamReset()
    {
        bool over;
        lock (_lock)
        {
            var now = Environment.TickCount64;
            if (now - _windowStart >= (long)ResetWindow.TotalMilliseconds)
            {
                _windowStart = now;
                _resets = 0;
            }
            over = ++_resets > MaxResetsPerWindow;
        }
        if (over && Interlocked.Exchange(ref _closing, 1) == 0)
        {
            Close();
        }
    }

    // Kestrel's graceful close sends GOAWAY (RFC 9113 §6.8) and stops taking streams; the abort after the grace period
    // ends a connection whose client keeps streams open past it.
    private void Close()
    {
        _context.Features.Get<IConnectionLifetimeNotificationFeature>()?.RequestClose();
        _ = Task.Delay(ResetCloseGrace).ContinueWith(static (_, state) =>
            ((ConnectionContext)state!).Abort(new ConnectionAbortedException("Too many streams reset by the client (rapid reset).")),
            _context, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
    }
}
