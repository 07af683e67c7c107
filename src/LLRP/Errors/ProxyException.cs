namespace LLRP.Errors;

/// <summary>
/// The one exception type of the proxy side. Failures are rare, so they are thrown; the connection catches them
/// and answers by <see cref="Error"/>. The connection ends after any of them.
/// </summary>
internal sealed class ProxyException(ProxyError error, string message, Exception? innerException = null)
    : Exception(message, innerException)
{
    public ProxyError Error { get; } = error;
}
