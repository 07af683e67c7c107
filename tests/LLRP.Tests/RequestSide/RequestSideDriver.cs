using System.Buffers;
using System.Text;
using LLRP.Errors;
using LLRP.Http1;
using LLRP.Tests.Infrastructure;

namespace LLRP.Tests.RequestSide;

/// <summary>What the request side made of one raw request: a rejection, or the head and body it would forward.</summary>
public sealed record RequestOutcome(int? RejectStatus, bool BodyRejected, string? Method, string? Target, string? Authority,
    string? Via, IReadOnlyList<KeyValuePair<string, string>> Fields, byte[] Body)
{
    public static RequestOutcome Rejected(int status, bool inBody) => new(status, inBody, null, null, null, null, [], []);

    public override string ToString() => RejectStatus is { } status
        ? $"rejected {status}{(BodyRejected ? " in the body" : "")}"
        : $"forwarded {Method} {Target} Host '{Authority}' {Fields.Count} fields, {Body.Length} body bytes '{Wire.Show(Body, 100)}'";
}

/// <summary>
/// Drives the proxy's request side without sockets: the head through Kestrel's parser adapter and <see cref="RequestHead"/>,
/// the body through <see cref="RequestBodyReader"/>, both reading a <see cref="SplitPipe"/>.
/// </summary>
public static class RequestSideDriver
{
    internal static readonly RequestLimits Options = new();

    /// <summary>The status a request-side exception answers with: the one place that knows the error model's types.</summary>
    public static int StatusOf(Exception e) =>
        ProxyErrors.IsRejection(e) && ProxyErrors.StatusCode(ProxyErrors.RejectionOf(e)) is > 0 and var status
            ? status
            : throw new Xunit.Sdk.XunitException($"the request side threw an exception that is not a rejection: {e}");

    /// <summary>
    /// The request side's verdict on <paramref name="pieces"/>. With <paramref name="inPlace"/>, a body the reader can
    /// hand out where the input holds it (<see cref="RequestBodyReader.CanReadInPlace"/>) is read that way, as LLHttp's
    /// forwarder streams a large one: in pieces of at most 7 bytes, of which each time one fewer is used than given
    /// (all of a 1-byte piece), so that what <see cref="RequestBodyReader.Consume"/> leaves is read again.
    /// </summary>
    public static async Task<RequestOutcome> RunAsync(IEnumerable<byte[]> pieces, bool inPlace = false)
    {
        var input = new SplitPipe(pieces);
        var head = new RequestHead(Options);
        head.Reset();
        try
        {
            if (!await ReadHeadAsync(input, head))
            {
                throw new Xunit.Sdk.XunitException("the input ended before the request head did");
            }
        }
        catch (Exception e) when (e is not Xunit.Sdk.XunitException)
        {
            return RequestOutcome.Rejected(StatusOf(e), inBody: false);
        }

        var body = new RequestBodyReader(input, Options, continueTo: null);
        body.Start(head);
        var bytes = new List<byte>();
        var destination = new byte[7]; // small and odd, so de-framed data is also handed out in pieces
        try
        {
            if (inPlace && body.CanReadInPlace)
            {
                ReadOnlyMemory<byte> piece;
                while (!(piece = await body.ReadInPlaceAsync(destination.Length, CancellationToken.None)).IsEmpty)
                {
                    var used = Math.Max(1, piece.Length - 1);
                    bytes.AddRange(piece.Span[..used]);
                    body.Consume(used);
                }
            }
            else
            {
                int n;
                while ((n = await body.ReadAsync(destination, CancellationToken.None)) > 0)
                {
                    bytes.AddRange(destination.AsSpan(0, n));
                }
            }
        }
        catch (Exception e) when (e is not Xunit.Sdk.XunitException)
        {
            return RequestOutcome.Rejected(StatusOf(e), inBody: true);
        }

        var fields = new List<KeyValuePair<string, string>>();
        for (var i = 0; i < head.HeaderCount; i++)
        {
            if (head.Header(i).Kind == HeaderKind.Other)
            {
                fields.Add(new(Wire.Text(head.Name(i).ToArray()), Wire.Text(head.Value(i).ToArray())));
            }
        }
        return new RequestOutcome(null, false, Wire.Text(head.MethodBytes.ToArray()), Wire.Text(head.Target.ToArray()),
            Wire.Text(head.Authority.ToArray()), Wire.Text(head.ViaValue.ToArray()), fields, [.. bytes]);
    }

    /// <summary>The parsed head of a valid request, for tests that need one (the response side reads it).</summary>
    internal static async Task<RequestHead> HeadOf(string raw)
    {
        var head = new RequestHead(Options);
        head.Reset();
        Assert.True(await ReadHeadAsync(new SplitPipe([Wire.Bytes(raw)]), head), $"incomplete head '{Wire.Show(raw)}'");
        return head;
    }

    /// <summary>The head step of the connection loop without its timers: <see cref="RequestHead.Parse"/> over every read.</summary>
    private static async Task<bool> ReadHeadAsync(SplitPipe input, RequestHead head)
    {
        while (true)
        {
            var result = await input.ReadAsync();
            var reader = new SequenceReader<byte>(result.Buffer);
            if (head.Parse(ref reader))
            {
                input.AdvanceTo(reader.Position);
                return true;
            }
            if (result.IsCompleted)
            {
                return false;
            }
            input.AdvanceTo(reader.Position, result.Buffer.End);
        }
    }

    /// <summary>
    /// The splits of one input: whole, then cut in two at every byte boundary, then one byte at a time. Inputs longer
    /// than <paramref name="maxEverySplit"/> bytes are cut at 64 evenly spread boundaries plus the 16 first and last
    /// ones instead (a 70 KB case would otherwise cost 70,000 runs for the same few state transitions).
    /// </summary>
    public static IEnumerable<byte[][]> Splits(byte[] bytes, int maxEverySplit = 2048)
    {
        yield return [bytes];
        IEnumerable<int> cuts = bytes.Length <= maxEverySplit
            ? Enumerable.Range(1, Math.Max(0, bytes.Length - 1))
            : Enumerable.Range(1, 16).Concat(Enumerable.Range(1, 64).Select(i => (int)((long)bytes.Length * i / 65)))
                .Concat(Enumerable.Range(bytes.Length - 16, 16)).Where(i => i > 0 && i < bytes.Length).Distinct();
        foreach (var i in cuts)
        {
            yield return [bytes[..i], bytes[i..]];
        }
        if (bytes.Length <= maxEverySplit)
        {
            yield return bytes.Select(b => new[] { b }).ToArray();
        }
    }

    public static string Latin1(byte[] bytes) => Encoding.Latin1.GetString(bytes);
}
