using Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http;

namespace LLRP.Http1;

/// <summary>Hands Kestrel's parser callbacks to the connection's <see cref="RequestHead"/>; a struct so the JIT devirtualises them.</summary>
internal readonly struct ParserHandler(RequestHead head) : IHttpRequestLineHandler, IHttpHeadersHandler
{
    public void OnStartLine(HttpVersionAndMethod versionAndMethod, TargetOffsetPathLength targetPath, Span<byte> startLine) =>
        head.OnStartLine(versionAndMethod, targetPath, startLine);

    public void OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) => head.OnHeader(name, value);

    public void OnHeadersComplete(bool endStream) => head.OnHeadersComplete();

    public void OnStaticIndexedHeader(int index)
    {
    }

    public void OnStaticIndexedHeader(int index, ReadOnlySpan<byte> value)
    {
    }
}
