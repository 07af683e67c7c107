using System.Buffers.Binary;
using System.Text;
using LLHttp2.Connection;
using LLHttp2.Frames;
using static LLHttp2.Tests.TestKit;

namespace LLHttp2.Tests;

/// <summary>Records what the client connection tells the application, one line per event.</summary>
internal sealed class ClientRecordingHandler : IHttp2ClientConnectionHandler
{
    public List<string> Events { get; } = [];

    public void OnResponseField(int streamId, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, bool neverIndexed)
        => Events.Add($"field {streamId} {Encoding.Latin1.GetString(name)}: {Encoding.Latin1.GetString(value)}");

    public void OnResponseHeaders(int streamId, int status, bool endStream)
        => Events.Add($"{(status == 0 ? "trailers" : "headers")} {streamId}{(status == 0 ? "" : $" {status}")}{(endStream ? " end" : "")}");

    public void OnData(int streamId, ReadOnlySequence<byte> data, bool endStream)
        => Events.Add($"data {streamId} {Encoding.Latin1.GetString(data.ToArray())}{(endStream ? " end" : "")}");

    public void OnStreamReset(int streamId, Http2ErrorCode code, bool byPeer)
        => Events.Add($"reset {streamId} {code}{(byPeer ? " by peer" : "")}");

    public void OnGoAway(int lastStreamId, Http2ErrorCode code) => Events.Add($"goaway {lastStreamId} {code}");

    public void OnPingAck(ulong data) => Events.Add($"ping ack {data}");
}

/// <summary>A scripted server's bytes for a client connection test, and the client fed them at every split point.</summary>
internal static class ClientKit
{
    /// <summary>The client's SETTINGS with the default options, as every client connection writes it after the preface.</summary>
    public const string ClientSettings = "SETTINGS 2=0 4=65535 6=32768";

    /// <summary>The server's preface: an empty SETTINGS frame.</summary>
    public static byte[] ServerPreface => Frame(Http2FrameType.Settings, 0, 0);

    public static byte[] Settings(params (Http2SettingId Id, uint Value)[] pairs)
    {
        var payload = new byte[6 * pairs.Length];
        for (int i = 0; i < pairs.Length; i++)
        {
            BinaryPrimitives.WriteUInt16BigEndian(payload.AsSpan(6 * i), (ushort)pairs[i].Id);
            BinaryPrimitives.WriteUInt32BigEndian(payload.AsSpan((6 * i) + 2), pairs[i].Value);
        }

        return Frame(Http2FrameType.Settings, 0, 0, payload);
    }

    public static byte[] Response(int streamId, bool endStream, params (string Name, string Value)[] fields)
        => Frame(Http2FrameType.Headers, Http2FrameFlags.EndHeaders | (endStream ? Http2FrameFlags.EndStream : 0), streamId, ConnectionKit.Block(fields));

    public static byte[] Ok(int streamId, bool endStream = false, params (string Name, string Value)[] extra)
        => Response(streamId, endStream, [(":status", "200"), .. extra]);

    public static byte[] GoAway(int lastStreamId, Http2ErrorCode code)
        => Frame(Http2FrameType.GoAway, 0, 0, [(byte)(lastStreamId >> 24), (byte)(lastStreamId >> 16), (byte)(lastStreamId >> 8), (byte)lastStreamId, 0, 0, 0, (byte)code]);

    /// <summary>Opens a stream and sends a GET for "/" to a.example (END_STREAM unless a body follows).</summary>
    public static int Get(Http2ClientConnection client, IBufferWriter<byte> output, bool endStream = true, string method = "GET")
    {
        Assert.True(client.TryOpenStream(out int id));
        var fields = client.BeginRequestHeaders(id, Encoding.Latin1.GetBytes(method), "https"u8, "a.example"u8, "/"u8);
        fields.Add("accept"u8, "*/*"u8);
        client.SendRequestHeaders(ref fields, endStream, output);
        return id;
    }

    public sealed record Outcome(List<string> Frames, List<string> Events, Http2ConnectionState State, int ActiveStreams)
    {
        public override string ToString() => $"{State} {ActiveStreams}\n{string.Join("\n", Frames)}\n--\n{string.Join("\n", Events)}";
    }

    /// <summary>
    /// A client that ran <paramref name="before"/> (opening streams, sending requests), then was fed the server's
    /// bytes as the pieces arrive (one <see cref="Http2Connection.Process"/> per arrival, the unread bytes kept as a
    /// multi-segment sequence), then ran <paramref name="after"/>. The frames are the client's after its preface.
    /// </summary>
    public static Outcome Run(byte[][] pieces, Http2ClientConnectionOptions? options = null, Action<Http2ClientConnection, IBufferWriter<byte>>? before = null, Action<Http2ClientConnection, IBufferWriter<byte>>? after = null)
    {
        var handler = new ClientRecordingHandler();
        var client = new Http2ClientConnection(handler, options);
        var output = new ArrayBufferWriter<byte>();
        client.Start(output);
        before?.Invoke(client, output);
        ConnectionKit.Feed(client, pieces, output);
        after?.Invoke(client, output);
        var written = output.WrittenSpan.ToArray();
        Assert.True(written.AsSpan().StartsWith(Http2Preface.Client));
        return new Outcome(ConnectionKit.Frames(written[Http2Preface.Length..]), handler.Events, client.State, client.ActiveStreams);
    }

    /// <summary>Every split of the server's bytes must give the same frames, events and state as the whole.</summary>
    public static Outcome RunAllSplits(byte[] input, Http2ClientConnectionOptions? options = null, Action<Http2ClientConnection, IBufferWriter<byte>>? before = null, Action<Http2ClientConnection, IBufferWriter<byte>>? after = null)
        => ConnectionKit.SameForAllSplits(input, split => Run(split, options, before, after));
}
