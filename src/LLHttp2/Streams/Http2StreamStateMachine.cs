using LLHttp2.Frames;

namespace LLHttp2.Streams;

/// <summary>
/// RFC 9113 §5.1: one stream's state, moved by each frame received and sent, with the error RFC 9113 names for a frame
/// a state does not allow. A frame the peer may not send is thrown as <see cref="Http2Exception"/> (connection or
/// stream error as §5.1 says); a frame this endpoint may not send is a bug of the caller, an
/// <see cref="InvalidOperationException"/>.
/// <para>
/// CONTINUATION frames belong to the HEADERS or PUSH_PROMISE before them (the frame reader enforces the sequence), so
/// they move nothing and are always processed. Stream identifiers (§5.1.1: new streams numbered upwards, lower unused
/// ones implicitly closed) and which side may push are the connection's concern.
/// </para>
/// </summary>
public struct Http2StreamStateMachine
{
    public Http2StreamStateMachine(int streamId)
    {
        if (streamId <= 0)
        {
            Http2Throw.Argument(nameof(streamId), "A stream identifier is 1..2^31-1");
        }

        StreamId = streamId;
    }

    public int StreamId { get; }

    public Http2StreamState State { get; private set; }

    public Http2StreamClosure Closure { get; private set; }

    /// <summary>§5.1: the stream is promised by a PUSH_PROMISE this endpoint sent (idle → reserved (local)).</summary>
    public void OnPushPromiseSent()
    {
        RequireSendState(State == Http2StreamState.Idle, "PUSH_PROMISE reserving");
        State = Http2StreamState.ReservedLocal;
    }

    /// <summary>§5.1: the stream is promised by a PUSH_PROMISE received (idle → reserved (remote)).</summary>
    public void OnPushPromiseReceived()
    {
        if (State != Http2StreamState.Idle)
        {
            // §6.6: a promised stream must be idle.
            Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, StreamId, "PUSH_PROMISE promises a stream that is not idle");
        }

        State = Http2StreamState.ReservedRemote;
    }

    /// <summary>A frame received on this stream: moves the state, or throws the error §5.1 names for it.</summary>
    public Http2FrameVerdict OnReceived(Http2FrameType type, bool endStream)
    {
        if (type is Http2FrameType.Priority or Http2FrameType.Continuation)
        {
            // §5.1: PRIORITY may arrive in any state; CONTINUATION belongs to the frame before it.
            return Http2FrameVerdict.Process;
        }

        bool ends = endStream && type is Http2FrameType.Data or Http2FrameType.Headers;
        switch (State)
        {
            case Http2StreamState.Idle:
                if (type != Http2FrameType.Headers)
                {
                    Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, StreamId, $"{type} on an idle stream");
                }

                State = ends ? Http2StreamState.HalfClosedRemote : Http2StreamState.Open;
                return Http2FrameVerdict.Process;

            case Http2StreamState.ReservedLocal:
                if (type == Http2FrameType.RstStream)
                {
                    Close(Http2StreamClosure.ResetReceived);
                }
                else if (type != Http2FrameType.WindowUpdate)
                {
                    Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, StreamId, $"{type} on a stream in reserved (local)");
                }

                return Http2FrameVerdict.Process;

            case Http2StreamState.ReservedRemote:
                if (type == Http2FrameType.Headers)
                {
                    State = Http2StreamState.HalfClosedLocal;
                    if (ends)
                    {
                        Close(Http2StreamClosure.EndStream);
                    }
                }
                else if (type == Http2FrameType.RstStream)
                {
                    Close(Http2StreamClosure.ResetReceived);
                }
                else
                {
                    Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, StreamId, $"{type} on a stream in reserved (remote)");
                }

                return Http2FrameVerdict.Process;

            case Http2StreamState.Open:
                if (type == Http2FrameType.RstStream)
                {
                    Close(Http2StreamClosure.ResetReceived);
                }
                else if (ends)
                {
                    State = Http2StreamState.HalfClosedRemote;
                }

                return Http2FrameVerdict.Process;

            case Http2StreamState.HalfClosedLocal:
                if (type == Http2FrameType.RstStream)
                {
                    Close(Http2StreamClosure.ResetReceived);
                }
                else if (ends)
                {
                    Close(Http2StreamClosure.EndStream);
                }

                return Http2FrameVerdict.Process;

            case Http2StreamState.HalfClosedRemote:
                if (type == Http2FrameType.RstStream)
                {
                    Close(Http2StreamClosure.ResetReceived);
                }
                else if (type != Http2FrameType.WindowUpdate)
                {
                    Http2Throw.StreamError(Http2ErrorCode.StreamClosed, StreamId, $"{type} on a stream half-closed (remote)");
                }

                return Http2FrameVerdict.Process;

            default:
                return OnReceivedClosed(type);
        }
    }

    private readonly Http2FrameVerdict OnReceivedClosed(Http2FrameType type)
    {
        switch (Closure)
        {
            case Http2StreamClosure.ResetSent:
                // §5.1: frames the peer sent before it saw our RST_STREAM are ignored.
                return Http2FrameVerdict.Ignore;

            case Http2StreamClosure.ResetReceived:
                Http2Throw.StreamError(Http2ErrorCode.StreamClosed, StreamId, $"{type} after the peer's RST_STREAM");
                break;

            default:
                if (type is Http2FrameType.WindowUpdate or Http2FrameType.RstStream)
                {
                    // §5.1: they may still come for a short while after this endpoint's END_STREAM.
                    return Http2FrameVerdict.Ignore;
                }

                Http2Throw.ConnectionError(Http2ErrorCode.StreamClosed, StreamId, $"{type} after the peer's END_STREAM");
                break;
        }

        return Http2FrameVerdict.Ignore;
    }

    /// <summary>A frame this endpoint sends on this stream: moves the state; a frame the state forbids is a caller's bug.</summary>
    public void OnSent(Http2FrameType type, bool endStream)
    {
        if (type is Http2FrameType.Priority or Http2FrameType.Continuation)
        {
            return;
        }

        if (type == Http2FrameType.RstStream)
        {
            RequireSendState(State != Http2StreamState.Idle, "RST_STREAM");
            if (State != Http2StreamState.Closed)
            {
                Close(Http2StreamClosure.ResetSent);
            }

            return;
        }

        bool ends = endStream && type is Http2FrameType.Data or Http2FrameType.Headers;
        switch (State)
        {
            case Http2StreamState.Idle:
                RequireSendState(type == Http2FrameType.Headers, type);
                State = ends ? Http2StreamState.HalfClosedLocal : Http2StreamState.Open;
                break;

            case Http2StreamState.ReservedLocal:
                RequireSendState(type == Http2FrameType.Headers, type);
                State = Http2StreamState.HalfClosedRemote;
                if (ends)
                {
                    Close(Http2StreamClosure.EndStream);
                }

                break;

            case Http2StreamState.ReservedRemote:
            case Http2StreamState.HalfClosedLocal:
                RequireSendState(type == Http2FrameType.WindowUpdate, type);
                break;

            case Http2StreamState.Open:
                if (ends)
                {
                    State = Http2StreamState.HalfClosedLocal;
                }

                break;

            case Http2StreamState.HalfClosedRemote:
                if (ends)
                {
                    Close(Http2StreamClosure.EndStream);
                }

                break;

            default:
                RequireSendState(false, type);
                break;
        }
    }

    private void Close(Http2StreamClosure closure)
    {
        State = Http2StreamState.Closed;
        Closure = closure;
    }

    /// <summary>The frame's name is formatted only for the exception: an enum's ToString boxes it, on every send.</summary>
    private readonly void RequireSendState(bool allowed, Http2FrameType type)
    {
        if (!allowed)
        {
            ThrowInvalidSend(type.ToString(), State);
        }
    }

    private readonly void RequireSendState(bool allowed, string what)
    {
        if (!allowed)
        {
            ThrowInvalidSend(what, State);
        }
    }

    [DoesNotReturn, StackTraceHidden, MethodImpl(MethodImplOptions.NoInlining)]
    private static void ThrowInvalidSend(string what, Http2StreamState state)
        => throw new InvalidOperationException($"{what} may not be sent on a stream in state {state} (RFC 9113 §5.1)");
}
