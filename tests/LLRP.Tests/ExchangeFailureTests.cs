using System.IO.Pipelines;
using LLRP.Balancing;
using LLRP.Errors;
using LLRP.Exchanges;
using LLRP.Http1;

namespace LLRP.Tests;

/// <summary>
/// The one failure type and the decisions read from it: retrying elsewhere (one rule, <see cref="DownstreamChoice.Failed"/>),
/// passive health (the downstream's connection failing, classified where it failed), and the exchange's own abort
/// classified when it happens (408 for a client late with its body, 504 for a downstream that makes no progress).
/// </summary>
public sealed class ExchangeFailureTests
{
    private static readonly Uri[] Three = [new("http://127.0.0.1:1"), new("http://127.0.0.1:2"), new("http://127.0.0.1:3")];

    private static ProxyException ConnectRefused() =>
        new(ProxyError.DownstreamUnavailable, FailureSide.Downstream, ExchangePhase.Connect, requestSent: false, connectionFailed: true, "refused");

    private static ProxyException ResetWhileSending() =>
        new(ProxyError.DownstreamUnavailable, FailureSide.Downstream, ExchangePhase.Send, requestSent: true, connectionFailed: true, "reset");

    private static ProxyException TimedOut() =>
        new(ProxyError.DownstreamTimeout, FailureSide.Downstream, ExchangePhase.ResponseHead, requestSent: true, connectionFailed: false, "timeout");

    [Fact]
    public void A_connect_failure_with_nothing_sent_goes_once_more_elsewhere_and_takes_the_downstream_out()
    {
        using var set = new DownstreamSet(new BalancingOptions { Downstreams = Three, LoadBalancing = LoadBalancing.RoundRobin });
        var choice = new DownstreamChoice(set);
        var first = choice.Acquire();

        var excluded = choice.Failed(first, ConnectRefused(), excluded: null, responseStarted: false);

        Assert.Same(first, excluded);
        Assert.False(first.IsAvailable(Environment.TickCount64));
        var second = choice.Acquire(excluded);
        Assert.NotSame(first, second);
        // The second attempt is the last, whatever its failure.
        Assert.Null(choice.Failed(second, ConnectRefused(), excluded, responseStarted: false));
    }

    [Fact]
    public void Nothing_goes_elsewhere_once_the_request_was_sent_or_the_response_began()
    {
        using var set = new DownstreamSet(new BalancingOptions { Downstreams = Three, LoadBalancing = LoadBalancing.RoundRobin });
        var choice = new DownstreamChoice(set);

        var sent = choice.Acquire();
        Assert.Null(choice.Failed(sent, ResetWhileSending(), excluded: null, responseStarted: false));
        // The connection failed: passive health counts it although the request is not retried.
        Assert.False(sent.IsAvailable(Environment.TickCount64));

        var started = choice.Acquire();
        Assert.Null(choice.Failed(started, ConnectRefused(), excluded: null, responseStarted: true));
    }

    [Theory]
    [InlineData(nameof(ProxyError.DownstreamTimeout))]
    [InlineData(nameof(ProxyError.DownstreamInvalidResponse))]
    [InlineData(nameof(ProxyError.BadRequest))]
    [InlineData(nameof(ProxyError.ClientGone))]
    public void Failures_other_than_the_connection_failing_leave_the_downstream_in(string reason)
    {
        using var set = new DownstreamSet(new BalancingOptions { Downstreams = Three, LoadBalancing = LoadBalancing.RoundRobin });
        var choice = new DownstreamChoice(set);
        var destination = choice.Acquire();
        var error = Enum.Parse<ProxyError>(reason);
        var failure = ProxyErrors.SideOf(error) == FailureSide.Client
            ? new ProxyException(error, "the client's")
            : new ProxyException(error, FailureSide.Downstream, ExchangePhase.ResponseHead, requestSent: true, connectionFailed: false, "the downstream's");

        Assert.Null(choice.Failed(destination, failure, excluded: null, responseStarted: false));
        Assert.True(destination.IsAvailable(Environment.TickCount64));
    }

    [Fact]
    public void A_connect_failure_of_a_lone_downstream_is_final_and_leaves_it_in()
    {
        using var set = new DownstreamSet(new BalancingOptions { Downstreams = [Three[0]], LoadBalancing = LoadBalancing.RoundRobin });
        var choice = new DownstreamChoice(set);
        var only = choice.Acquire();

        Assert.Null(choice.Failed(only, ConnectRefused(), excluded: null, responseStarted: false));
        Assert.True(only.IsAvailable(Environment.TickCount64));
    }

    [Fact]
    public void An_expired_exchange_waiting_for_the_downstream_is_504_and_a_cancelled_wait_fails_with_it()
    {
        var exchange = StartedExchange("GET / HTTP/1.1\r\nHost: a\r\n\r\n", out _);

        Control(exchange).Expire();

        Assert.True(exchange.Aborted.IsCancellationRequested);
        var failure = exchange.FailureOf(new OperationCanceledException(exchange.Aborted));
        Assert.Equal(ProxyError.DownstreamTimeout, failure.Error);
        Assert.Equal(FailureSide.Downstream, failure.Side);
        Assert.False(failure.ConnectionFailed);
        // A later abort does not change why the exchange ended.
        Control(exchange).ClientGone();
        Assert.Equal(ProxyError.DownstreamTimeout, exchange.AbortFailure().Error);
    }

    [Fact]
    public async Task An_expired_exchange_waiting_for_the_clients_body_is_408()
    {
        var exchange = StartedExchange("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n", out var input);
        var read = exchange.Body.ReadAsync(new byte[16], exchange.Aborted);
        Assert.False(read.IsCompleted);

        Control(exchange).Expire();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await read);
        Assert.Equal(ProxyError.RequestTimeout, exchange.AbortFailure().Error);
        Assert.Equal(FailureSide.Client, exchange.AbortFailure().Side);
        await input.CompleteAsync();
    }

    [Fact]
    public void A_renewed_abort_source_is_a_new_token_that_the_next_abort_cancels()
    {
        var exchange = StartedExchange("GET / HTTP/1.1\r\nHost: a\r\n\r\n", out _);
        var before = exchange.Aborted;
        using var registration = before.Register(() => { });

        Control(exchange).RenewAbortSource();

        Assert.NotEqual(before, exchange.Aborted);
        Assert.False(exchange.Aborted.IsCancellationRequested);
        Control(exchange).ClientGone();
        Assert.True(exchange.Aborted.IsCancellationRequested);
        Assert.Equal(ProxyError.ClientGone, exchange.FailureOf(new OperationCanceledException(exchange.Aborted)).Error);
    }

    [Fact]
    public void An_aborted_exchange_renewed_stays_aborted()
    {
        var exchange = StartedExchange("GET / HTTP/1.1\r\nHost: a\r\n\r\n", out _);
        Control(exchange).Expire();

        Control(exchange).RenewAbortSource();

        Assert.True(exchange.Aborted.IsCancellationRequested);
        Assert.Equal(ProxyError.DownstreamTimeout, exchange.AbortFailure().Error);
    }

    [Fact]
    public void The_client_gone_is_nobodys_answer_and_a_thrown_failure_stays_as_classified()
    {
        var exchange = StartedExchange("GET / HTTP/1.1\r\nHost: a\r\n\r\n", out _);
        var thrown = ResetWhileSending();
        Assert.Same(thrown, exchange.FailureOf(thrown));

        Control(exchange).ClientGone();

        Assert.Equal(0, ProxyErrors.StatusCode(exchange.FailureOf(new OperationCanceledException()).Error));
        Assert.Same(thrown, exchange.FailureOf(thrown));
    }

    // The deadline falls exactly downstreamResponseTimeout after the last progress (the sweep that acts on it runs every
    // DeadlineSweep.Interval), and progress moves it; given the clock readings, no waiting involved.
    [Fact]
    public void The_deadline_falls_one_timeout_after_the_last_progress()
    {
        var timeout = (long)new ProxyOptions { Balancing = new BalancingOptions { Downstreams = [Three[0]] } }.DownstreamResponseTimeout.TotalMilliseconds;
        var before = Environment.TickCount64;
        var exchange = StartedExchange("GET / HTTP/1.1\r\nHost: a\r\n\r\n", out _);
        var after = Environment.TickCount64;
        Assert.False(Control(exchange).IsPastDeadline(before + timeout - 1));
        Assert.True(Control(exchange).IsPastDeadline(after + timeout));

        var progress = Environment.TickCount64;
        exchange.RestartDeadline();
        Assert.False(Control(exchange).IsPastDeadline(progress + timeout - 1));
        Assert.True(Control(exchange).IsPastDeadline(Environment.TickCount64 + timeout));
    }

    private static Exchange StartedExchange(string head, out PipeWriter input)
    {
        var limits = new RequestLimits();
        var pipe = new Pipe();
        input = pipe.Writer;
        var requestHead = new RequestHead(limits);
        var bytes = new System.Buffers.ReadOnlySequence<byte>(System.Text.Encoding.ASCII.GetBytes(head));
        var reader = new System.Buffers.SequenceReader<byte>(bytes);
        Assert.True(requestHead.Parse(ref reader));
        var exchange = new Exchange(requestHead, new RequestBodyReader(pipe.Reader, limits, continueTo: null), new ResponseWriter(new Pipe().Writer),
            new ProxyOptions { Balancing = new BalancingOptions { Downstreams = [Three[0]] } }.DownstreamResponseTimeout, "127.0.0.1"u8.ToArray(), 0);
        Control(exchange).Start();
        return exchange;
    }

    // The test drives the exchange as a front end does, through its lifecycle.
    private static IExchangeControl Control(Exchange exchange) => exchange;
}
