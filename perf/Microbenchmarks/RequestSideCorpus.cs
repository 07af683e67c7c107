using System.Text;

namespace Microbenchmarks;

/// <summary>Request heads as three kinds of client send them, a request body, and a downstream's response fields.</summary>
internal static class RequestSideCorpus
{
    /// <summary>curl 8's default GET: three fields.</summary>
    private const string Curl =
        "GET /api/v1/products/12345 HTTP/1.1\r\n" +
        "Host: shop.example.com\r\n" +
        "User-Agent: curl/8.5.0\r\n" +
        "Accept: */*\r\n" +
        "\r\n";

    /// <summary>A browser's navigation (Firefox 128 shape): twelve fields, a cookie, fetch metadata.</summary>
    private const string Browser =
        "GET /products/12345?ref=home&utm_source=newsletter HTTP/1.1\r\n" +
        "Host: shop.example.com\r\n" +
        "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n" +
        "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n" +
        "Accept-Language: en-US,en;q=0.5\r\n" +
        "Accept-Encoding: gzip, deflate, br, zstd\r\n" +
        "Referer: https://shop.example.com/\r\n" +
        "Connection: keep-alive\r\n" +
        "Cookie: session=8f14e45fceea167a5a36dedd4bea2543; theme=dark; consent=1; cart=3f2a9c\r\n" +
        "Upgrade-Insecure-Requests: 1\r\n" +
        "Sec-Fetch-Dest: document\r\n" +
        "Sec-Fetch-Mode: navigate\r\n" +
        "Sec-Fetch-Site: same-origin\r\n" +
        "\r\n";

    /// <summary>A service-to-service API call behind a gateway: twenty fields (auth, tracing, forwarding, idempotency).</summary>
    private const string ApiClient =
        "GET /api/v2/orders/7f3c2a10-5b1e-4d2a-9c7e-1a2b3c4d5e6f/items?page=2&pageSize=50&sort=-createdAt HTTP/1.1\r\n" +
        "Host: orders.internal:8080\r\n" +
        "User-Agent: orders-client/3.4.1 (dotnet/10.0; linux-x64)\r\n" +
        "Accept: application/json\r\n" +
        "Accept-Encoding: gzip, br\r\n" +
        "Authorization: Bearer eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJvcmRlcnMtY2xpZW50IiwiYXVkIjoib3JkZXJzIiwiZXhwIjoxNzk0MDAwMDAwfQ.c2lnbmF0dXJlLWJ5dGVzLWdvLWhlcmU\r\n" +
        "X-Request-Id: 4bf92f3577b34da6a3ce929d0e0e4736\r\n" +
        "X-Correlation-Id: 9c1e7d2a-3b4f-4c5d-8e6f-7a8b9c0d1e2f\r\n" +
        "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n" +
        "tracestate: vendor=opaque-value-1234\r\n" +
        "baggage: tenant=acme,region=eu-west-1\r\n" +
        "X-Forwarded-For: 203.0.113.195, 10.0.0.12\r\n" +
        "X-Forwarded-Proto: https\r\n" +
        "X-Forwarded-Host: api.example.com\r\n" +
        "X-Api-Version: 2\r\n" +
        "X-Tenant-Id: acme\r\n" +
        "Idempotency-Key: 0d7c1f6e-2b3a-4c5d-9e8f-a1b2c3d4e5f6\r\n" +
        "Cache-Control: no-cache\r\n" +
        "If-None-Match: \"33a64df551425fcc55e4d42a148795d9f25f89d4\"\r\n" +
        "Prefer: return=representation\r\n" +
        "Accept-Language: en-US\r\n" +
        "\r\n";

    public static byte[] Head(string client) => Latin1(client switch
    {
        "curl" => Curl,
        "browser" => Browser,
        "api-client" => ApiClient,
        _ => throw new ArgumentOutOfRangeException(nameof(client), client, "curl, browser or api-client"),
    });

    /// <summary>1 KiB of JSON.</summary>
    public static readonly byte[] JsonBody = Latin1(Json(1024));

    /// <summary>The same bytes as two chunks of 512, then the last chunk without trailers.</summary>
    public static readonly byte[] ChunkedBody = Latin1(
        $"200\r\n{Json(1024)[..512]}\r\n200\r\n{Json(1024)[512..]}\r\n0\r\n\r\n");

    /// <summary>An API client's POST head for <see cref="JsonBody"/> or <see cref="ChunkedBody"/>.</summary>
    public static byte[] PostHead(bool chunked) => Latin1(
        "POST /api/v2/orders HTTP/1.1\r\n" +
        "Host: orders.internal:8080\r\n" +
        "User-Agent: orders-client/3.4.1 (dotnet/10.0; linux-x64)\r\n" +
        "Accept: application/json\r\n" +
        "Content-Type: application/json; charset=utf-8\r\n" +
        (chunked ? "Transfer-Encoding: chunked\r\n" : $"Content-Length: {JsonBody.Length}\r\n") +
        "\r\n");

    /// <summary>What a small API answers: six fields (Content-Length is re-written by the proxy) and a 10-byte body.</summary>
    public static readonly (byte[] Name, byte[] Value)[] ResponseFields =
    [
        ("Content-Type"u8.ToArray(), "application/json; charset=utf-8"u8.ToArray()),
        ("Date"u8.ToArray(), "Mon, 23 Nov 2026 09:00:00 GMT"u8.ToArray()),
        ("Server"u8.ToArray(), "Kestrel"u8.ToArray()),
        ("Cache-Control"u8.ToArray(), "no-cache"u8.ToArray()),
        ("X-Request-Id"u8.ToArray(), "4bf92f3577b34da6a3ce929d0e0e4736"u8.ToArray()),
        ("Content-Length"u8.ToArray(), "10"u8.ToArray()),
    ];

    public static readonly byte[] ResponseBody = "{\"id\":123}"u8.ToArray();

    // Repeats one order line until the text is exactly `length` characters.
    private static string Json(int length)
    {
        var text = new StringBuilder("{\"items\":[");
        for (var i = 0; text.Length < length; i++)
        {
            text.Append(System.Globalization.CultureInfo.InvariantCulture, $"{{\"sku\":\"SKU-{i:D5}\",\"qty\":{i % 7 + 1}}},");
        }
        return text.ToString(0, length);
    }

    private static byte[] Latin1(string s) => Encoding.Latin1.GetBytes(s);
}
