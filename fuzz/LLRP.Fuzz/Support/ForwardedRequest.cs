using LLHttp;
using LLRP.Http1;

namespace LLRP.Fuzz.Support;

/// <summary>
/// The request as LLHttpForwarder sends it downstream, written by a real LLHttpConnection over a recording transport:
/// the head as LLHttpForwarder.StartRequest writes it (method, target, the authority or the downstream's, fields of
/// kind Other, Via, X-Forwarded-For), then the body re-framed as its exchange loop does (a small Content-Length body
/// whole with the head, a larger one or a chunked one streamed). Mirrors those two places: keep it in step with them.
/// </summary>
internal static class ForwardedRequest
{
    /// <summary>What the forwarder names when an HTTP/1.0 client sent no Host (the lease's downstream authority).</summary>
    public const string DownstreamAuthority = "127.0.0.1:1";

    /// <summary>The X-Forwarded-For value of a loopback client.</summary>
    public const string ForwardedFor = "127.0.0.1";

    // LLHttpForwarder.SmallBodyLength and BodyBufferLength.
    private const int SmallBodyLength = 4 * 1024;
    private const int BodyBufferLength = 16 * 1024;

    private static readonly LLHttpOptions s_options = new();

    public static byte[] Forward(RequestHead head, byte[] body)
    {
        var transport = new MemoryTransport([]);
        using var downstream = new LLHttpConnection(transport, s_options, reconnect: null);
        downstream.StartRequest(head.MethodBytes, head.Target,
            head.Authority.IsEmpty ? System.Text.Encoding.ASCII.GetBytes(DownstreamAuthority) : head.Authority);
        for (var i = 0; i < head.HeaderCount; i++)
        {
            if (head.Header(i).Kind == HeaderKind.Other)
            {
                downstream.WriteValidatedHeader(head.Name(i), head.Value(i));
            }
        }
        downstream.WriteValidatedHeader("Via"u8, head.ViaValue);
        downstream.WriteValidatedHeader("X-Forwarded-For"u8, System.Text.Encoding.ASCII.GetBytes(ForwardedFor));

        if (head.Framing == BodyFraming.None)
        {
            Sync.Wait(downstream.SendRequestAsync(), "SendRequestAsync");
        }
        else if (head.Framing == BodyFraming.ContentLength && head.ContentLength <= SmallBodyLength)
        {
            Sync.Wait(downstream.SendRequestAsync(body), "SendRequestAsync with a body");
        }
        else
        {
            downstream.StartRequestBody(
                head.Framing == BodyFraming.Chunked ? RequestBodyFraming.Chunked : RequestBodyFraming.ContentLength,
                head.Framing == BodyFraming.Chunked ? -1 : head.ContentLength);
            for (var offset = 0; offset < body.Length; offset += BodyBufferLength)
            {
                Sync.Wait(downstream.WriteBodyAsync(body.AsMemory(offset, Math.Min(BodyBufferLength, body.Length - offset))), "WriteBodyAsync");
            }
            Sync.Wait(downstream.CompleteRequestAsync(), "CompleteRequestAsync");
        }
        return transport.Sent;
    }
}
