using LLRP.Semantics;
using Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http;
using KestrelMethod = Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http.HttpMethod;
using KestrelVersion = Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http.HttpVersion;

namespace LLRP.Http1;

/// <summary>
/// Hands Kestrel's parser callbacks to the connection's <see cref="RequestHead"/>; a struct so the JIT devirtualises them.
/// The boundary of Kestrel's types: the method and version it recognised become the proxy's own
/// (<see cref="RequestMethod"/>, <see cref="ClientProtocol"/>) here, and nothing past this type sees Kestrel's.
/// </summary>
internal readonly struct ParserHandler(RequestHead head) : IHttpRequestLineHandler, IHttpHeadersHandler
{
    public void OnStartLine(HttpVersionAndMethod versionAndMethod, TargetOffsetPathLength targetPath, Span<byte> startLine) =>
        head.OnStartLine(MethodOf(versionAndMethod.Method), ProtocolOf(versionAndMethod.Version), versionAndMethod.MethodEnd, targetPath.Offset, startLine);

    public void OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) => head.OnHeader(name, value);

    public void OnHeadersComplete(bool endStream) => head.OnHeadersComplete();

    public void OnStaticIndexedHeader(int index)
    {
    }

    public void OnStaticIndexedHeader(int index, ReadOnlySpan<byte> value)
    {
    }

    private static RequestMethod MethodOf(KestrelMethod method) => method switch
    {
        KestrelMethod.Get => RequestMethod.Get,
        KestrelMethod.Head => RequestMethod.Head,
        KestrelMethod.Post => RequestMethod.Post,
        KestrelMethod.Put => RequestMethod.Put,
        KestrelMethod.Delete => RequestMethod.Delete,
        KestrelMethod.Connect => RequestMethod.Connect,
        KestrelMethod.Options => RequestMethod.Options,
        KestrelMethod.Trace => RequestMethod.Trace,
        KestrelMethod.Patch => RequestMethod.Patch,
        _ => RequestMethod.Custom,
    };

    // The parser answers 505 for any version but these two before it calls back.
    private static ClientProtocol ProtocolOf(KestrelVersion version) => version == KestrelVersion.Http10 ? ClientProtocol.Http10 : ClientProtocol.Http11;
}
