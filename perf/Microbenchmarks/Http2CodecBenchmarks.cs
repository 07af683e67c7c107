using System.Buffers;
using System.Text;
using BenchmarkDotNet.Attributes;
using LLHttp2.Frames;
using LLHttp2.Hpack;

namespace Microbenchmarks;

/// <summary>
/// LLHttp2 (src/LLHttp2): frames read from a multi-segment sequence, and a browser-like request's field block
/// decoded and a proxied response's encoded, with the dynamic table warm as on the second request of a connection.
/// </summary>
[MemoryDiagnoser]
public class Http2CodecBenchmarks
{
    // A browser's request (the fields of Corpus.RequestHeaders' kind) and a proxied response.
    private static readonly (string Name, string Value)[] Request =
    [
        (":method", "GET"), (":scheme", "https"), (":authority", "www.example.com"), (":path", "/assets/app.js?v=20261123"),
        ("user-agent", "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0"),
        ("accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
        ("accept-language", "en-US,en;q=0.5"), ("accept-encoding", "gzip, deflate, br"),
        ("cookie", "session=8f14e45fceea167a5a36dedd4bea2543; theme=dark"), ("sec-fetch-dest", "script"),
        ("sec-fetch-mode", "no-cors"), ("sec-fetch-site", "same-origin"),
    ];

    private static readonly (byte[] Name, byte[] Value)[] Response =
    [
        .. new[]
        {
            (":status", "200"), ("content-type", "application/javascript"), ("date", "Mon, 23 Nov 2026 10:00:00 GMT"),
            ("server", "origin"), ("cache-control", "max-age=3600"), ("x-request-id", "4bf92f3577b34da6a3ce929d0e0e4736"),
            ("content-length", "10"), ("via", "2 llrp"),
        }.Select(f => (Encoding.ASCII.GetBytes(f.Item1), Encoding.ASCII.GetBytes(f.Item2))),
    ];

    private readonly HpackDecoder _decoder = new();
    private readonly HpackEncoder _encoder = new();
    private readonly Http2FrameReader _reader = new();
    private readonly byte[] _output = new byte[4096];
    private byte[] _requestBlock = [];
    private byte[] _firstRequestBlock = [];
    private ReadOnlySequence<byte> _frames;

    [GlobalSetup]
    public void Setup()
    {
        // The block a client's encoder sends for the second identical request: most fields indexed.
        var clientEncoder = new HpackEncoder();
        var writer = new ArrayBufferWriter<byte>();
        for (int i = 0; i < 2; i++)
        {
            writer.Clear();
            clientEncoder.BeginBlock(writer);
            foreach (var (name, value) in Request)
            {
                clientEncoder.Encode(Encoding.ASCII.GetBytes(name), Encoding.ASCII.GetBytes(value), writer);
            }

            if (i == 0)
            {
                var handler = new Sink();
                _decoder.Decode(writer.WrittenSpan, ref handler);

                // The first request's block behind two size updates (0, then 4096) that empty the table: every
                // decoding of it inserts every field again, as a new connection's first request does.
                _firstRequestBlock = [0x20, 0x3f, 0xe1, 0x1f, .. writer.WrittenSpan];
            }
        }

        _requestBlock = writer.WrittenSpan.ToArray();
        var first = new ArrayBufferWriter<byte>();
        Http2FrameWriter.WriteHeaders(first, 1, _requestBlock, endStream: false, 16384);
        Http2FrameWriter.WriteData(first, 1, new byte[1024], endStream: true);
        Http2FrameWriter.WriteWindowUpdate(first, 0, 1024);
        Http2FrameWriter.WriteSettingsAck(first);
        var bytes = first.WrittenSpan.ToArray();
        _frames = Segments(bytes[..20], bytes[20..700], bytes[700..]);
        foreach (var (name, value) in Response)
        {
            _encoder.TryEncode(name, value, _output, out _);
        }
    }

    /// <summary>Four frames (HEADERS, 1 KiB DATA, WINDOW_UPDATE, SETTINGS ACK) over three segments.</summary>
    [Benchmark]
    public int ReadFrames()
    {
        var buffer = _frames;
        int length = 0;
        while (_reader.TryReadFrame(ref buffer, out var frame))
        {
            length += frame.Header.Length;
        }

        return length;
    }

    /// <summary>The request's 12 fields as the second identical request sends them: every one indexed in the warm table.</summary>
    [Benchmark]
    public int DecodeRequestBlockIndexed()
    {
        var handler = new Sink();
        _decoder.Decode(_requestBlock, ref handler);
        return handler.Bytes;
    }

    /// <summary>The request's 12 fields as a first request sends them: literals (Huffman), each inserted in the table.</summary>
    [Benchmark]
    public int DecodeRequestBlockLiterals()
    {
        var handler = new Sink();
        _decoder.Decode(_firstRequestBlock, ref handler);
        return handler.Bytes;
    }

    /// <summary>The response's 8 fields, every one an exact match in the warm table.</summary>
    [Benchmark]
    public int EncodeResponseBlockIndexed() => EncodeResponse();

    /// <summary>The response's 8 fields after the table was emptied: static names, Huffman-coded literals, each inserted.</summary>
    [Benchmark]
    public int EncodeResponseBlockLiterals()
    {
        _encoder.SetPeerHeaderTableSize(0);
        _encoder.SetPeerHeaderTableSize(4096);
        return EncodeResponse();
    }

    private int EncodeResponse()
    {
        int written = _encoder.BeginBlock(_output);
        foreach (var (name, value) in Response)
        {
            _encoder.TryEncode(name, value, _output.AsSpan(written), out int n);
            written += n;
        }

        return written;
    }

    private struct Sink : IHpackFieldHandler
    {
        public int Bytes;

        public void OnField(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed) => Bytes += name.Length + value.Length;
    }

    private static ReadOnlySequence<byte> Segments(params byte[][] pieces)
    {
        var first = new Segment(pieces[0], 0);
        var last = first;
        foreach (var piece in pieces[1..])
        {
            last = last.Append(piece);
        }

        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }

    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        public Segment(ReadOnlyMemory<byte> memory, long runningIndex)
        {
            Memory = memory;
            RunningIndex = runningIndex;
        }

        public Segment Append(ReadOnlyMemory<byte> memory)
        {
            var next = new Segment(memory, RunningIndex + Memory.Length);
            Next = next;
            return next;
        }
    }
}
