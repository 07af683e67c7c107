namespace LLRP;

/// <summary>
/// The request side's limits (maxRequest*): what <c>RequestHead</c> and <c>RequestBodyReader</c> enforce, each answered
/// with its own status when exceeded. Each default is its option's (<see cref="Option"/>, with the reason for it).
/// </summary>
public sealed record RequestLimits
{
    public int MaxRequestLineSize { get; init; } = Option.MaxRequestLineSize.DefaultValue;

    public int MaxRequestHeadersTotalSize { get; init; } = Option.MaxRequestHeadersTotalSize.DefaultValue;

    public int MaxRequestHeaderCount { get; init; } = Option.MaxRequestHeaderCount.DefaultValue;

    /// <summary>The largest maxRequestHeaderCount accepted: 100 times the default, far past any real client.</summary>
    internal const int MaxHeaderCountLimit = 10_000;

    public long MaxRequestBodySize { get; init; } = Option.MaxRequestBodySize.DefaultValue;
}
