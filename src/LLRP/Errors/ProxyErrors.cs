namespace LLRP.Errors;

/// <summary>The one mapping from a <see cref="ProxyError"/> to what the client is answered.</summary>
internal static class ProxyErrors
{
    /// <summary>The status the proxy answers with while no byte of the response was sent; 0 means no answer at all.</summary>
    public static int StatusCode(ProxyError error) => error switch
    {
        ProxyError.BadRequest => 400,
        ProxyError.MethodNotAllowed => 405,
        ProxyError.RequestTimeout => 408,
        ProxyError.ContentTooLarge => 413,
        ProxyError.UriTooLong => 414,
        ProxyError.ExpectationFailed => 417,
        ProxyError.HeaderFieldsTooLarge => 431,
        ProxyError.NotImplemented => 501,
        ProxyError.VersionNotSupported => 505,
        ProxyError.DownstreamTimeout => 504,
        ProxyError.NoDownstreamAvailable => 503,
        ProxyError.DownstreamUnavailable or ProxyError.DownstreamInvalidResponse or ProxyError.DownstreamBodyCutShort => 502,
        _ => 0,
    };

    /// <summary>Whose failure an error is when the request side raises it (a downstream adapter says so itself).</summary>
    public static FailureSide SideOf(ProxyError error) => error switch
    {
        ProxyError.DownstreamUnavailable or ProxyError.DownstreamInvalidResponse or ProxyError.DownstreamTimeout
            or ProxyError.DownstreamBodyCutShort or ProxyError.NoDownstreamAvailable => FailureSide.Downstream,
        _ => FailureSide.Client,
    };

    /// <summary>
    /// The reason a request head was refused, whichever check refused it: the proxy's own rules (a
    /// <see cref="ProxyException"/>) or Kestrel's request parser (its BadHttpRequestException, by its status).
    /// </summary>
    public static ProxyError RejectionOf(Exception e) =>
        e is Microsoft.AspNetCore.Http.BadHttpRequestException bad ? FromRejectionStatus(bad.StatusCode) : ((ProxyException)e).Error;

    /// <summary>Whether <paramref name="e"/> is a refused request head (<see cref="RejectionOf"/> can name its reason).</summary>
    public static bool IsRejection(Exception e) => e is ProxyException or Microsoft.AspNetCore.Http.BadHttpRequestException;

    /// <summary>The reason behind a status chosen by Kestrel's request parser (its BadHttpRequestException).</summary>
    private static ProxyError FromRejectionStatus(int statusCode) => statusCode switch
    {
        405 => ProxyError.MethodNotAllowed,
        408 => ProxyError.RequestTimeout,
        413 => ProxyError.ContentTooLarge,
        414 => ProxyError.UriTooLong,
        417 => ProxyError.ExpectationFailed,
        431 => ProxyError.HeaderFieldsTooLarge,
        501 => ProxyError.NotImplemented,
        505 => ProxyError.VersionNotSupported,
        _ => ProxyError.BadRequest,
    };
}
