using LLRP.Errors;
using LLRP.Forwarding;
using Xunit;

namespace LLRP.Tests;

/// <summary>
/// The hand-off between a connection and a forwarder's exchange loop: every exchange's ValueTask completes with that
/// exchange (whether the loop finishes it at once or later), a failure reaches the connection as the same exception,
/// and Stop ends the loop.
/// </summary>
public sealed class ExchangeSignalsTests
{
    // On a thread-pool thread, as a connection's request loop runs: with no SynchronizationContext the hand-offs'
    // continuations run inline (the test framework's context would post them and make "finished inside Start" false).
    [Fact]
    public Task Exchanges_complete_in_turn_and_stop_ends_the_loop() => Task.Run(ExchangesCompleteInTurnAsync);

    private static async Task ExchangesCompleteInTurnAsync()
    {
        var signals = new ExchangeSignals();
        var pending = new TaskCompletionSource[3];
        var failure = new ProxyException(ProxyError.DownstreamUnavailable, "refused");
        var exchanges = 0;
        var loop = Loop();

        // Synchronous: the loop finishes the exchange inside Start.
        var first = signals.Start();
        Assert.True(first.IsCompletedSuccessfully);
        await first;

        // Asynchronous: the exchange finishes later, on whichever thread completes it.
        for (var i = 0; i < pending.Length; i++)
        {
            pending[i] = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        }
        for (var i = 0; i < pending.Length; i++)
        {
            var exchange = signals.Start();
            Assert.False(exchange.IsCompleted);
            if (i == 1)
            {
                pending[i].SetException(failure);
                Assert.Same(failure, await Assert.ThrowsAsync<ProxyException>(async () => await exchange));
            }
            else
            {
                pending[i].SetResult();
                await exchange;
            }
        }

        // A failure finished inside Start is thrown by the connection's await too.
        var failed = signals.Start();
        Assert.Same(failure, await Assert.ThrowsAsync<ProxyException>(async () => await failed));

        Assert.False(loop.IsCompleted);
        signals.Stop();
        await loop.WaitAsync(TimeSpan.FromSeconds(10));
        Assert.Equal(5, exchanges);

        async Task Loop()
        {
            while (await signals.WaitForStartAsync())
            {
                var index = exchanges++;
                Exception? error = null;
                try
                {
                    if (index is >= 1 and <= 3)
                    {
                        await pending[index - 1].Task;
                    }
                    else if (index == 4)
                    {
                        throw failure;
                    }
                }
                catch (Exception e)
                {
                    error = e;
                }
                signals.Complete(error);
            }
        }
    }
}
