namespace LLRP.Jobs;

/// <summary>The request header presets (benchmarks.yml's presetHeaders), one place for every load generator.</summary>
internal static class HeaderPresets
{
    private const string PlaintextAccept = "Accept: text/plain,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7";

    public const string Names = "plaintext|browser|handshake|none";

    /// <summary>The preset's "Name: value" fields, or null for an unknown name.
    /// plaintext: crank's "plaintext" preset (its wrk and bombardier jobs), Accept and Connection: keep-alive.
    /// browser: what a desktop browser sends for a page navigation, eleven fields besides Host (the .NET team's proxy
    /// lab drives proxies with a browser-like set; this one follows a current Chrome on Linux).
    /// handshake: plaintext's Accept with "Connection: close", so the server closes after each response and the load
    /// opens a new connection for the next: with https every request pays a full TLS handshake (requests per second
    /// are handshakes per second). none (or empty): only what the tool itself sends.</summary>
    public static string[]? Of(string name) => name switch
    {
        "plaintext" => [PlaintextAccept, "Connection: keep-alive"],
        "browser" =>
        [
            "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
            "Accept-Encoding: gzip, deflate, br",
            "Accept-Language: en-US,en;q=0.9",
            "Cache-Control: max-age=0",
            "Connection: keep-alive",
            "Cookie: session=6f1c9d2e8b7a4f30a5c1e2d3b4a59687; theme=light",
            "Sec-Fetch-Dest: document",
            "Sec-Fetch-Mode: navigate",
            "Sec-Fetch-Site: none",
            "Upgrade-Insecure-Requests: 1",
            "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
        ],
        "handshake" => [PlaintextAccept, "Connection: close"],
        "none" or "" => [],
        _ => null,
    };
}
