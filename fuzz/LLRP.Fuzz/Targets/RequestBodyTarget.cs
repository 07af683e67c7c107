using LLHttp.Syntax;
using LLRP.Fuzz.Support;
using LLRP.Http1;

namespace LLRP.Fuzz.Targets;

/// <summary>
/// The request body reader and the chunked decoder. An input the head parser accepts is a whole request whose body is
/// read; any other input is a chunked body behind a fixed head. The body is read whole and in pieces into destinations
/// of different sizes, and the chunked decoder runs on its own byte by byte: every reading must give the same bytes,
/// the same verdict and the same end of the body.
/// </summary>
internal static class RequestBodyTarget
{
    private static readonly byte[] s_chunkedHead = "POST /upload HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n"u8.ToArray();
    private static readonly RequestHead s_head = RequestSide.NewHead();

    public static void Run(ReadOnlySpan<byte> input)
    {
        var request = input.ToArray();
        var head = RequestSide.ParseHead(s_head, [request]);
        if (!head.Accepted)
        {
            request = [.. s_chunkedHead, .. request];
            head = RequestSide.ParseHead(s_head, [request]);
            Finding.Check(head.Accepted, "The fixed chunked head was not accepted.");
        }
        var body = request.AsSpan((int)head.Consumed);

        var whole = RequestSide.ReadBody(s_head, [body.ToArray()], 64 * 1024, out var wholeLeft);
        var split = RequestSide.ReadBody(s_head, Pieces.Split(body), 7, out var splitLeft);
        Finding.Check(Same(whole, split) && (whole is null || wholeLeft == splitLeft),
            $"Body read whole and in pieces disagree: {Show(whole, wholeLeft)} against {Show(split, splitLeft)}.");
        if (whole is not null && head.Framing == nameof(BodyFraming.ContentLength))
        {
            Finding.Check(whole.Length == head.ContentLength, $"Content-Length {head.ContentLength} gave {whole.Length} body bytes.");
        }
        if (head.Framing == nameof(BodyFraming.Chunked))
        {
            CheckDecoder(body, whole, wholeLeft);
        }
        s_head.Reset();
    }

    // The decoder alone, fed one byte at a time into a one-byte output, must agree with the reader's whole reading.
    private static void CheckDecoder(ReadOnlySpan<byte> body, byte[]? expected, long expectedLeft)
    {
        var decoder = default(ChunkedDecoder);
        decoder.Reset(maxExtensionBytes: int.MaxValue, maxTrailerBytes: RequestSide.Options.MaxRequestHeadersTotalSize);
        var output = new MemoryStream();
        Span<byte> one = stackalloc byte[1];
        var status = ChunkedStatus.InProgress;
        var i = 0;
        while (i < body.Length && status == ChunkedStatus.InProgress)
        {
            // A one-byte output may stop the decoder before it has taken the input byte; offer it again.
            status = decoder.Decode(body.Slice(i, 1), one, out var consumed, out var written);
            Finding.Check(consumed is 0 or 1 && written is 0 or 1, $"Decode consumed {consumed} of 1 byte, wrote {written} into 1.");
            Finding.Check(consumed == 1 || written == 1 || status != ChunkedStatus.InProgress, "Decode made no progress.");
            output.Write(one[..written]);
            i += consumed;
        }
        var bytes = output.ToArray();
        if (status == ChunkedStatus.Done)
        {
            Finding.Check(decoder.IsDone, "Done reported but IsDone is false.");
            Finding.Check(expected is not null && expected.AsSpan().SequenceEqual(bytes) && body.Length - i == expectedLeft,
                $"The decoder byte by byte ended the body after {i} bytes with {bytes.Length} data bytes; the reader {Show(expected, expectedLeft)}.");
        }
        else if (status != ChunkedStatus.InProgress)
        {
            // A syntax error: the reader must have rejected the body too (the maxRequestBodySize limit aside).
            Finding.Check(expected is null, $"The decoder byte by byte found {status}; the reader accepted {Show(expected, expectedLeft)}.");
            Finding.Check(ChunkedDecoder.Describe(status).Length > 0, "A status without a description.");
        }
        else
        {
            // The input ended inside the body: the reader saw the client go away before the body ended.
            Finding.Check(expected is null, $"The body was incomplete byte by byte, but the reader accepted {Show(expected, expectedLeft)}.");
        }
    }

    private static bool Same(byte[]? a, byte[]? b) => a is null ? b is null : b is not null && a.AsSpan().SequenceEqual(b);

    private static string Show(byte[]? body, long left) => body is null ? "rejected" : $"{body.Length} bytes with {left} left over";
}
