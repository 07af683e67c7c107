namespace LLRP;

/// <summary>
/// The request side's limits (maxRequest*): what <c>RequestHead</c> and <c>RequestBodyReader</c> enforce, each answered
/// with its own status when exceeded.
/// </summary>
public sealed record RequestLimits
{
    // Matches Kestrel's MaxRequestLineSize (8 KB); RFC 9112 §3 recommends supporting at least 8000 octets.
    public int MaxRequestLineSize { get; init; } = 8 * 1024;

    // Matches Kestrel's MaxRequestHeadersTotalSize, which matches nginx's large_client_header_buffers (32 KB).
    public int MaxRequestHeadersTotalSize { get; init; } = 32 * 1024;

    // Matches Kestrel's MaxRequestHeaderCount, which matches Apache httpd's LimitRequestFields (100).
    public int MaxRequestHeaderCount { get; init; } = 100;

    /// <summary>The largest maxRequestHeaderCount accepted: 100 times the default, far past any real client.</summary>
    internal const int MaxHeaderCountLimit = 10_000;

    // Matches Kestrel's MaxRequestBodySize (30,000,000 B), which matches IIS's maxAllowedContentLength.
    public long MaxRequestBodySize { get; init; } = 30_000_000;
}
