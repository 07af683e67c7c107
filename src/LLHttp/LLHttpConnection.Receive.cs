using System.Net.Sockets;

namespace LLHttp;

// The two receive loops that may wait on the socket, written as explicit state machines over per-connection fields
// (as LLHTTP did) instead of async methods, so a wait allocates nothing whichever thread resumes it.
public sealed partial class LLHttpConnection
{
    private readonly ReusableValueTaskSource<ResponseHead> _headSource = new();
    private readonly ReusableValueTaskSource<int> _bodySource = new();
    private readonly Action _continueHead;
    private readonly Action _continueBody;
    private ConfiguredValueTaskAwaitable<int>.ConfiguredValueTaskAwaiter _receiveAwaiter;
    private CancellationToken _operationToken;
    private Memory<byte> _bodyDestination;
    private bool _receiveDirect;
    private bool _headRetried;

    private ValueTask<ResponseHead> ReadResponseHeadSlow(CancellationToken cancellationToken)
    {
        _operationToken = cancellationToken;
        _headRetried = false;
        short version = _headSource.Reset();
        ContinueHead(resumed: false);
        return new ValueTask<ResponseHead>(_headSource, version);
    }

    private void ContinueHead(bool resumed)
    {
        CancellationToken cancellationToken = _operationToken;
        try
        {
            while (true)
            {
                ValueTask<int> receive = default;
                if (!resumed)
                {
                    if (_recvEnd == _recv.Length)
                    {
                        GrowReceiveBuffer();
                    }

                    receive = ReceiveAsync(_recv.AsMemory(_recvEnd), _options.ResponseHeadTimeout, cancellationToken);
                    if (!receive.IsCompleted)
                    {
                        _receiveAwaiter = receive.ConfigureAwait(false).GetAwaiter();
                        _receiveAwaiter.UnsafeOnCompleted(_continueHead);
                        return;
                    }
                }

                int received;
                try
                {
                    received = resumed ? _receiveAwaiter.GetResult() : receive.GetAwaiter().GetResult();
                }
                catch (SocketException e) when (e.SocketErrorCode is SocketError.ConnectionReset && CanRetryStale(_headRetried))
                {
                    received = 0;
                }
                finally
                {
                    resumed = false;
                    _receiveAwaiter = default;
                }

                if (received == 0)
                {
                    if (CanRetryStale(_headRetried))
                    {
                        _headRetried = true;
                        _ = RetryHeadAsync();
                        return;
                    }

                    ThrowHelper.Throw(
                        _recvEnd == 0 && _informationalCount == 0 ? LLHttpError.ConnectionClosedBeforeResponse : LLHttpError.ResponseHeadIncomplete,
                        "The connection closed before a complete response head.");
                }

                _recvEnd += received;
                if (_parser.TryParse(_recv, _recvEnd))
                {
                    ResponseHead head = CompleteHead();
                    _gate.Exit();
                    _headSource.SetResult(head);
                    return;
                }
            }
        }
        catch (Exception e)
        {
            _gate.Exit();
            _headSource.SetException(Fail(e, LLHttpError.ReceiveFailed, LLHttpError.ResponseHeadTimeout, cancellationToken));
        }
    }

    // Rare path (a stale connection), so an ordinary allocating async method is fine here.
    private async Task RetryHeadAsync()
    {
        try
        {
            await ReconnectAndResendAsync(_operationToken).ConfigureAwait(false);
        }
        catch (Exception e)
        {
            _gate.Exit();
            _headSource.SetException(Fail(e, LLHttpError.ReceiveFailed, LLHttpError.ResponseHeadTimeout, _operationToken));
            return;
        }

        ContinueHead(resumed: false);
    }

    private ValueTask<int> ReadBodySlow(Memory<byte> destination, CancellationToken cancellationToken)
    {
        _operationToken = cancellationToken;
        _bodyDestination = destination;
        short version = _bodySource.Reset();
        ContinueBody(resumed: false);
        return new ValueTask<int>(_bodySource, version);
    }

    private void ContinueBody(bool resumed)
    {
        CancellationToken cancellationToken = _operationToken;
        try
        {
            while (true)
            {
                int received;
                if (resumed)
                {
                    resumed = false;
                    try
                    {
                        received = _receiveAwaiter.GetResult();
                    }
                    finally
                    {
                        _receiveAwaiter = default;
                    }
                }
                else
                {
                    ValueTask<int> receive = StartBodyReceive(cancellationToken);
                    if (!receive.IsCompleted)
                    {
                        _receiveAwaiter = receive.ConfigureAwait(false).GetAwaiter();
                        _receiveAwaiter.UnsafeOnCompleted(_continueBody);
                        return;
                    }

                    received = receive.GetAwaiter().GetResult();
                }

                if (OnBodyReceived(received, out int result))
                {
                    _bodyDestination = default;
                    _gate.Exit();
                    _bodySource.SetResult(result);
                    return;
                }
            }
        }
        catch (Exception e)
        {
            _bodyDestination = default;
            _gate.Exit();
            _bodySource.SetException(Fail(e, LLHttpError.ReceiveFailed, LLHttpError.BodyIdleTimeout, cancellationToken));
        }
    }

    private ValueTask<int> StartBodyReceive(CancellationToken cancellationToken)
    {
        Memory<byte> destination = _bodyDestination;
        TimeSpan timeout = _options.BodyIdleTimeout;
        switch (_responseFraming)
        {
            case ResponseBodyFraming.ContentLength:
                // Straight into the caller's buffer, capped so bytes past this body never land there.
                _receiveDirect = true;
                return ReceiveAsync(destination[..(int)Math.Min(destination.Length, _responseRemaining)], timeout, cancellationToken);

            case ResponseBodyFraming.CloseDelimited:
                _receiveDirect = true;
                return ReceiveAsync(destination, timeout, cancellationToken);
        }

        long direct = _chunked.DataRemaining;
        if (direct != 0 && _recvStart == _recvEnd)
        {
            // Inside chunk data with nothing buffered: straight into the caller's buffer as well.
            _receiveDirect = true;
            return ReceiveAsync(destination[..(int)Math.Min(destination.Length, direct)], timeout, cancellationToken);
        }

        // Chunk framing goes through our buffer and the decoder.
        _receiveDirect = false;
        if (_recvStart == _recvEnd)
        {
            _recvStart = _recvEnd = 0;
        }
        else if (_recvEnd == _recv.Length)
        {
            _recv.AsSpan(_recvStart, _recvEnd - _recvStart).CopyTo(_recv);
            _recvEnd -= _recvStart;
            _recvStart = 0;
        }

        return ReceiveAsync(_recv.AsMemory(_recvEnd), timeout, cancellationToken);
    }

    /// <summary>Returns true when <paramref name="result"/> is the answer to the caller's read.</summary>
    private bool OnBodyReceived(int received, out int result)
    {
        result = received;
        switch (_responseFraming)
        {
            case ResponseBodyFraming.ContentLength:
                if (received == 0)
                {
                    ThrowHelper.Throw(LLHttpError.ResponseBodyTruncated, "The connection closed before the end of the Content-Length body.");
                }

                _responseRemaining -= received;
                if (_responseRemaining == 0)
                {
                    ResponseBodyComplete();
                }

                return true;

            case ResponseBodyFraming.CloseDelimited:
                if (received == 0)
                {
                    ResponseBodyComplete();
                }

                return true;
        }

        if (received == 0)
        {
            ThrowTruncatedChunked();
        }

        if (_receiveDirect)
        {
            _chunked.ConsumeData(received);
            return true;
        }

        _recvEnd += received;
        bool done = DecodeChunked(_recv.AsSpan(_recvStart, _recvEnd - _recvStart), _bodyDestination.Span, out int consumed, out int written);
        ConsumeReceived(consumed);
        if (done)
        {
            ResponseBodyComplete();
        }

        result = written;
        return written != 0 || done;
    }

    /// <summary>Runs the shared chunked decoder; a syntax error is <see cref="LLHttpError.InvalidChunkedEncoding"/>.</summary>
    private bool DecodeChunked(ReadOnlySpan<byte> input, Span<byte> output, out int consumed, out int written)
    {
        var status = _chunked.Decode(input, output, out consumed, out written);
        if (status > ChunkedStatus.Done)
        {
            ThrowHelper.Throw(LLHttpError.InvalidChunkedEncoding, ChunkedDecoder.Describe(status));
        }

        return status == ChunkedStatus.Done;
    }
}
