using System.Text;
using LLHttp.Http2;

using Xunit;

namespace LLHttp.Tests.Http2;

internal sealed record H2Result(int Status, string[] Informational, Dictionary<string, string> Headers, byte[] Body, Dictionary<string, string> Trailers);

internal static class H2Kit
{
    public static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);

    /// <summary>One whole exchange; the body written while the response is read (full duplex), in <paramref name="chunk"/> pieces.</summary>
    public static async Task<H2Result> ExchangeAsync(
        LLHttp2Connection connection, string method, string path, byte[]? body = null, string? requestTrailer = null, int chunk = 16_000, int readSize = 4096, string scheme = "http")
    {
        Assert.True(connection.TryOpenStream(out var stream));
        using (stream)
        {
            stream.StartRequest(Encoding.ASCII.GetBytes(method), Encoding.ASCII.GetBytes(scheme), "localhost"u8, Encoding.ASCII.GetBytes(path));
            stream.AddHeader("x-test"u8, "yes"u8);
            Task send = Task.CompletedTask;
            if (body is null && requestTrailer is null)
            {
                stream.SendRequest();
            }
            else
            {
                stream.StartRequestBody();
                send = SendBodyAsync(stream, body ?? [], requestTrailer, chunk);
            }

            var informational = new List<string>();
            LLHttp2ResponseHead head;
            while ((head = await stream.ReadResponseHeadAsync().AsTask().WaitAsync(Bound)).IsInformational)
            {
                informational.Add(head.StatusCode.ToString(System.Globalization.CultureInfo.InvariantCulture));
            }

            var headers = ToDictionary(head.Headers);
            var received = new MemoryStream();
            var buffer = new byte[readSize];
            int n;
            while ((n = await stream.ReadBodyAsync(buffer).AsTask().WaitAsync(Bound)) != 0)
            {
                received.Write(buffer, 0, n);
            }

            await send.WaitAsync(Bound);
            return new H2Result(head.StatusCode, [.. informational], headers, received.ToArray(), ToDictionary(stream.Trailers));
        }
    }

    public static Dictionary<string, string> ToDictionary(LLHttp2Fields fields)
    {
        var result = new Dictionary<string, string>();
        foreach (var field in fields)
        {
            result[Encoding.ASCII.GetString(field.Name)] = Encoding.ASCII.GetString(field.Value);
        }

        return result;
    }

    public static byte[] Pattern(int length)
    {
        var bytes = new byte[length];
        for (int i = 0; i < length; i++)
        {
            bytes[i] = (byte)(i * 31 + 7);
        }

        return bytes;
    }

    /// <summary>Polls <paramref name="condition"/> until it holds; fails after <see cref="Bound"/>.</summary>
    public static async Task UntilAsync(Func<bool> condition)
    {
        var deadline = DateTime.UtcNow + Bound;
        while (!condition())
        {
            Assert.True(DateTime.UtcNow < deadline, "Condition not reached in time.");
            await Task.Delay(10);
        }
    }

    private static async Task SendBodyAsync(LLHttp2Stream stream, byte[] body, string? trailer, int chunk)
    {
        for (int offset = 0; offset < body.Length; offset += chunk)
        {
            await stream.WriteBodyAsync(body.AsMemory(offset, Math.Min(chunk, body.Length - offset))).AsTask().WaitAsync(Bound);
        }

        if (trailer is not null)
        {
            stream.AddTrailer("x-req-trailer"u8, Encoding.ASCII.GetBytes(trailer));
        }

        stream.CompleteRequest();
    }
}
