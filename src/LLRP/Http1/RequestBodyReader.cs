using System.Buffers;
using System.IO.Pipelines;
using System.Runtime.CompilerServices;
using LLRP.Errors;

namespace LLRP.Http1;

/// <summary>
/// Reads the client's request body from the connection's pipe and hands out the de-framed bytes; the variant
/// re-frames them for the downstream, so client framing is never copied through (RFC 9112 §6, §7.1).
/// One instance per connection, restarted for each request.
/// </summary>
internal sealed class RequestBodyReader
{
    // RFC 9112 §7.1.1 asks servers to bound chunk extensions; no peer publishes a figure, so a chunk-size line
    // (size, extensions, CRLF) is capped at 4 KiB: far above any extension in use, far below the 1 MiB read buffer.
    internal const int MaxChunkLineLength = 4096;

    private enum State : byte
    {
        Done,
        ContentLength,
        ChunkSize,
        ChunkData,
        ChunkDataEnd,
        Trailers,
    }

    private readonly PipeReader _input;
    private readonly ProxyOptions _options;
    private readonly Func<ValueTask> _sendContinue;
    private State _state;
    private long _remaining;
    private long _total;
    private int _trailerBytes;
    private bool _continuePending;

    public RequestBodyReader(PipeReader input, ProxyOptions options, Func<ValueTask> sendContinue)
    {
        _input = input;
        _options = options;
        _sendContinue = sendContinue;
    }

    /// <summary>The whole body has been read, so the next request on the connection starts where this one ended.</summary>
    public bool IsComplete => _state == State.Done;

    public void Start(RequestHead head)
    {
        _total = 0;
        _trailerBytes = 0;
        _continuePending = head.ExpectContinue;
        (_state, _remaining) = head.Framing switch
        {
            BodyFraming.ContentLength when head.ContentLength > 0 => (State.ContentLength, head.ContentLength),
            BodyFraming.Chunked => (State.ChunkSize, 0L),
            _ => (State.Done, 0L),
        };
    }

    /// <summary>Copies body bytes into <paramref name="destination"/>; 0 means the body has ended.</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public async ValueTask<int> ReadAsync(Memory<byte> destination, CancellationToken cancellationToken)
    {
        if (_state == State.Done || destination.IsEmpty)
        {
            return 0;
        }
        if (_continuePending)
        {
            // RFC 9110 §10.1.1: the client waits for 100 (Continue) before sending the body; the proxy says it when it wants the body.
            _continuePending = false;
            await _sendContinue();
        }

        while (true)
        {
            var result = await _input.ReadAsync(cancellationToken);
            var buffer = result.Buffer;
            var copied = Decode(ref buffer, destination.Span);
            _input.AdvanceTo(buffer.Start, _state == State.Done || copied > 0 ? buffer.Start : buffer.End);
            if (copied > 0 || _state == State.Done)
            {
                return copied;
            }
            if (result.IsCompleted)
            {
                ProxyThrow.Throw(ProxyError.ClientGone, "The client closed the connection before the request body ended.");
            }
            if (result.IsCanceled)
            {
                throw new OperationCanceledException();
            }
        }
    }

    /// <summary>Decodes as much as <paramref name="buffer"/> holds; on return <paramref name="buffer"/> starts at the first unconsumed byte.</summary>
    private int Decode(ref ReadOnlySequence<byte> buffer, Span<byte> destination)
    {
        var copied = 0;
        while (!buffer.IsEmpty && copied < destination.Length)
        {
            switch (_state)
            {
                case State.ContentLength:
                case State.ChunkData:
                    {
                        var n = (int)Math.Min(Math.Min(_remaining, destination.Length - copied), buffer.Length);
                        buffer.Slice(0, n).CopyTo(destination[copied..]);
                        buffer = buffer.Slice(n);
                        copied += n;
                        _remaining -= n;
                        _total += n;
                        if (_total > _options.MaxRequestBodySize)
                        {
                            ProxyThrow.Throw(ProxyError.ContentTooLarge, "Request body larger than maxRequestBodySize.");
                        }
                        if (_remaining == 0)
                        {
                            _state = _state == State.ContentLength ? State.Done : State.ChunkDataEnd;
                        }
                        break;
                    }
                case State.ChunkDataEnd:
                    // RFC 9112 §7.1: chunk-data is followed by exactly CRLF.
                    if (buffer.Length < 2)
                    {
                        return copied;
                    }
                    if (buffer.FirstSpan.Length >= 2 ? !buffer.FirstSpan.StartsWith("\r\n"u8) : !StartsWithCrLf(buffer))
                    {
                        ProxyThrow.BadRequest("Chunk data not followed by CRLF.");
                    }
                    buffer = buffer.Slice(2);
                    _state = State.ChunkSize;
                    break;
                case State.ChunkSize:
                    if (!TryReadLine(ref buffer, MaxChunkLineLength, out var line))
                    {
                        return copied;
                    }
                    _remaining = ParseChunkSize(line);
                    _state = _remaining == 0 ? State.Trailers : State.ChunkData;
                    break;
                case State.Trailers:
                    // RFC 9110 §6.5: trailers are dropped (the proxy does not promise to forward them), but their syntax still frames the message.
                    if (!TryReadLine(ref buffer, _options.MaxRequestHeadersTotalSize - _trailerBytes, out var trailer))
                    {
                        return copied;
                    }
                    _trailerBytes += trailer.Length + 2;
                    if (trailer.IsEmpty)
                    {
                        _state = State.Done;
                        return copied;
                    }
                    ValidateTrailer(trailer);
                    break;
                default:
                    return copied;
            }
        }
        return copied;
    }

    private static bool StartsWithCrLf(in ReadOnlySequence<byte> buffer)
    {
        Span<byte> two = stackalloc byte[2];
        buffer.Slice(0, 2).CopyTo(two);
        return two[0] == '\r' && two[1] == '\n';
    }

    /// <summary>Takes one CRLF-terminated line (without the CRLF); a bare CR or LF, or a line over the limit, is a 400.</summary>
    private static bool TryReadLine(ref ReadOnlySequence<byte> buffer, int maxLength, out ReadOnlySpan<byte> line)
    {
        var lf = buffer.PositionOf((byte)'\n');
        if (lf is null)
        {
            if (buffer.Length > maxLength)
            {
                ProxyThrow.BadRequest("Chunk line or trailer section too long.");
            }
            line = default;
            return false;
        }
        var withLf = buffer.Slice(0, buffer.GetPosition(1, lf.Value));
        if (withLf.Length - 2 > maxLength)
        {
            ProxyThrow.BadRequest("Chunk line or trailer section too long.");
        }
        var bytes = withLf.IsSingleSegment ? withLf.FirstSpan : withLf.ToArray();
        if (bytes.Length < 2 || bytes[^2] != '\r' || bytes[..^2].IndexOfAny((byte)'\r', (byte)'\n') >= 0)
        {
            ProxyThrow.BadRequest("Chunk line not terminated by CRLF.");
        }
        line = bytes[..^2];
        buffer = buffer.Slice(withLf.End);
        return true;
    }

    // RFC 9112 §7.1: chunk-size = 1*HEXDIG, then optional BWS ";" extensions; overflow is anticipated and rejected.
    private static long ParseChunkSize(ReadOnlySpan<byte> line)
    {
        long size = 0;
        var i = 0;
        for (; i < line.Length; i++)
        {
            var digit = HexValue(line[i]);
            if (digit < 0)
            {
                break;
            }
            if (size > (long.MaxValue >> 4))
            {
                ProxyThrow.BadRequest("Chunk size overflows.");
            }
            size = (size << 4) | (uint)digit;
        }
        if (i == 0)
        {
            ProxyThrow.BadRequest("Invalid chunk size.");
        }
        if (!HttpSyntax.IsValidChunkExtensions(line[i..]))
        {
            ProxyThrow.BadRequest("Invalid chunk extension.");
        }
        return size;
    }

    private static int HexValue(byte b) => b switch
    {
        >= (byte)'0' and <= (byte)'9' => b - '0',
        >= (byte)'a' and <= (byte)'f' => b - 'a' + 10,
        >= (byte)'A' and <= (byte)'F' => b - 'A' + 10,
        _ => -1,
    };

    private static void ValidateTrailer(ReadOnlySpan<byte> line)
    {
        var colon = line.IndexOf((byte)':');
        if (colon <= 0 || !HttpSyntax.IsToken(line[..colon]) || !HttpSyntax.IsValidFieldValue(line[(colon + 1)..]))
        {
            ProxyThrow.BadRequest("Invalid trailer field.");
        }
    }
}
