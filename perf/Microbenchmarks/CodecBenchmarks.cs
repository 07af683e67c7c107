using BenchmarkDotNet.Attributes;
using LLHttp;
using LLHttp.Syntax;

namespace Microbenchmarks;

/// <summary>The three pure byte-level stages, without I/O.</summary>
[MemoryDiagnoser]
public class CodecBenchmarks
{
    private readonly SendBuffer _sendBuffer = new(4096, 64 * 1024, System.Buffers.ArrayPool<byte>.Shared);
    private readonly ResponseHeadParser _parser = new(64 * 1024, 100);
    private readonly byte[] _chunkedOutput = new byte[16 * 1024];
    private ChunkedDecoder _decoder;

    [Benchmark]
    public int WriteRequestHead()
    {
        SendBuffer buffer = _sendBuffer;
        buffer.Clear();
        RequestHeadWriter.WriteRequestLine(buffer, Corpus.Method, Corpus.Target, Corpus.Authority);
        foreach (var (name, value) in Corpus.RequestHeaders)
        {
            RequestHeadWriter.WriteHeader(buffer, name, value);
        }

        RequestHeadWriter.WriteEndOfHead(buffer);
        return buffer.Length;
    }

    /// <summary>The same head through the write path for fields the caller validated on receipt (what the proxy forwards).</summary>
    [Benchmark]
    public int WriteRequestHeadValidated()
    {
        SendBuffer buffer = _sendBuffer;
        buffer.Clear();
        RequestHeadWriter.WriteRequestLine(buffer, Corpus.Method, Corpus.Target, Corpus.Authority);
        foreach (var (name, value) in Corpus.RequestHeaders)
        {
            RequestHeadWriter.WriteValidatedHeader(buffer, name, value);
        }

        RequestHeadWriter.WriteEndOfHead(buffer);
        return buffer.Length;
    }

    [Benchmark]
    public int ParseResponseHead()
    {
        _parser.Reset();
        _parser.TryParse(Corpus.ContentLengthResponse, Corpus.ContentLengthResponse.Length);
        return _parser.HeadLength + _parser.Count;
    }

    [Benchmark]
    public int DecodeChunkedBody()
    {
        _decoder.Reset(16 * 1024, 64 * 1024);
        _decoder.Decode(Corpus.ChunkedBody, _chunkedOutput, out _, out int written);
        return written;
    }
}
