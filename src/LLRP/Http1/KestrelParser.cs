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

    /// <summary>
    /// Parses field lines; at most <paramref name="budget"/> bytes are looked at when what is unread spans several
    /// segments (the caller's limit decides the rest).
    /// </summary>
    public static bool ParseHeaders(RequestHead head, ref SequenceReader<byte> reader, int budget)
    {
        if (reader.UnreadSpan.Length == reader.Remaining)
        {
            return s_parser.ParseHeaders(new ParserHandler(head), ref reader);
        }
        // Kestrel reads a field line that crosses segments by other rules than one within a segment: it refuses one
        // shorter than "a:b" CRLF, so "X:" CRLF with its empty value was a 400 only when a read ended inside it. Read
        // from one contiguous copy, a head gets the same answer however it arrives.
        var length = (int)Math.Min(reader.Remaining, Math.Max(budget, 1));
        var copy = ArrayPool<byte>.Shared.Rent(length);
        try
        {
            reader.UnreadSequence.Slice(0, length).CopyTo(copy);
            var contiguous = new SequenceReader<byte>(new ReadOnlySequence<byte>(copy, 0, length));
            var complete = s_parser.ParseHeaders(new ParserHandler(head), ref contiguous);
            reader.Advance(contiguous.Consumed);
            return complete;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(copy);
        }
    }
}
