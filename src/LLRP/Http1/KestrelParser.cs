using System.Buffers;
using Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http;

namespace LLRP.Http1;

/// <summary>The one place that touches Kestrel's pubternal HTTP/1.1 parser.</summary>
internal static class KestrelParser
{
    private static readonly HttpParser<ParserHandler> s_parser = Create();

    private static HttpParser<ParserHandler> Create()
    {
        // Bare LF line ends are a smuggling lever (RFC 9112 §2.2 only MAY accept them); a proxy rejects them.
        AppContext.SetSwitch("Microsoft.AspNetCore.Server.Kestrel.DisableHttp1LineFeedTerminators", true);
        return new HttpParser<ParserHandler>(showErrorDetails: false);
    }

    public static bool ParseRequestLine(RequestHead head, ref SequenceReader<byte> reader) =>
        s_parser.ParseRequestLine(new ParserHandler(head), ref reader);

    public static bool ParseHeaders(RequestHead head, ref SequenceReader<byte> reader) =>
        s_parser.ParseHeaders(new ParserHandler(head), ref reader);
}
