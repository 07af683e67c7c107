namespace Microbenchmarks;

/// <summary>Realistic inputs: what a reverse proxy forwards for a browser GET, and what a small API answers.</summary>
internal static class Corpus
{
    public static readonly byte[] Method = "GET"u8.ToArray();
    public static readonly byte[] Target = "/api/v1/products/12345?include=reviews&locale=en-US"u8.ToArray();
    public static readonly byte[] Authority = "backend.internal:8080"u8.ToArray();

    /// <summary>Eight request fields left after hop-by-hop removal, with X-Forwarded-* added by the proxy.</summary>
    public static readonly (byte[] Name, byte[] Value)[] RequestHeaders =
    [
        ("Accept"u8.ToArray(), "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"u8.ToArray()),
        ("Accept-Encoding"u8.ToArray(), "gzip, deflate, br"u8.ToArray()),
        ("Accept-Language"u8.ToArray(), "en-US,en;q=0.5"u8.ToArray()),
        ("User-Agent"u8.ToArray(), "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"u8.ToArray()),
        ("Cookie"u8.ToArray(), "session=8f14e45fceea167a5a36dedd4bea2543; theme=dark"u8.ToArray()),
        ("X-Forwarded-For"u8.ToArray(), "203.0.113.195"u8.ToArray()),
        ("X-Forwarded-Proto"u8.ToArray(), "https"u8.ToArray()),
        ("X-Request-Id"u8.ToArray(), "4bf92f3577b34da6a3ce929d0e0e4736"u8.ToArray()),
    ];

    private const string ResponseFields =
        "HTTP/1.1 200 OK\r\n" +
        "Content-Type: application/json; charset=utf-8\r\n" +
        "Date: Sun, 22 Nov 2026 05:00:00 GMT\r\n" +
        "Server: Kestrel\r\n" +
        "Cache-Control: no-cache\r\n" +
        "X-Request-Id: 4bf92f3577b34da6a3ce929d0e0e4736\r\n";

    /// <summary>Six fields and a 10-byte body.</summary>
    public static readonly byte[] ContentLengthResponse = Latin1(ResponseFields + "Content-Length: 10\r\n\r\n{\"id\":123}");

    /// <summary>Two chunks (one with an extension), 90 bytes of data.</summary>
    public static readonly byte[] ChunkedBody = Latin1(
        Chunk("{\"items\":[{\"id\":1},{\"id\":2}", "")
        + Chunk(",{\"id\":3,\"name\":\"a product with a somewhat longer description\"}]}", ";ext=1")
        + "0\r\n\r\n");

    /// <summary>The same six fields with chunked framing and <see cref="ChunkedBody"/>.</summary>
    public static readonly byte[] ChunkedResponse = [.. Latin1(ResponseFields + "Transfer-Encoding: chunked\r\n\r\n"), .. ChunkedBody];

    private static string Chunk(string data, string extension) => $"{data.Length:X}{extension}\r\n{data}\r\n";

    private static byte[] Latin1(string s) => System.Text.Encoding.Latin1.GetBytes(s);
}
