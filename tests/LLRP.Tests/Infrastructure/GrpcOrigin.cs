using System.Collections.Concurrent;
using System.Security.Cryptography.X509Certificates;
using Google.Protobuf;
using Grpc.Core;
using LLRP.Tests.Grpc;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace LLRP.Tests.Infrastructure;

/// <summary>
/// A test-only HTTP/2 origin: Kestrel speaking HTTP/2 alone (h2c with prior knowledge, or TLS with ALPN h2 and the
/// suite's localhost certificate), with the gRPC service of Grpc/echo.proto and a few plain endpoints (/get, /echo,
/// /trailers). It records what the tests ask of it: the deadline each call arrived with, the calls the origin saw
/// cancelled, the TE field of each plain request. Not src/Downstream: that origin is one terminal handler for the
/// benchmarks, and gRPC needs endpoint routing.
/// </summary>
public sealed class GrpcOrigin : IAsyncDisposable
{
    private readonly WebApplication _app;

    private GrpcOrigin(WebApplication app, OriginRecord record, Uri url)
    {
        _app = app;
        Record = record;
        Url = url;
    }

    public Uri Url { get; }

    public OriginRecord Record { get; }

    public static async Task<GrpcOrigin> StartAsync(bool tls)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        var record = new OriginRecord();
        builder.Services.AddSingleton(record);
        builder.Services.AddGrpc(o => o.EnableDetailedErrors = false);
        builder.WebHost.UseKestrel(k =>
        {
            k.AddServerHeader = false;
            k.Listen(System.Net.IPAddress.Loopback, 0, listen =>
            {
                listen.Protocols = HttpProtocols.Http2;
                if (tls)
                {
                    listen.UseHttps(TestCertificates.Localhost);
                }
            });
        });
        var app = builder.Build();
        app.MapGrpcService<EchoService>();
        app.MapGet("/get", (HttpContext context) =>
        {
            record.TeFields.Enqueue(context.Request.Headers.TE.ToString());
            return Results.Bytes(Wire.Body(70_000), "application/octet-stream");
        });
        app.MapPost("/echo", async (HttpContext context) =>
        {
            using var body = new MemoryStream();
            await context.Request.Body.CopyToAsync(body);
            context.Response.ContentType = "application/octet-stream";
            await context.Response.Body.WriteAsync(body.ToArray());
        });
        // A body, then trailers, including ones a proxy must never relay as trailer fields.
        app.MapGet("/trailers", async (HttpContext context) =>
        {
            record.TeFields.Enqueue(context.Request.Headers.TE.ToString());
            context.Response.DeclareTrailer("x-checksum");
            await context.Response.WriteAsync("body before trailers");
            context.Response.AppendTrailer("x-checksum", "abc123");
            context.Response.AppendTrailer("x-second", "two");
        });
        // Resets its stream before any response (RST_STREAM): the origin ends one stream, its connection stays.
        app.MapGet("/reset", (HttpContext context) => context.Abort());
        // Echoes the body and records the request's trailer x-request-trailer ("" when none arrived).
        app.MapPost("/request-trailers", async (HttpContext context) =>
        {
            using var body = new MemoryStream();
            await context.Request.Body.CopyToAsync(body);
            record.RequestTrailers.Enqueue(context.Request.SupportsTrailers() && context.Request.CheckTrailersAvailable()
                ? context.Request.GetTrailer("x-request-trailer").ToString()
                : "");
            await context.Response.Body.WriteAsync(body.ToArray());
        });
        await app.StartAsync(Wire.Deadline(TimeSpan.FromSeconds(30)));
        var address = new Uri(app.Urls.First());
        var url = new Uri($"{(tls ? "https" : "http")}://127.0.0.1:{address.Port}");
        return new GrpcOrigin(app, record, url);
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            await _app.StopAsync(Wire.Deadline());
        }
        finally
        {
            await _app.DisposeAsync();
        }
    }
}

/// <summary>What the origin saw.</summary>
public sealed class OriginRecord
{
    /// <summary>The deadline of each Hang call as the origin received it (DateTime.MaxValue: none, no grpc-timeout).</summary>
    public ConcurrentQueue<DateTime> Deadlines { get; } = new();

    /// <summary>Completed when a Hang call has started at the origin.</summary>
    public TaskCompletionSource HangStarted { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Completed when a Hang call's cancellation token fired at the origin (its stream was reset or its deadline passed).</summary>
    public TaskCompletionSource HangCancelled { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>The x-request-trailer trailer of each /request-trailers request ("" without one).</summary>
    public ConcurrentQueue<string> RequestTrailers { get; } = new();

    /// <summary>The TE field of each plain request ("" without one).</summary>
    public ConcurrentQueue<string> TeFields { get; } = new();
}

/// <summary>The service of Grpc/echo.proto.</summary>
internal sealed class EchoService(OriginRecord record) : Echo.EchoBase
{
    public override Task<Message> Unary(Message request, ServerCallContext context) => Task.FromResult(request);

    public override async Task ServerStream(StreamRequest request, IServerStreamWriter<Message> responseStream, ServerCallContext context)
    {
        for (var i = 0; i < request.Count; i++)
        {
            await responseStream.WriteAsync(new Message { Payload = request.Payload, Sequence = i });
        }
    }

    public override async Task<Message> ClientStream(IAsyncStreamReader<Message> requestStream, ServerCallContext context)
    {
        using var joined = new MemoryStream();
        var count = 0;
        await foreach (var message in requestStream.ReadAllAsync())
        {
            if (message.Sequence != count)
            {
                throw new RpcException(new Status(StatusCode.DataLoss, $"message {count} arrived as {message.Sequence}"));
            }
            message.Payload.WriteTo(joined);
            count++;
        }
        return new Message { Payload = ByteString.CopyFrom(joined.ToArray()), Sequence = count };
    }

    public override async Task Bidi(IAsyncStreamReader<Message> requestStream, IServerStreamWriter<Message> responseStream, ServerCallContext context)
    {
        await foreach (var message in requestStream.ReadAllAsync())
        {
            await responseStream.WriteAsync(message);
        }
    }

    public override Task<Message> Fail(FailRequest request, ServerCallContext context) =>
        throw new RpcException(new Status((StatusCode)request.Code, request.Detail));

    public override async Task HeadersThenHang(Message request, IServerStreamWriter<Message> responseStream, ServerCallContext context)
    {
        await context.WriteResponseHeadersAsync(new Metadata { { "x-early", "yes" } });
        try
        {
            await Task.Delay(Timeout.Infinite, context.CancellationToken);
        }
        catch (OperationCanceledException)
        {
            record.HangCancelled.TrySetResult();
            throw;
        }
    }

    public override async Task<Message> Hang(Message request, ServerCallContext context)
    {
        record.Deadlines.Enqueue(context.Deadline);
        record.HangStarted.TrySetResult();
        try
        {
            await Task.Delay(Timeout.Infinite, context.CancellationToken);
        }
        catch (OperationCanceledException)
        {
            record.HangCancelled.TrySetResult();
            throw;
        }
        return request;
    }
}
