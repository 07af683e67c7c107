using System.Buffers;
using System.IO.Pipelines;
using LLRP.Errors;
using LLRP.Http1;
using KestrelBadRequest = Microsoft.AspNetCore.Http.BadHttpRequestException;

namespace LLRP.Fuzz.Support;

/// <summary>What the proxy made of a request head: rejected, incomplete, or accepted with what it would forward.</summary>
public sealed record HeadOutcome(string Verdict, string Method, string Target, string Authority, string Version, string Framing,
    long ContentLength, bool ExpectContinue, bool ClientWantsClose, IReadOnlyList<(string Kind, string Name, string Value)> Fields,
    long Consumed)
{
    public static HeadOutcome Rejected { get; } = new("rejected", "", "", "", "", "", 0, false, false, [], 0);
    public static HeadOutcome Incomplete { get; } = new("incomplete", "", "", "", "", "", 0, false, false, [], 0);

    public bool Accepted => Verdict == "accepted";

    public override string ToString() => Accepted
        ? $"accepted {Method} {Target} Host '{Authority}' {Version} {Framing} {ContentLength} after {Consumed} bytes; " +
          string.Join(" | ", Fields.Select(f => $"{f.Kind} {f.Name}: {f.Value}"))
        : Verdict;
}

/// <summary>
/// The one place the fuzz targets touch the proxy's request side (RequestHead, RequestBodyReader and their exception
/// types), driven as ProxyConnection drives them: the head parsed from whatever has arrived, the unread rest kept for
/// the next call; the body read from a pipe the pieces arrive in.
/// </summary>
internal static class RequestSide
{
    public static readonly RequestLimits Options = new();

    /// <summary>The rejections the proxy answers itself (a 4xx or 5xx to the client): expected, never a finding.</summary>
    public static bool IsRejection(Exception e) => e is ProxyException or KestrelBadRequest;

    public static RequestHead NewHead()
    {
        var head = new RequestHead(Options);
        head.Reset();
        return head;
    }

    /// <summary>Parses the head from <paramref name="pieces"/> arriving one after another; <paramref name="head"/> is reset first.</summary>
    public static HeadOutcome ParseHead(RequestHead head, IReadOnlyList<byte[]> pieces)
    {
        head.Reset();
        var arrived = new List<byte[]>();
        long consumedBefore = 0;
        try
        {
            foreach (var piece in pieces)
            {
                arrived.Add(piece);
                var buffer = Pieces.Sequence(arrived).Slice(consumedBefore);
                var reader = new SequenceReader<byte>(buffer);
                var complete = head.Parse(ref reader);
                consumedBefore += reader.Consumed;
                if (complete)
                {
                    return Snapshot(head, consumedBefore);
                }
            }
            return HeadOutcome.Incomplete;
        }
        catch (Exception e) when (IsRejection(e))
        {
            return HeadOutcome.Rejected;
        }
    }

    private static HeadOutcome Snapshot(RequestHead head, long consumed)
    {
        var fields = new List<(string, string, string)>();
        for (var i = 0; i < head.HeaderCount; i++)
        {
            fields.Add((head.Header(i).Kind.ToString(), Latin1(head.Name(i)), Latin1(head.Value(i))));
        }
        return new HeadOutcome("accepted", Latin1(head.MethodBytes), Latin1(head.Target), Latin1(head.Authority), head.Protocol.ToString(),
            head.Framing.ToString(), head.ContentLength, head.ExpectContinue, head.ClientWantsClose, fields, consumed);
    }

    /// <summary>
    /// Reads the body of the accepted <paramref name="head"/> from <paramref name="pieces"/> (the bytes after the head),
    /// handed out into a destination of <paramref name="destinationLength"/> bytes. Returns the de-framed body, or null
    /// when the proxy rejected it; <paramref name="leftover"/> is how many input bytes the body left unread (the next
    /// request's, on a persistent connection).
    /// </summary>
    public static byte[]? ReadBody(RequestHead head, IReadOnlyList<byte[]> pieces, int destinationLength, out long leftover)
    {
        var pipe = new Pipe(new PipeOptions(readerScheduler: PipeScheduler.Inline, writerScheduler: PipeScheduler.Inline,
            pauseWriterThreshold: 0, useSynchronizationContext: false));
        var queue = new Queue<byte[]>(pieces);
        var reader = new RequestBodyReader(pipe.Reader, Options, continueTo: null);
        reader.Start(head);
        var body = new MemoryStream();
        var destination = new byte[destinationLength];
        leftover = 0;
        var writerDone = false;
        try
        {
            while (true)
            {
                var read = reader.ReadAsync(destination, CancellationToken.None);
                // Each piece arrives only when the reader waits for more, as from a slow client.
                while (!read.IsCompleted && !writerDone)
                {
                    if (queue.TryDequeue(out var piece))
                    {
                        pipe.Writer.Write(piece);
                        Sync.Result(pipe.Writer.FlushAsync(), "Flushing the test pipe");
                    }
                    else
                    {
                        pipe.Writer.Complete();
                        writerDone = true;
                    }
                }
                var n = Sync.Result(read, "RequestBodyReader.ReadAsync");
                if (n == 0)
                {
                    break;
                }
                Finding.Check(n <= destinationLength, $"RequestBodyReader.ReadAsync returned {n} for a {destinationLength}-byte destination.");
                body.Write(destination, 0, n);
            }
        }
        catch (Exception e) when (IsRejection(e))
        {
            return null;
        }
        Finding.Check(reader.IsComplete, "The body reader returned 0 before the body was complete.");
        // What the body left: bytes still in the pipe plus pieces that never had to arrive.
        if (pipe.Reader.TryRead(out var rest))
        {
            leftover = rest.Buffer.Length;
            pipe.Reader.AdvanceTo(rest.Buffer.End);
        }
        leftover += queue.Sum(p => (long)p.Length);
        return body.ToArray();
    }

    public static string Latin1(ReadOnlySpan<byte> bytes) => System.Text.Encoding.Latin1.GetString(bytes);
}
