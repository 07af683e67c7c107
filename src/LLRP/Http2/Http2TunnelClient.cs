using System.IO.Pipelines;
using LLHttp2;
using LLRP.Connections;

namespace LLRP.Http2;

/// <summary>
/// One HTTP/2 stream as the client end of a tunnel after an extended CONNECT (RFC 8441 §5): the stream's DATA frames
/// are the bytes both ways and its END_STREAM the half-close, while the connection's other streams go on. The input is
/// the request body (the client's END_STREAM completes it, its RST_STREAM fails it), the output the response body (DATA
/// within the flow-control windows, RFC 9113 §6.9). One per stream slot: the front end's own <see cref="Tunnel"/> takes
/// it as <see cref="ITunnelClient"/>, a variant that relays the tunnel itself as the client's <see cref="IDuplexPipe"/>.
/// </summary>
internal sealed class Http2TunnelClient(Http2FrontEndStream stream) : ITunnelClient, IDuplexPipe
{
    public PipeReader Input => stream.RequestBody;

    public PipeWriter Output => stream.ResponseBody;

    /// <summary>END_STREAM (an empty DATA frame when nothing is left to send): the client's bytes still flow (half-closed, RFC 9113 §5.1).</summary>
    public async ValueTask<bool> CloseOutputAsync() => !(await stream.SendAsync(complete: true)).IsCompleted;

    /// <summary>RST_STREAM CANCEL (RFC 9113 §8.7: the stream is no longer needed); the connection and its other streams go on.</summary>
    public void Abort() => stream.Connection?.Reset(stream, Http2ErrorCode.Cancel);
}
