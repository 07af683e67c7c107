using System.Text;
using LLHttp;
using LLRP.Fuzz.Support;

namespace LLRP.Fuzz.Targets;

/// <summary>
/// LLHttp's response-head parser and response framing. The parser runs on the head as it grows (as the receive buffer
/// fills) and whole; then a connection over an in-memory transport reads the whole response (interim heads, final
/// head, body to its end) from the input whole and in pieces, after a GET or, when the input's hash says so, a HEAD.
/// LLHttpException is the expected rejection; both readings must agree.
/// </summary>
internal static class ResponseTarget
{
    private const int MaxHeadLength = 64 * 1024;
    private const int MaxHeaderCount = 100;

    // Tiny receive buffers make every growth and compaction path run.
    private static readonly LLHttpOptions s_options = new() { InitialReceiveBufferSize = 8 };
    private static readonly ResponseHeadParser s_parser = new(MaxHeadLength, MaxHeaderCount);

    public static void Run(ReadOnlySpan<byte> input)
    {
        CheckParser(input);
        var method = input.Length > 0 && input[^1] % 4 == 0 ? "HEAD"u8.ToArray() : "GET"u8.ToArray();
        var whole = Exchange(method, [input.ToArray()]);
        var split = Exchange(method, Pieces.Split(input));
        Finding.Check(whole == split, $"The response read whole and in pieces disagree:\n  whole:  {whole}\n  pieces: {split}");
    }

    private static void CheckParser(ReadOnlySpan<byte> input)
    {
        var whole = Parse(input, input.Length);
        // Grown in steps, as receives fill the buffer: the parser must give the same verdict and fields.
        var step = 1 + (input.Length / 7);
        var grown = "incomplete";
        s_parser.Reset();
        var buffer = new byte[Math.Max(input.Length, 1)];
        input.CopyTo(buffer);
        try
        {
            for (var length = Math.Min(step, input.Length); ; length = Math.Min(length + step, input.Length))
            {
                if (s_parser.TryParse(buffer, length))
                {
                    grown = Describe();
                    break;
                }
                if (length == input.Length)
                {
                    break;
                }
            }
        }
        catch (LLHttpException e)
        {
            grown = "rejected " + e.Error;
        }
        Finding.Check(whole == grown, $"The response head parsed whole and grown disagree:\n  whole: {whole}\n  grown: {grown}");
    }

    private static string Parse(ReadOnlySpan<byte> input, int length)
    {
        s_parser.Reset();
        try
        {
            return s_parser.TryParse(input.ToArray(), length) ? Describe() : "incomplete";
        }
        catch (LLHttpException e)
        {
            return "rejected " + e.Error;
        }
    }

    private static string Describe()
    {
        var text = new StringBuilder().Append(
            $"{s_parser.StatusCode} 1.{s_parser.MinorVersion} '{Latin1(s_parser.Reason)}' head {s_parser.HeadLength} CL {s_parser.ContentLength} " +
            $"hasCL {s_parser.HasContentLength} TE {s_parser.HasTransferEncoding} chunked {s_parser.IsChunked} close {s_parser.ConnectionClose}");
        for (var i = 0; i < s_parser.Count; i++)
        {
            var name = s_parser.Name(i);
            var value = s_parser.Value(i);
            Finding.Check(name.Length > 0 && name.IndexOfAny(": \t\r\n"u8) < 0, $"A parsed field name holds a separator: '{Latin1(name)}'.");
            Finding.Check(value.IndexOfAny("\r\n\0"u8) < 0, $"A parsed field value holds CR, LF or NUL: '{Latin1(value)}'.");
            text.Append($" | {Latin1(name)}: {Latin1(value)}");
        }
        return text.ToString();
    }

    /// <summary>The whole exchange as LLHttp reads it: every head, the framing, the body, or the error that ended it.</summary>
    private static string Exchange(byte[] method, IReadOnlyList<byte[]> pieces)
    {
        var text = new StringBuilder();
        using var connection = new LLHttpConnection(new MemoryTransport(pieces), s_options, reconnect: null);
        try
        {
            connection.StartRequest(method, "/"u8, "example.com"u8);
            Sync.Wait(connection.SendRequestAsync(), "SendRequestAsync");
            ResponseHead head;
            do
            {
                head = Sync.Result(connection.ReadResponseHeadAsync(), "ReadResponseHeadAsync");
                text.Append($"{head.StatusCode} 1.{head.MinorVersion} ");
                foreach (var field in head.Headers)
                {
                    text.Append(Latin1(field.Name)).Append(": ").Append(Latin1(field.Value)).Append(" | ");
                }
            }
            while (head.IsInformational);
            text.Append($"{head.BodyFraming} CL {head.ContentLength} keep-alive {head.KeepAlive}; body ");
            if (head.BodyFraming == ResponseBodyFraming.Chunked || head.BodyFraming == ResponseBodyFraming.CloseDelimited)
            {
                Finding.Check(head.ContentLength == -1, "A body without Content-Length framing reports a length.");
            }
            Finding.Check(head.BodyFraming != ResponseBodyFraming.CloseDelimited || !head.KeepAlive, "A close-delimited body keeps the connection.");
            var body = new MemoryStream();
            var destination = new byte[5];
            int n;
            while ((n = Sync.Result(connection.ReadBodyAsync(destination), "ReadBodyAsync")) > 0)
            {
                body.Write(destination, 0, n);
            }
            if (head.BodyFraming == ResponseBodyFraming.ContentLength)
            {
                Finding.Check(body.Length == head.ContentLength, $"Content-Length {head.ContentLength} gave {body.Length} body bytes.");
            }
            if (head.BodyFraming == ResponseBodyFraming.None)
            {
                Finding.Check(body.Length == 0, "A response without a body gave body bytes.");
            }
            // Whether the connection stays reusable is left out: bytes after the response make it not reusable only
            // once they have arrived (whole, they have; in pieces, the idle check finds them before the next request).
            text.Append(Convert.ToHexString(body.ToArray()));
        }
        catch (LLHttpException e)
        {
            // Where the error struck may differ with the pieces; what it is may not.
            return text.Clear().Append("rejected ").Append(e.Error).ToString();
        }
        return text.ToString();
    }

    private static string Latin1(ReadOnlySpan<byte> bytes) => Encoding.Latin1.GetString(bytes);
}
