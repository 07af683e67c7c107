using System.Text;
using LLHttp.Transports;
using Xunit;

namespace LLHttp.Tests;

internal sealed record HeadResult(int Status, int MinorVersion, string Reason, string[] Headers);

internal sealed record ExchangeResult(
    HeadResult[] Heads, ResponseBodyFraming Framing, long ContentLength, bool KeepAlive, string Body, bool Reusable);

internal static class TestKit
{
    // Tiny buffers make every receive, growth and compaction path run, as SocketsHttpHandler's debug build does.
    public static readonly LLHttpOptions Options = new() { InitialReceiveBufferSize = 8 };

    public static LLHttpConnection Connect(Transport transport, LLHttpOptions? options = null)
        => new(transport, options ?? Options, reconnect: null);

    /// <summary>The whole response, every two-way split, and byte by byte.</summary>
    public static IEnumerable<byte[][]> AllSplits(string response)
    {
        byte[] bytes = Encoding.Latin1.GetBytes(response);
        yield return [bytes];
        for (int i = 1; i < bytes.Length; i++)
        {
            yield return [bytes[..i], bytes[i..]];
        }

        yield return bytes.Select(b => new[] { b }).ToArray();
    }

    public static async Task<ExchangeResult> RunAsync(IEnumerable<byte[]> reads, string method = "GET", LLHttpOptions? options = null)
    {
        using var connection = Connect(new ScriptedTransport(reads), options);
        connection.StartRequest(Encoding.ASCII.GetBytes(method), "/"u8, "example"u8);
        await connection.SendRequestAsync();

        var heads = new List<HeadResult>();
        ResponseHead head;
        do
        {
            head = await connection.ReadResponseHeadAsync();
            heads.Add(Snapshot(head));
        }
        while (head.IsInformational);

        var body = new StringBuilder();
        byte[] buffer = new byte[7];
        for (int guard = 0; guard < 100_000; guard++)
        {
            int n = await connection.ReadBodyAsync(buffer);
            if (n == 0)
            {
                return new ExchangeResult([.. heads], head.BodyFraming, head.ContentLength, head.KeepAlive, body.ToString(), connection.IsReusable);
            }

            body.Append(Encoding.Latin1.GetString(buffer, 0, n));
        }

        throw new InvalidOperationException("Body never ended.");
    }

    public static HeadResult Snapshot(ResponseHead head)
    {
        var headers = new List<string>();
        foreach (var field in head.Headers)
        {
            headers.Add($"{Encoding.Latin1.GetString(field.Name)}={Encoding.Latin1.GetString(field.Value)}");
        }

        return new HeadResult(head.StatusCode, head.MinorVersion, Encoding.Latin1.GetString(head.ReasonPhrase), [.. headers]);
    }

    /// <summary>Runs the response under every split and asserts each gives the same result; returns it.</summary>
    public static async Task<ExchangeResult> RunAllSplitsAsync(string response, string method = "GET", LLHttpOptions? options = null)
    {
        ExchangeResult? first = null;
        foreach (var split in AllSplits(response))
        {
            var result = await RunAsync(split, method, options);
            if (first is null)
            {
                first = result;
            }
            else
            {
                AssertSame(first, result);
            }
        }

        return first!;
    }

    public static void AssertSame(ExchangeResult expected, ExchangeResult actual)
    {
        Assert.Equal(expected.Heads.Length, actual.Heads.Length);
        for (int i = 0; i < expected.Heads.Length; i++)
        {
            Assert.Equal(expected.Heads[i].Status, actual.Heads[i].Status);
            Assert.Equal(expected.Heads[i].Reason, actual.Heads[i].Reason);
            Assert.Equal(expected.Heads[i].Headers, actual.Heads[i].Headers);
        }

        Assert.Equal(expected with { Heads = [] }, actual with { Heads = [] });
    }

    /// <summary>Asserts every split of the response fails with <paramref name="error"/>.</summary>
    public static async Task AssertErrorAllSplitsAsync(string response, LLHttpError error, string method = "GET")
    {
        foreach (var split in AllSplits(response))
        {
            var e = await Assert.ThrowsAsync<LLHttpException>(() => RunAsync(split, method));
            Assert.Equal(error, e.Error);
        }
    }
}
