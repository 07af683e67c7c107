using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Threading.Tasks.Sources;
using BenchmarkDotNet.Attributes;
using LLHttp;

namespace Microbenchmarks;

/// <summary>
/// One whole exchange over loopback TCP: write the head with eight fields, send, parse the response head, walk its
/// fields, read the body, give the buffers back as an idle connection does. The origin is a raw socket on its own thread answering every request head with a canned
/// response, using the synchronous span APIs so it allocates nothing itself (BenchmarkDotNet counts the whole process).
/// </summary>
[MemoryDiagnoser]
public class LoopbackExchangeBenchmarks
{
    private CannedServer? _server;
    private LLHttpConnection? _connection;
    private ExchangeDriver? _driver;

    [Params("content-length", "chunked")]
    public string Response { get; set; } = "content-length";

    [GlobalSetup]
    public void Setup()
    {
        _server = new CannedServer(Response == "chunked" ? Corpus.ChunkedResponse : Corpus.ContentLengthResponse);
        _connection = LLHttpConnection.ConnectAsync(_server.EndPoint).AsTask().GetAwaiter().GetResult();
        _driver = new ExchangeDriver(_connection);
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _connection?.Dispose();
        _server?.Dispose();
    }

    // Several exchanges per invocation, as Kestrel's parser benchmarks do, to amortize BenchmarkDotNet's own cost of
    // blocking on the returned ValueTask.
    private const int ExchangesPerInvoke = 16;

    [Benchmark(OperationsPerInvoke = ExchangesPerInvoke)]
    public ValueTask<int> Exchange() => _driver!.RunAsync(ExchangesPerInvoke);

    private static int CountHeaderBytes(ResponseHead head)
    {
        int total = 0;
        foreach (var field in head.Headers)
        {
            total += field.Name.Length + field.Value.Length;
        }

        return total;
    }

    /// <summary>
    /// Drives exchanges with awaiters and a cached continuation instead of an async method. BenchmarkDotNet blocks its
    /// own thread on the result, so an async method's pooled box would be rented on that thread and returned on a
    /// thread-pool thread, missing the per-thread cache and allocating: that would measure the harness, not LLHttp.
    /// </summary>
    private sealed class ExchangeDriver : IValueTaskSource<int>
    {
        private readonly LLHttpConnection _connection;
        private readonly byte[] _body = new byte[4096];
        private readonly Action _moveNext;
        private ManualResetValueTaskSourceCore<int> _core;
        private ConfiguredValueTaskAwaitable.ConfiguredValueTaskAwaiter _send;
        private ConfiguredValueTaskAwaitable<ResponseHead>.ConfiguredValueTaskAwaiter _head;
        private ConfiguredValueTaskAwaitable<int>.ConfiguredValueTaskAwaiter _read;
        private Step _step;
        private int _remaining;
        private int _total;

        public ExchangeDriver(LLHttpConnection connection)
        {
            _connection = connection;
            _moveNext = MoveNext;
        }

        public ValueTask<int> RunAsync(int exchanges)
        {
            _core.Reset();
            _remaining = exchanges;
            _total = 0;
            _step = Step.Start;
            MoveNext();
            return new ValueTask<int>(this, _core.Version);
        }

        private void MoveNext()
        {
            try
            {
                while (true)
                {
                    switch (_step)
                    {
                        case Step.Start:
                            if (_remaining-- == 0)
                            {
                                _core.SetResult(_total);
                                return;
                            }

                            _connection.StartRequest(Corpus.Method, Corpus.Target, Corpus.Authority);
                            foreach (var (name, value) in Corpus.RequestHeaders)
                            {
                                _connection.WriteHeader(name, value);
                            }

                            _send = _connection.SendRequestAsync().ConfigureAwait(false).GetAwaiter();
                            _step = Step.Sent;
                            if (!_send.IsCompleted)
                            {
                                _send.UnsafeOnCompleted(_moveNext);
                                return;
                            }

                            break;

                        case Step.Sent:
                            _send.GetResult();
                            _head = _connection.ReadResponseHeadAsync().ConfigureAwait(false).GetAwaiter();
                            _step = Step.HeadRead;
                            if (!_head.IsCompleted)
                            {
                                _head.UnsafeOnCompleted(_moveNext);
                                return;
                            }

                            break;

                        case Step.HeadRead:
                            _total += CountHeaderBytes(_head.GetResult());
                            _step = Step.ReadBody;
                            break;

                        case Step.ReadBody:
                            _read = _connection.ReadBodyAsync(_body).ConfigureAwait(false).GetAwaiter();
                            _step = Step.BodyRead;
                            if (!_read.IsCompleted)
                            {
                                _read.UnsafeOnCompleted(_moveNext);
                                return;
                            }

                            break;

                        case Step.BodyRead:
                            int n = _read.GetResult();
                            _total += n;
                            if (n != 0)
                            {
                                _step = Step.ReadBody;
                            }
                            else if (_connection.IsReusable)
                            {
                                // As the pool and the affinity slot do between exchanges: the buffers go back to
                                // ArrayPool and the next exchange rents them again, still without allocating.
                                _connection.ReleaseIdleBuffers();
                                _step = Step.Start;
                            }
                            else
                            {
                                throw new InvalidOperationException("The connection should be reusable.");
                            }

                            break;
                    }
                }
            }
            catch (Exception e)
            {
                _core.SetException(e);
            }
        }

        public int GetResult(short token) => _core.GetResult(token);

        public ValueTaskSourceStatus GetStatus(short token) => _core.GetStatus(token);

        public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
            => _core.OnCompleted(continuation, state, token, flags);

        private enum Step : byte
        {
            Start,
            Sent,
            HeadRead,
            ReadBody,
            BodyRead,
        }
    }

    private sealed class CannedServer : IDisposable
    {
        private readonly Socket _listener = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        private readonly byte[] _response;
        private readonly Thread _thread;
        private Socket? _accepted;

        public CannedServer(byte[] response)
        {
            _response = response;
            _listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            _listener.Listen(1);
            _thread = new Thread(Serve) { IsBackground = true, Name = "canned-origin" };
            _thread.Start();
        }

        public EndPoint EndPoint => _listener.LocalEndPoint!;

        private void Serve()
        {
            try
            {
                _accepted = _listener.Accept();
                _accepted.NoDelay = true;
                Span<byte> buffer = stackalloc byte[8192];
                int matched = 0;
                while (true)
                {
                    int n = _accepted.Receive(buffer);
                    if (n == 0)
                    {
                        return;
                    }

                    // Requests carry no body: answer each time the end-of-head CRLFCRLF completes.
                    for (int i = 0; i < n; i++)
                    {
                        byte b = buffer[i];
                        matched = b == (matched % 2 == 0 ? (byte)'\r' : (byte)'\n') ? matched + 1 : (b == '\r' ? 1 : 0);
                        if (matched == 4)
                        {
                            matched = 0;
                            _accepted.Send(_response);
                        }
                    }
                }
            }
            catch (SocketException)
            {
            }
            catch (ObjectDisposedException)
            {
            }
        }

        public void Dispose()
        {
            _accepted?.Dispose();
            _listener.Dispose();
            _thread.Join(TimeSpan.FromSeconds(5));
        }
    }
}
