using System.IO.Pipelines;
using System.Text;
using LLHttp.Syntax;
using LLRP.Http1;
using LLRP.Tests.Infrastructure;

namespace LLRP.Tests.RequestSide;

/// <summary>
/// <see cref="ResponseWriter"/> in memory: a downstream body handed over in every split (cut in two at every byte, and
/// one byte at a time) reaches the client framed as the request side promises (RFC 9112 §6.3, §7.1), head fields
/// through the hop-by-hop policy, and the de-framed bytes identical to the body for every split.
/// </summary>
public sealed class ResponseWriterSplitTests
{
    private const string Body = "{\"id\":1,\"items\":[\"a\",\"b\"],\"note\":\"0\\r\\n\\r\\n is data here\"}";

    public static TheoryData<string, string, bool> Cases => new()
    {
        // request, downstream framing, body expected on the wire
        { "GET / HTTP/1.1\r\nHost: a\r\n\r\n", "length", true },
        { "GET / HTTP/1.1\r\nHost: a\r\n\r\n", "until-end", true },
        { "GET / HTTP/1.0\r\n\r\n", "until-end", true },
        { "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", "length", true },
        { "HEAD / HTTP/1.1\r\nHost: a\r\n\r\n", "length", false },
    };

    [Theory, MemberData(nameof(Cases))]
    public async Task Every_body_split_is_framed_for_the_client(string request, string framing, bool bodyOnWire)
    {
        var head = await RequestSideDriver.HeadOf(request);
        var body = Wire.Bytes(Body);
        string? first = null;
        foreach (var pieces in RequestSideDriver.Splits(body))
        {
            var output = await WriteAsync(head, framing == "length" ? DownstreamBody.ContentLength : DownstreamBody.UntilEnd, body.Length, pieces);
            var what = $"{request.Split('\r')[0]} {framing} split as [{string.Join(", ", pieces.Select(p => p.Length))}]";
            var text = Wire.Text(output);
            var headEnd = text.IndexOf("\r\n\r\n", StringComparison.Ordinal) + 4;
            var responseHead = text[..headEnd];
            var wireBody = output[headEnd..];
            AssertHead(responseHead, head, framing, bodyOnWire, what);
            var decoded = responseHead.Contains("Transfer-Encoding: chunked\r\n", StringComparison.Ordinal) ? Dechunk(wireBody, what) : wireBody;
            Assert.True(decoded.AsSpan().SequenceEqual(bodyOnWire ? body : []), $"{what}: body on the wire '{Wire.Show(wireBody)}'");
            first ??= responseHead;
            Assert.Equal(first, responseHead);
        }
    }

    private static void AssertHead(string responseHead, RequestHead request, string framing, bool bodyOnWire, string what)
    {
        Assert.True(responseHead.StartsWith("HTTP/1.1 200 OK\r\n", StringComparison.Ordinal), $"{what}: '{Wire.Show(responseHead)}'");
        Assert.True(responseHead.Contains("\r\nX-Kept: yes\r\n", StringComparison.Ordinal), $"{what}: end-to-end field lost");
        Assert.True(responseHead.Contains("\r\nVia: 1.1 llrp\r\n", StringComparison.Ordinal), $"{what}: no Via (RFC 9110 §7.6.3)");
        // RFC 9110 §7.6.1: the downstream's hop-by-hop and framing fields never reach the client as they were.
        Assert.DoesNotContain("Keep-Alive: timeout", responseHead, StringComparison.Ordinal);
        Assert.DoesNotContain("Transfer-Encoding: gzip", responseHead, StringComparison.Ordinal);
        Assert.DoesNotContain("Content-Length: 999", responseHead, StringComparison.Ordinal);
        var http10 = request.ViaValue.SequenceEqual("1.0 llrp"u8);
        var chunked = framing == "until-end" && !http10 && bodyOnWire;
        Assert.True(chunked == responseHead.Contains("\r\nTransfer-Encoding: chunked\r\n", StringComparison.Ordinal),
            $"{what}: chunked expected {chunked} (RFC 9112 §7: never to HTTP/1.0): '{Wire.Show(responseHead)}'");
        Assert.True((framing == "length") == responseHead.Contains($"\r\nContent-Length: {Body.Length}\r\n", StringComparison.Ordinal),
            $"{what}: Content-Length kept only when the downstream gave one: '{Wire.Show(responseHead)}'");
        // HTTP/1.0 with a close-delimited body must close; HTTP/1.0 keep-alive with a length says so.
        if (http10 && framing == "until-end")
        {
            Assert.Contains("\r\nConnection: close\r\n", responseHead, StringComparison.Ordinal);
        }
    }

    private static async Task<byte[]> WriteAsync(RequestHead head, DownstreamBody framing, long length, byte[][] pieces)
    {
        var pipe = new Pipe(new PipeOptions(pauseWriterThreshold: 0, useSynchronizationContext: false));
        var writer = new ResponseWriter(pipe.Writer);
        writer.Start(head);
        writer.BeginHead(200);
        writer.WriteField("Content-Type"u8, "application/json"u8);
        writer.WriteField("Keep-Alive"u8, "timeout=5"u8);
        writer.WriteField("Transfer-Encoding"u8, "gzip"u8);
        writer.WriteField("Content-Length"u8, "999"u8);
        writer.WriteField("X-Kept", "yes");
        if (writer.EndHead(framing, length))
        {
            foreach (var piece in pieces)
            {
                var memory = writer.GetBodyMemory();
                Assert.True(memory.Length >= piece.Length, "the body memory is smaller than a piece of this test");
                piece.CopyTo(memory);
                writer.AdvanceBody(piece.Length);
                await writer.FlushAsync();
            }
            writer.CompleteBody();
        }
        await writer.FlushAsync();
        await pipe.Writer.CompleteAsync();
        using var stream = new MemoryStream();
        await pipe.Reader.CopyToAsync(stream);
        return stream.ToArray();
    }

    // De-chunks with the same decoder the proxy reads chunked bodies with, split-independent by its own tests.
    private static byte[] Dechunk(byte[] wire, string what)
    {
        var decoder = default(ChunkedDecoder);
        decoder.Reset(0, 0);
        var output = new byte[wire.Length];
        var status = decoder.Decode(wire, output, out var consumed, out var written);
        Assert.True(status == ChunkedStatus.Done && consumed == wire.Length,
            $"{what}: the chunked body is not valid chunked coding ({status}) or has bytes after its end: '{Wire.Show(wire)}'");
        return output[..written];
    }
}
