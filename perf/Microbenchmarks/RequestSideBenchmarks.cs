using System.Buffers;
using System.IO.Pipelines;
using BenchmarkDotNet.Attributes;
using LLRP;
using LLRP.Http1;

namespace Microbenchmarks;

/// <summary>
/// The proxy's request side without sockets: parsing and validating a client's request head (<see cref="RequestHead"/>,
/// Kestrel's line splitter underneath), de-framing a request body (<see cref="RequestBodyReader"/> over a pipe) and
/// writing the response to the client (<see cref="ResponseWriter"/> into a pipe, drained after each response).
/// </summary>
[MemoryDiagnoser]
public class RequestSideBenchmarks
{
    private static readonly RequestLimits s_options = new();

    private readonly RequestHead _head = new(s_options);
    private ReadOnlySequence<byte> _headBytes;

    [Params("curl", "browser", "api-client")]
    public string Client { get; set; } = "curl";

    [GlobalSetup]
    public void Setup() => _headBytes = new(RequestSideCorpus.Head(Client));

    /// <summary>One whole head in one segment: request line, every field validated and copied, framing decided.</summary>
    [Benchmark]
    public int ParseRequestHead()
    {
        var reader = new SequenceReader<byte>(_headBytes);
        if (!_head.Parse(ref reader))
        {
            throw new InvalidOperationException("the head did not complete");
        }
        var fields = _head.HeaderCount;
        _head.Reset();
        return fields;
    }
}

/// <summary>A 1 KiB JSON request body, framed by Content-Length or as two chunks, read to its end.</summary>
[MemoryDiagnoser]
public class RequestBodyBenchmarks
{
    private static readonly RequestLimits s_options = new();

    private readonly Pipe _pipe = new(new PipeOptions(readerScheduler: PipeScheduler.Inline, writerScheduler: PipeScheduler.Inline,
        pauseWriterThreshold: 0, useSynchronizationContext: false));
    private readonly RequestHead _head = new(s_options);
    private readonly byte[] _destination = new byte[16 * 1024];
    private RequestBodyReader _body = null!;
    private byte[] _wire = [];

    [Params("content-length", "chunked")]
    public string Framing { get; set; } = "content-length";

    [GlobalSetup]
    public void Setup()
    {
        _body = new RequestBodyReader(_pipe.Reader, s_options, continueTo: null);
        var chunked = Framing == "chunked";
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(RequestSideCorpus.PostHead(chunked)));
        // The head stays parsed for the whole run: the body reader takes only its framing and length.
        if (!_head.Parse(ref reader))
        {
            throw new InvalidOperationException("the head did not complete");
        }
        _wire = chunked ? RequestSideCorpus.ChunkedBody : RequestSideCorpus.JsonBody;
    }

    [Benchmark]
    public int DeframeRequestBody()
    {
        _pipe.Writer.Write(_wire);
        var flush = _pipe.Writer.FlushAsync();
        if (!flush.IsCompletedSuccessfully)
        {
            throw new InvalidOperationException("an unbounded pipe's flush completes at once");
        }
        _body.Start(_head);
        var total = 0;
        while (true)
        {
            var read = _body.ReadAsync(_destination, CancellationToken.None);
            // The bytes are in the pipe, so every read completes synchronously (no pooled box is rented).
            var n = read.IsCompletedSuccessfully ? read.Result : read.AsTask().GetAwaiter().GetResult();
            if (n == 0)
            {
                return total;
            }
            total += n;
        }
    }
}

/// <summary>A proxied response head (six downstream fields, Via added) and a 10-byte body written to the client's pipe.</summary>
[MemoryDiagnoser]
public class ResponseWriterBenchmarks
{
    private static readonly RequestLimits s_options = new();

    private readonly Pipe _pipe = new(new PipeOptions(readerScheduler: PipeScheduler.Inline, writerScheduler: PipeScheduler.Inline,
        pauseWriterThreshold: 0, useSynchronizationContext: false));
    private readonly RequestHead _request = new(s_options);
    private ResponseWriter _writer = null!;

    [Params("content-length", "chunked")]
    public string Framing { get; set; } = "content-length";

    [GlobalSetup]
    public void Setup()
    {
        _writer = new ResponseWriter(_pipe.Writer);
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(RequestSideCorpus.Head("curl")));
        if (!_request.Parse(ref reader))
        {
            throw new InvalidOperationException("the head did not complete");
        }
    }

    [Benchmark]
    public long WriteResponse()
    {
        _writer.Start(_request);
        _writer.BeginHead(200);
        foreach (var (name, value) in RequestSideCorpus.ResponseFields)
        {
            _writer.WriteField(name, value);
        }
        var chunked = Framing == "chunked";
        _writer.EndHead(chunked ? DownstreamBody.UntilEnd : DownstreamBody.ContentLength, RequestSideCorpus.ResponseBody.Length);
        var memory = _writer.GetBodyMemory();
        RequestSideCorpus.ResponseBody.CopyTo(memory);
        _writer.AdvanceBody(RequestSideCorpus.ResponseBody.Length);
        _writer.CompleteBody();
        var flush = _writer.FlushAsync();
        if (!flush.IsCompletedSuccessfully)
        {
            throw new InvalidOperationException("an unbounded pipe's flush completes at once");
        }
        // The transport's part: take the bytes out so the pipe's segments go back to its pool.
        if (!_pipe.Reader.TryRead(out var result))
        {
            throw new InvalidOperationException("the response was not written");
        }
        var length = result.Buffer.Length;
        _pipe.Reader.AdvanceTo(result.Buffer.End);
        return length;
    }
}
