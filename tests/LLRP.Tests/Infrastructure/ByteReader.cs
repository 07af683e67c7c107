namespace LLRP.Tests.Infrastructure;

/// <summary>A buffered reader over a stream for line- and length-framed HTTP/1.1 parsing.</summary>
internal sealed class ByteReader(Stream stream)
{
    private byte[] _buffer = new byte[16 * 1024];
    private int _start;
    private int _end;

    public int Buffered => _end - _start;

    /// <summary>A line up to and including its LF; null on EOF before any byte; a partial line (no LF) on EOF mid-line.</summary>
    public async ValueTask<byte[]?> ReadLineAsync(int maxLength, CancellationToken ct)
    {
        var scanned = 0;
        while (true)
        {
            var index = Array.IndexOf(_buffer, (byte)'\n', _start + scanned, _end - _start - scanned);
            if (index >= 0)
            {
                return Take(index - _start + 1);
            }
            scanned = _end - _start;
            if (scanned > maxLength)
            {
                throw new InvalidDataException($"line longer than {maxLength} bytes");
            }
            if (!await FillAsync(ct))
            {
                return scanned == 0 ? null : Take(scanned);
            }
        }
    }

    /// <summary>Up to <paramref name="count"/> bytes; fewer only when the stream ended.</summary>
    public async ValueTask<byte[]> ReadUpToAsync(int count, CancellationToken ct)
    {
        while (_end - _start < count)
        {
            if (!await FillAsync(ct))
            {
                break;
            }
        }
        return Take(Math.Min(count, _end - _start));
    }

    public async ValueTask<byte[]> ReadToEndAsync(CancellationToken ct)
    {
        while (await FillAsync(ct))
        {
        }
        return Take(_end - _start);
    }

    /// <summary>True when the stream ended (or was reset) with nothing buffered; false when a byte is available.</summary>
    public async ValueTask<bool> AtEndAsync(CancellationToken ct)
    {
        if (_end > _start)
        {
            return false;
        }
        return !await FillAsync(ct);
    }

    public byte[] TakeBuffered() => Take(_end - _start);

    private byte[] Take(int count)
    {
        var result = _buffer.AsSpan(_start, count).ToArray();
        _start += count;
        return result;
    }

    private async ValueTask<bool> FillAsync(CancellationToken ct)
    {
        if (_start > 0)
        {
            Buffer.BlockCopy(_buffer, _start, _buffer, 0, _end - _start);
            _end -= _start;
            _start = 0;
        }
        if (_end == _buffer.Length)
        {
            Array.Resize(ref _buffer, _buffer.Length * 2);
        }
        int n;
        try
        {
            n = await stream.ReadAsync(_buffer.AsMemory(_end), ct);
        }
        catch (IOException)
        {
            // A reset reads as the end of the stream: the peer is gone either way.
            return false;
        }
        catch (ObjectDisposedException)
        {
            return false;
        }
        _end += n;
        return n > 0;
    }
}
