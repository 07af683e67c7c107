using System.Buffers;
using System.Globalization;
using System.Security.Cryptography;
using System.Text.Encodings.Web;
using System.Text.Json;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;
using Microsoft.Extensions.Primitives;

namespace Downstream;

/// <summary>
/// Every endpoint of Downstream. Any path not listed answers like "/", as aspnet/Benchmarks' catch-all does, so a
/// proxy can be driven with arbitrary paths. Every response names the replica that sent it (X-Downstream).
/// </summary>
internal sealed class DownstreamHandler(string name)
{
    private const string TextPlain = "text/plain";

    public const string ReplicaHeader = "X-Downstream";

    // /reflect returns at most this much of the body itself (base64); any size is counted and hashed.
    public const int ReflectedBodyLimit = 1024 * 1024;

    // /early without a code answers as Kestrel's default body size limit does: 413 Content Too Large.
    private const int EarlyDefaultStatus = StatusCodes.Status413PayloadTooLarge;

    private readonly StringValues _name = name;

    // 1 healthy, 0 failing: switched by POST /health/fail and POST /health/ok.
    private int _healthy = 1;

    // aspnet/Benchmarks' Downstream default: the smallest body that still exercises body forwarding.
    private const int DefaultSize = 10;

    // A few pieces, so /chunked sends several chunks and a proxy's chunk re-framing is really exercised.
    private const int ChunkedPieces = 4;

    public Task HandleAsync(HttpContext context)
    {
        context.Response.Headers[ReplicaHeader] = _name;
        var path = context.Request.Path.Value.AsSpan();
        if (path.Equals("/chunked", StringComparison.OrdinalIgnoreCase))
        {
            return ChunkedAsync(context);
        }
        if (path.Equals("/echo", StringComparison.OrdinalIgnoreCase))
        {
            return EchoAsync(context);
        }
        if (path.Equals("/json", StringComparison.OrdinalIgnoreCase))
        {
            return JsonAsync(context);
        }
        if (path.Equals("/reflect", StringComparison.OrdinalIgnoreCase))
        {
            return ReflectAsync(context);
        }
        if (path.Equals("/early", StringComparison.OrdinalIgnoreCase))
        {
            return EarlyAsync(context, EarlyDefaultStatus);
        }
        if (path.StartsWith("/early/", StringComparison.OrdinalIgnoreCase))
        {
            return TryGetStatus(path["/early/".Length..], out var early)
                ? EarlyAsync(context, early)
                : BadRequestAsync(context, "/early/{code}: code must be a whole number from 200 to 599.\n");
        }
        if (path.StartsWith("/health", StringComparison.OrdinalIgnoreCase))
        {
            return HealthAsync(context, path["/health".Length..]);
        }
        if (path.StartsWith("/status/", StringComparison.OrdinalIgnoreCase))
        {
            return Status(context, path["/status/".Length..]);
        }
        return FixedAsync(context);
    }

    /// <summary>
    /// "/" and every other path: the body with Content-Length. A request body (the POST rows of the benchmark matrix)
    /// is read to its end and discarded before the answer, as an origin that takes an upload answers once it has it.
    /// </summary>
    private static async Task FixedAsync(HttpContext context)
    {
        if (!TryGetSize(context, out var size))
        {
            await BadSizeAsync(context);
            return;
        }

        var request = context.Request;
        if (request.ContentLength > 0 || request.Headers.TransferEncoding.Count > 0)
        {
            var reader = request.BodyReader;
            while (true)
            {
                var read = await reader.ReadAsync(context.RequestAborted);
                reader.AdvanceTo(read.Buffer.End);
                if (read.IsCompleted)
                {
                    break;
                }
            }
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

    /// <summary>
    /// "/json": a small JSON answer with Content-Length, the "tiny API" of the published YARP vs nginx comparison
    /// (TechEmpower's JSON test body; serialized once, as the answer never changes).
    /// </summary>
    private static Task JsonAsync(HttpContext context)
    {
        var response = context.Response;
        response.ContentType = "application/json";
        response.ContentLength = JsonBody.Length;
        return HttpMethods.IsHead(context.Request.Method)
            ? Task.CompletedTask
            : response.BodyWriter.WriteAsync(JsonBody, context.RequestAborted).AsTask();
    }

    private static readonly ReadOnlyMemory<byte> JsonBody = "{\"message\":\"Hello, World!\"}"u8.ToArray();

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

    /// <summary>
    /// "/echo", any method: the request body verbatim, with the request's Content-Type, any size. Each piece is
    /// written as soon as it is read, so the answer streams while the body still arrives, as a streaming origin's
    /// does; a proxy that reads no response before it has sent the whole request deadlocks here once the socket
    /// buffers are full, which is the point. Writing waits for the client to read (no buffering without bound).
    /// </summary>
    private static async Task EchoAsync(HttpContext context)
    {
        LiftBodyLimits(context);
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
        var reader = request.BodyReader;
        var writer = response.BodyWriter;
        while (true)
        {
            var result = await reader.ReadAsync(context.RequestAborted);
            foreach (var segment in result.Buffer)
            {
                writer.Write(segment.Span);
            }
            reader.AdvanceTo(result.Buffer.End);
            // The flush puts the piece on the wire now, and waits while the client is not reading.
            var flushed = await writer.FlushAsync(context.RequestAborted);
            if (result.IsCompleted || flushed.IsCompleted)
            {
                return;
            }
        }
    }

    /// <summary>
    /// "/reflect", any method: the request as received, as JSON: method, target, protocol, header fields (one
    /// [name, value] pair per value, grouped by name in Kestrel's order, not wire order), trailers, the body's length
    /// and SHA-256 for any size, and the body itself (base64) up to <see cref="ReflectedBodyLimit"/>.
    /// </summary>
    private static async Task ReflectAsync(HttpContext context)
    {
        LiftBodyLimits(context);
        var request = context.Request;
        using var sha256 = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        var kept = new ArrayBufferWriter<byte>();
        long length = 0;
        var reader = request.BodyReader;
        while (true)
        {
            var result = await reader.ReadAsync(context.RequestAborted);
            foreach (var segment in result.Buffer)
            {
                sha256.AppendData(segment.Span);
                var room = ReflectedBodyLimit - kept.WrittenCount;
                kept.Write(segment.Span[..Math.Min(room, segment.Length)]);
                length += segment.Length;
            }
            reader.AdvanceTo(result.Buffer.End);
            if (result.IsCompleted)
            {
                break;
            }
        }

        var json = new ArrayBufferWriter<byte>();
        // Relaxed escaping keeps field values readable; the answer is JSON for a test, never embedded in HTML.
        using (var writer = new Utf8JsonWriter(json, new JsonWriterOptions { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping }))
        {
            writer.WriteStartObject();
            writer.WriteString("method", request.Method);
            writer.WriteString("target", context.Features.GetRequiredFeature<IHttpRequestFeature>().RawTarget);
            writer.WriteString("protocol", request.Protocol);
            WriteFields(writer, "headers", request.Headers);
            if (request.SupportsTrailers() && request.CheckTrailersAvailable())
            {
                WriteFields(writer, "trailers", context.Features.GetRequiredFeature<IHttpRequestTrailersFeature>().Trailers);
            }
            writer.WriteNumber("bodyLength", length);
            writer.WriteString("bodySha256", Convert.ToHexStringLower(sha256.GetHashAndReset()));
            writer.WriteBoolean("bodyTruncated", length > kept.WrittenCount);
            writer.WriteBase64String("body", kept.WrittenSpan);
            writer.WriteEndObject();
        }
        var response = context.Response;
        response.ContentType = "application/json";
        response.ContentLength = json.WrittenCount;
        await response.BodyWriter.WriteAsync(json.WrittenMemory, context.RequestAborted);
    }

    private static void WriteFields(Utf8JsonWriter writer, string property, IHeaderDictionary fields)
    {
        writer.WriteStartArray(property);
        foreach (var (fieldName, values) in fields)
        {
            foreach (var value in values)
            {
                writer.WriteStartArray();
                writer.WriteStringValue(fieldName);
                writer.WriteStringValue(value);
                writer.WriteEndArray();
            }
        }
        writer.WriteEndArray();
    }

    /// <summary>
    /// "/early" (413) and "/early/{code}": that status and a short body, sent without reading the request body, as
    /// an origin refusing an upload does. What becomes of the unread body afterwards is Kestrel's business, as it
    /// would be for any ASP.NET Core origin.
    /// </summary>
    private static Task EarlyAsync(HttpContext context, int status)
    {
        var response = context.Response;
        response.StatusCode = status;
        // 204 and 304 have no content (RFC 9110 §15.3.5, §15.4.5).
        if (status is StatusCodes.Status204NoContent or StatusCodes.Status304NotModified)
        {
            return Task.CompletedTask;
        }
        response.ContentType = TextPlain;
        return response.WriteAsync(string.Create(CultureInfo.InvariantCulture, $"{status}: answered before reading the request body\n"));
    }

    /// <summary>
    /// "/health": 200 "healthy" or 503 "failing"; POST "/health/fail" makes it fail and POST "/health/ok" makes it
    /// healthy again, so an active health check can be tested against a replica that is up but unhealthy.
    /// </summary>
    private Task HealthAsync(HttpContext context, ReadOnlySpan<char> rest)
    {
        var response = context.Response;
        if (rest.IsEmpty)
        {
            var healthy = Volatile.Read(ref _healthy) == 1;
            response.StatusCode = healthy ? StatusCodes.Status200OK : StatusCodes.Status503ServiceUnavailable;
            response.ContentType = TextPlain;
            return response.WriteAsync(healthy ? "healthy\n" : "failing\n");
        }
        var set = rest.Equals("/ok", StringComparison.OrdinalIgnoreCase) ? 1 : rest.Equals("/fail", StringComparison.OrdinalIgnoreCase) ? 0 : -1;
        if (set < 0)
        {
            return FixedAsync(context);
        }
        if (!HttpMethods.IsPost(context.Request.Method))
        {
            response.StatusCode = StatusCodes.Status405MethodNotAllowed;
            response.Headers.Allow = "POST";
            return Task.CompletedTask;
        }
        Volatile.Write(ref _healthy, set);
        response.ContentType = TextPlain;
        return response.WriteAsync(set == 1 ? "healthy from now on\n" : "failing from now on\n");
    }

    /// <summary>"/status/{code}": that status, no body.</summary>
    private static Task Status(HttpContext context, ReadOnlySpan<char> code)
    {
        if (!TryGetStatus(code, out var status))
        {
            return BadRequestAsync(context, "/status/{code}: code must be a whole number from 200 to 599.\n");
        }
        context.Response.StatusCode = status;
        return Task.CompletedTask;
    }

    // 1xx cannot be a final status, and codes above 599 are not HTTP/1.1 status codes (RFC 9110 §15).
    private static bool TryGetStatus(ReadOnlySpan<char> code, out int status) =>
        int.TryParse(code, NumberStyles.None, CultureInfo.InvariantCulture, out status) && status is >= 200 and <= 599;

    /// <summary>
    /// /echo and /reflect take any size at any pace: Kestrel's 30 MB body limit would refuse a large upload, and its
    /// minimum data rates (240 B/s after 5 s) would cut a transfer a test holds still on purpose.
    /// </summary>
    private static void LiftBodyLimits(HttpContext context)
    {
        context.Features.GetRequiredFeature<IHttpMaxRequestBodySizeFeature>().MaxRequestBodySize = null;
        if (context.Features.Get<IHttpMinRequestBodyDataRateFeature>() is { } requestRate)
        {
            requestRate.MinDataRate = null;
        }
        if (context.Features.Get<IHttpMinResponseDataRateFeature>() is { } responseRate)
        {
            responseRate.MinDataRate = null;
        }
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
