using System.Text;
using LLHttp.Transports;

namespace LLHttp.Tests;

/// <summary>Plays back scripted receives (each at most one segment) and records every send.</summary>
internal sealed class ScriptedTransport : Transport
{
    private readonly Queue<byte[]> _reads;
    private byte[]? _current;
    private int _offset;

    public ScriptedTransport(IEnumerable<byte[]> reads) => _reads = new Queue<byte[]>(reads);

    public ScriptedTransport(params string[] reads) : this(reads.Select(Encoding.Latin1.GetBytes))
    {
    }

    /// <summary>After the script: wait for cancellation (a peer that never answers) instead of returning end of stream.</summary>
    public bool HangAtEnd { get; init; }

    public bool ReadableWhileIdle { get; set; }

    public bool Disposed { get; private set; }

    /// <summary>Sends after this many fail as a peer that closed its reading side does (connection reset).</summary>
    public int SucceedingSends { get; init; } = int.MaxValue;

    public List<byte[]> Sends { get; } = [];

    public string SentText => string.Concat(Sends.Select(Encoding.Latin1.GetString));

    public void Enqueue(string read) => _reads.Enqueue(Encoding.Latin1.GetBytes(read));

    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Disposed, this);
        while (_current is null || _offset == _current.Length)
        {
            if (!_reads.TryDequeue(out _current))
            {
                _current = null;
                return HangAtEnd ? new ValueTask<int>(HangAsync(cancellationToken)) : new ValueTask<int>(0);
            }

            _offset = 0;
        }

        int n = Math.Min(buffer.Length, _current.Length - _offset);
        _current.AsSpan(_offset, n).CopyTo(buffer.Span);
        _offset += n;
        return new ValueTask<int>(n);
    }

    private static async Task<int> HangAsync(CancellationToken cancellationToken)
    {
        await Task.Delay(Timeout.Infinite, cancellationToken);
        return 0;
    }

    public override ValueTask SendAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Disposed, this);
        if (Sends.Count >= SucceedingSends)
        {
            return ValueTask.FromException(new System.Net.Sockets.SocketException((int)System.Net.Sockets.SocketError.ConnectionReset));
        }

        Sends.Add(buffer.ToArray());
        return default;
    }

    public override bool IsReadableWhileIdle() => ReadableWhileIdle;

    // No socket under a script.
    public override int ReceiveBufferSize => 0;

    public override void Dispose() => Disposed = true;
}
