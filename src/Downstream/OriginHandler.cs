using System.Globalization;

namespace Downstream;

/// <summary>
/// Every endpoint of the origin. Any path not listed answers like "/", as aspnet/Benchmarks' catch-all does, so a
/// proxy can be driven with arbitrary paths.
/// </summary>
internal static class OriginHandler
{
    private const string TextPlain = "text/plain";

    // aspnet/Benchmarks' Downstream default: the smallest body that still exercises body forwarding.
    private const int DefaultSize = 10;

    // A few pieces, so /chunked sends several chunks and a proxy's chunk re-framing is really exercised.
    private const int ChunkedPieces = 4;

    public static Task HandleAsync(HttpContext context)
    {
        var path = context.Request.Path.Value.AsSpan();
        if (path.Equals("/chunked", StringComparison.OrdinalIgnoreCase))
        {
            return ChunkedAsync(context);
        }
        if (path.Equals("/echo", StringComparison.OrdinalIgnoreCase))
        {
            return EchoAsync(context);
        }
        if (path.StartsWith("/status/", StringComparison.OrdinalIgnoreCase))
        {
            return Status(context, path["/status/".Length..]);
        }
        return FixedAsync(context);
    }

    /// <summary>"/" and every other path: the body with Content-Length.</summary>
    private static async Task FixedAsync(HttpContext context)
    {
        if (!TryGetSize(context, out var size))
        {
            await BadSizeAsync(context);
            return;
        }

        var response = context.Response;
        response.ContentType = TextPlain;
        response.ContentLength = size;
        // Kestrel would drop the bytes of a HEAD response anyway; not handing them over saves the copy.
        if (size > 0 && !HttpMethods.IsHead(context.Request.Method))
        {
            await response.BodyWriter.WriteAsync(Payload.Get(size), context.RequestAborted);
        }
    }

    /// <summary>"/chunked": the same body without Content-Length, flushed in pieces so Kestrel chunks it.</summary>
    private static async Task ChunkedAsync(HttpContext context)
    {
        if (!TryGetSize(context, out var size))
        {
            await BadSizeAsync(context);
            return;
        }

        var response = context.Response;
        response.ContentType = TextPlain;
        // Sending the head before any body fixes chunked framing even for s=0, where Kestrel would otherwise
        // add "Content-Length: 0" at completion.
        await response.StartAsync(context.RequestAborted);
        if (HttpMethods.IsHead(context.Request.Method))
        {
            return;
        }

        var body = Payload.Get(size);
        var piece = Math.Max(1, (size + ChunkedPieces - 1) / ChunkedPieces);
        while (!body.IsEmpty)
        {
            var length = Math.Min(piece, body.Length);
            // WriteAsync flushes, and each flush becomes one chunk on the wire.
            await response.BodyWriter.WriteAsync(body[..length], context.RequestAborted);
            body = body[length..];
        }
    }

    /// <summary>"/echo", any method: the request body verbatim, with the request's Content-Type.</summary>
    private static async Task EchoAsync(HttpContext context)
    {
        var request = context.Request;
        var response = context.Response;
        if (request.ContentType is { } contentType)
        {
            response.ContentType = contentType;
        }
        // A known request length is echoed with Content-Length; a chunked one comes back chunked (Kestrel's choice
        // when the length is unknown), so both framings are exercised on the response side too.
        if (request.ContentLength is { } length)
        {
            response.ContentLength = length;
        }
        await request.BodyReader.CopyToAsync(response.BodyWriter, context.RequestAborted);
    }

    /// <summary>"/status/{code}": that status, no body.</summary>
    private static Task Status(HttpContext context, ReadOnlySpan<char> code)
    {
        // 1xx cannot be a final status, and codes above 599 are not HTTP/1.1 status codes (RFC 9110 §15).
        if (!int.TryParse(code, NumberStyles.None, CultureInfo.InvariantCulture, out var status) || status is < 200 or > 599)
        {
            return BadRequestAsync(context, "/status/{code}: code must be a whole number from 200 to 599.\n");
        }
        context.Response.StatusCode = status;
        return Task.CompletedTask;
    }

    /// <summary>Reads "?s=N" without Request.Query, which would build a dictionary for every request.</summary>
    private static bool TryGetSize(HttpContext context, out int size)
    {
        size = DefaultSize;
        var query = context.Request.QueryString.Value.AsSpan();
        if (query.IsEmpty)
        {
            return true;
        }

        var found = false;
        foreach (var range in query[1..].Split('&'))
        {
            var pair = query[1..][range];
            if (!pair.StartsWith("s=", StringComparison.Ordinal))
            {
                continue;
            }
            if (found
                || !int.TryParse(pair[2..], NumberStyles.None, CultureInfo.InvariantCulture, out size)
                || size > Payload.MaxSize)
            {
                return false;
            }
            found = true;
        }
        return true;
    }

    private static Task BadSizeAsync(HttpContext context) =>
        BadRequestAsync(context, "?s must appear once, as a whole number of bytes from 0 to 67108864 (64 MiB).\n");

    private static Task BadRequestAsync(HttpContext context, string message)
    {
        context.Response.StatusCode = StatusCodes.Status400BadRequest;
        context.Response.ContentType = TextPlain;
        return context.Response.WriteAsync(message);
    }
}
