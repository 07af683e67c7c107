namespace LLRP.Forwarding;

/// <summary>
/// A forwarding variant (design.md step 6). It runs the connection's request loop: read a head with the shared
/// request side (<see cref="ProxyConnection.StartHead"/>, <see cref="ProxyConnection.ParseHead"/>), send the request
/// downstream, relay the response through <see cref="ProxyConnection.Response"/>. Parsing, validation, body de-framing,
/// header policy and client framing are the shared side's. The loop is the variant's so that a variant can keep every
/// await of an exchange in one async method per connection: awaits inside it allocate nothing, while a per-request
/// async method allocates its state machine each time it waits. One instance per inbound connection.
/// </summary>
internal interface IForwarder : IDisposable
{
    Task RunAsync(ProxyConnection connection);
}

/// <summary>
/// A variant whose exchange is one async method per request (the HttpClient variants allocate per request anyway):
/// the connection loop is written here once.
/// </summary>
internal abstract class RequestForwarder : IForwarder
{
    public async Task RunAsync(ProxyConnection connection)
    {
        while (true)
        {
            connection.StartHead();
            HeadStatus status;
            do
            {
                status = connection.ParseHead(await connection.Input.ReadAsync());
            }
            while (status == HeadStatus.Incomplete);
            if (status != HeadStatus.Complete)
            {
                await connection.RejectAsync(status);
                return;
            }

            connection.StartExchange();
            try
            {
                await ForwardAsync(connection);
                await connection.EndExchangeAsync();
            }
            catch (Exception e)
            {
                await connection.FailExchangeAsync(e);
                return;
            }
            if (!connection.CanContinue())
            {
                return;
            }
        }
    }

    /// <summary>
    /// Completes when the response was written to the client (not necessarily flushed). Failures are
    /// <see cref="Errors.ProxyException"/> or cancellation.
    /// </summary>
    protected abstract ValueTask ForwardAsync(ProxyConnection connection);

    public abstract void Dispose();
}

/// <summary>Where reading a request head stands after one read.</summary>
internal enum HeadStatus : byte
{
    Incomplete,
    Complete,
    /// <summary>The client closed or went idle past keepAliveTimeout: end without an answer.</summary>
    Closed,
    /// <summary>The head is invalid or too slow: answer with the status and end.</summary>
    Rejected,
}
