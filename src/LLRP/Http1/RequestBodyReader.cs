using System.Buffers;
using System.Diagnostics;
using System.IO.Pipelines;
using System.Runtime.CompilerServices;
using LLHttp.Syntax;
using LLRP.Errors;

namespace LLRP.Http1;

/// <summary>
/// Reads the client's request body from the connection's input and hands out the de-framed bytes; the variant
/// re-frames them for the downstream, so client framing is never copied through (RFC 9112 §6, §7.1).
/// One instance per connection, restarted for each request.
/// </summary>
internal sealed class RequestBodyReader
{
    private enum State : byte
    {
        Done,
        ContentLength,
        Chunked,
        /// <summary>A body Kestrel de-framed (an HTTP/2 stream's DATA frames, Kestrel's HTTP/1.1): it ends with the input.</summary>
        UntilEnd,
    }

    private PipeReader _input;
    // The input is a body Kestrel already de-framed (Bind), not the client connection's bytes.
    private bool _deframed;
    private readonly RequestLimits _limits;
    // Where 100 (Continue) is written when the body is first read: the client connection's response (null for a body
    // Kestrel de-framed, which answers it itself). A writer, not a callback, so a connection holds no delegate for it.
    private readonly ResponseWriter? _continueTo;
    private State _state;
    private long _remaining;
    private long _total;
    private ChunkedDecoder _chunked;
    private bool _continuePending;
    private bool _awaitingClient;
    // What ReadInPlaceAsync handed out a slice of, until Consume advances the input past what the caller used.
    private ReadOnlySequence<byte> _held;

    public RequestBodyReader(PipeReader input, RequestLimits limits, ResponseWriter? continueTo)
    {
        _input = input;
        _limits = limits;
        _continueTo = continueTo;
    }

    /// <summary>
    /// The next exchange's body comes from <paramref name="input"/>, a request body Kestrel has de-framed (an HTTP/2
    /// stream's, or its HTTP/1.1 front end's) and checked against its Content-Length (RFC 9113 §8.1.1): a chunked
    /// framing of the head means "until the input ends". Kestrel answers 100 (Continue) itself when the body is read.
    /// </summary>
    public void Bind(PipeReader input)
    {
        _input = input;
        _deframed = true;
    }

    /// <summary>The whole body has been read, so the next request on the connection starts where this one ended.</summary>
    public bool IsComplete => _state == State.Done;

    /// <summary>The client sent Expect: 100-continue and has not been asked for the body yet.</summary>
    public bool AwaitsContinue => _continuePending && _state != State.Done;

    /// <summary>
    /// A read is waiting for bytes the client has not sent yet (it stays set when that read is cancelled), so a
    /// timeout that ends the exchange now is the client's (408), not the downstream's (504).
    /// </summary>
    public bool IsAwaitingClient => _awaitingClient;

    public void Start(RequestHead head)
    {
        _total = 0;
        _awaitingClient = false;
        // Each chunk-size line is capped by the decoder (MaxChunkLineLength), so the whole body's extensions need no
        // budget of their own; the trailer section gets the header section's (RFC 9112 §7.1.2 fields are header-like).
        _chunked.Reset(maxExtensionBytes: int.MaxValue, maxTrailerBytes: _limits.MaxRequestHeadersTotalSize);
        _continuePending = head.ExpectContinue && !_deframed;
        // A de-framed input carries no chunked coding: its head says UntilEnd (RequestHead.CompleteFields).
        Debug.Assert(!_deframed || head.Framing != BodyFraming.Chunked);
        (_state, _remaining) = head.Framing switch
        {
            BodyFraming.ContentLength when head.ContentLength > 0 => (State.ContentLength, head.ContentLength),
            BodyFraming.Chunked => (State.Chunked, 0L),
            BodyFraming.UntilEnd => (State.UntilEnd, 0L),
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
        await ContinueIfPendingAsync();

        while (true)
        {
            _awaitingClient = true;
            var result = await ReadInputAsync(cancellationToken);
            _awaitingClient = false;
            var buffer = result.Buffer;
            var copied = Decode(ref buffer, destination.Span);
            if (_state == State.UntilEnd && buffer.IsEmpty && result.IsCompleted)
            {
                _state = State.Done;
            }
            _input.AdvanceTo(buffer.Start, _state == State.Done || copied > 0 ? buffer.Start : buffer.End);
            if (copied > 0 || _state == State.Done)
            {
                return copied;
            }
            ThrowIfEnded(result);
        }
    }

    /// <summary>
    /// Whether <see cref="ReadInPlaceAsync"/> serves this body: a Content-Length body and one another layer de-framed
    /// are the input's bytes as they are; a chunked one is decoded, so <see cref="ReadAsync"/> copies it.
    /// </summary>
    public bool CanReadInPlace => _state is State.ContentLength or State.UntilEnd;

    /// <summary>
    /// The body's next bytes where the input holds them, at most <paramref name="maxLength"/>, without the copy
    /// <see cref="ReadAsync"/> makes: a large body is sent on from the client connection's receive buffer. Valid until
    /// <see cref="Consume"/>, which the caller calls, with how many bytes it used, before any other read of the body
    /// or of the connection (also when sending them failed: the input stays readable, for a drain). Empty: the body
    /// has ended. Only while <see cref="CanReadInPlace"/>.
    /// </summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    public async ValueTask<ReadOnlyMemory<byte>> ReadInPlaceAsync(int maxLength, CancellationToken cancellationToken)
    {
        Debug.Assert(_held.IsEmpty, "Consume was not called after the last ReadInPlaceAsync.");
        if (_state == State.Done || maxLength <= 0)
        {
            return default;
        }
        Debug.Assert(CanReadInPlace);
        await ContinueIfPendingAsync();

        while (true)
        {
            _awaitingClient = true;
            var result = await ReadInputAsync(cancellationToken);
            _awaitingClient = false;
            var buffer = result.Buffer;
            if (!buffer.IsEmpty)
            {
                var bytes = buffer.First;
                var length = Math.Min(bytes.Length, maxLength);
                if (_state == State.ContentLength)
                {
                    length = (int)Math.Min(length, _remaining);
                }
                if (_total + length > _limits.MaxRequestBodySize)
                {
                    _input.AdvanceTo(buffer.Start);
                    ProxyThrow.Throw(ProxyError.ContentTooLarge, "Request body larger than maxRequestBodySize.");
                }
                _held = buffer;
                return bytes[..length];
            }
            if (result.IsCompleted && _state == State.UntilEnd)
            {
                _state = State.Done;
                _input.AdvanceTo(buffer.Start);
                return default;
            }
            _input.AdvanceTo(buffer.Start, buffer.End);
            ThrowIfEnded(result);
        }
    }

    /// <summary>
    /// The caller of <see cref="ReadInPlaceAsync"/> used <paramref name="count"/> of the bytes it was given (0 after a
    /// failed send): the input moves past them, and what is left is read again by the next read.
    /// </summary>
    public void Consume(int count)
    {
        var held = _held;
        _held = default;
        if (held.IsEmpty)
        {
            return;
        }
        var rest = held.Slice(count);
        _total += count;
        if (_state == State.ContentLength)
        {
            _remaining -= count;
            if (_remaining == 0)
            {
                _state = State.Done;
            }
        }
        _input.AdvanceTo(rest.Start);
    }

    /// <summary>
    /// RFC 9110 §10.1.1: a client that sent Expect: 100-continue waits for 100 (Continue) before it sends the body; the
    /// proxy says it when it first wants the body. Completes at once when nothing is owed.
    /// </summary>
    private ValueTask<FlushResult> ContinueIfPendingAsync()
    {
        if (!_continuePending)
        {
            return default;
        }
        _continuePending = false;
        return _continueTo is null ? default : _continueTo.WriteContinueAsync();
    }

    private ValueTask<ReadResult> ReadInputAsync(CancellationToken cancellationToken) =>
        _deframed ? ReadDeframedAsync(cancellationToken) : _input.ReadAsync(cancellationToken);

    /// <summary>A read that brought nothing of the body: the client closed before it ended, or the read was cancelled.</summary>
    private static void ThrowIfEnded(in ReadResult result)
    {
        if (result.IsCompleted)
        {
            ProxyThrow.Throw(ProxyError.ClientGone, "The client closed the connection before the request body ended.");
        }
        if (result.IsCanceled)
        {
            throw new OperationCanceledException();
        }
    }

    // Kestrel's body reader fails when the stream was reset or the body broke its rules (more or less DATA than the
    // Content-Length, RFC 9113 §8.1.1; a body over its limit): the client's failure, never the downstream's.
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<ReadResult> ReadDeframedAsync(CancellationToken cancellationToken)
    {
        try
        {
            return await _input.ReadAsync(cancellationToken);
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            throw new ProxyException(e is Microsoft.AspNetCore.Http.BadHttpRequestException ? ProxyError.BadRequest : ProxyError.ClientGone,
                "The client's request body failed.", e);
        }
    }

    /// <summary>Decodes as much as <paramref name="buffer"/> holds; on return <paramref name="buffer"/> starts at the first unconsumed byte.</summary>
    private int Decode(ref ReadOnlySequence<byte> buffer, Span<byte> destination)
    {
        int copied;
        if (_state == State.UntilEnd)
        {
            copied = (int)Math.Min(destination.Length, buffer.Length);
            buffer.Slice(0, copied).CopyTo(destination);
            buffer = buffer.Slice(copied);
        }
        else if (_state == State.ContentLength)
        {
            copied = (int)Math.Min(Math.Min(_remaining, destination.Length), buffer.Length);
            buffer.Slice(0, copied).CopyTo(destination);
            buffer = buffer.Slice(copied);
            _remaining -= copied;
            if (_remaining == 0)
            {
                _state = State.Done;
            }
        }
        else
        {
            copied = 0;
            while (!buffer.IsEmpty && copied < destination.Length)
            {
                var status = _chunked.Decode(buffer.FirstSpan, destination[copied..], out var consumed, out var written);
                buffer = buffer.Slice(consumed);
                copied += written;
                if (status == ChunkedStatus.Done)
                {
                    _state = State.Done;
                    break;
                }
                if (status != ChunkedStatus.InProgress)
                {
                    ProxyThrow.BadRequest(ChunkedDecoder.Describe(status));
                }
            }
        }
        _total += copied;
        if (_total > _limits.MaxRequestBodySize)
        {
            ProxyThrow.Throw(ProxyError.ContentTooLarge, "Request body larger than maxRequestBodySize.");
        }
        return copied;
    }
}
