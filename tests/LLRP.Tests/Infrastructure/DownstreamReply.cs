namespace LLRP.Tests.Infrastructure;

/// <summary>What the recording downstream does after it has read a request.</summary>
public sealed record DownstreamReply
{
    public byte[] Bytes { get; init; } = [];

    /// <summary>Close the connection after writing <see cref="Bytes"/>.</summary>
    public bool CloseAfter { get; init; }

    /// <summary>Never answer: hold the connection open until the test ends.</summary>
    public bool Hold { get; init; }

    /// <summary>
    /// With <see cref="Hold"/>: read on until the proxy closes the connection, and count that close
    /// (<see cref="RecordingDownstream.HeldConnectionsClosed"/>).
    /// </summary>
    public bool WatchClose { get; init; }

    /// <summary>Write the response one byte per send, to exercise the proxy's parser across reads.</summary>
    public bool ByteByByte { get; init; }

    public static DownstreamReply Ok(string body = "ok", string extraHeaders = "") =>
        Raw($"HTTP/1.1 200 OK\r\n{extraHeaders}Content-Length: {Wire.Bytes(body).Length}\r\n\r\n{body}");

    public static DownstreamReply Raw(string response, bool closeAfter = false) =>
        new() { Bytes = Wire.Bytes(response), CloseAfter = closeAfter };

    public static readonly DownstreamReply CloseWithoutResponse = new() { CloseAfter = true };

    public static readonly DownstreamReply Never = new() { Hold = true };

    /// <summary>Never answer, and notice when the proxy gives up on the exchange and closes the connection.</summary>
    public static readonly DownstreamReply NeverWatchingClose = new() { Hold = true, WatchClose = true };
}
