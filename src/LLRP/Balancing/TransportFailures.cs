using LLHttp;
using LLRP.Errors;

namespace LLRP.Balancing;

/// <summary>
/// Which failures say something about the downstream's health (passive health) and which leave the request unsent
/// (one retry elsewhere). A client going away, a timeout, an invalid response or the client's own bad body say nothing
/// about whether the downstream can be reached, so they never count.
/// </summary>
internal static class TransportFailures
{
    /// <summary>No connection could be opened: nothing of the request left the proxy, so another downstream may take it.</summary>
    public static bool IsConnectFailure(Exception e)
    {
        for (Exception? inner = e; inner is not null; inner = inner.InnerException)
        {
            switch (inner)
            {
                // A failed TLS handshake is part of connecting: nothing was sent, and the downstream is unusable as set up.
                case LLHttpException { Error: LLHttpError.ConnectFailed or LLHttpError.ConnectTimeout or LLHttpError.TlsHandshakeFailed }:
                case HttpRequestException { HttpRequestError: HttpRequestError.ConnectionError or HttpRequestError.NameResolutionError or HttpRequestError.SecureConnectionError }:
                // HttpClient's connect timeout, translated by InvokerForwarder.ConnectTimedOut.
                case ProxyException { Error: ProxyError.DownstreamUnavailable, InnerException: OperationCanceledException }:
                    return true;
            }
        }
        return false;
    }

    /// <summary>The connection to the downstream failed: refused, reset, or closed before a complete response.</summary>
    public static bool IsTransportFailure(Exception e)
    {
        if (IsConnectFailure(e))
        {
            return true;
        }
        if (e is ProxyException { Error: not (ProxyError.DownstreamUnavailable or ProxyError.DownstreamBodyCutShort) })
        {
            // The client's failure (its body, its connection) or an invalid downstream response: not the transport.
            return false;
        }
        for (Exception? inner = e; inner is not null; inner = inner.InnerException)
        {
            switch (inner)
            {
                case LLHttpException { Error: LLHttpError.SendFailed or LLHttpError.ReceiveFailed or LLHttpError.ConnectionClosedBeforeResponse or LLHttpError.ResponseBodyTruncated }:
                case HttpRequestException { HttpRequestError: HttpRequestError.ResponseEnded }:
                case IOException:
                    return true;
            }
        }
        return false;
    }
}
