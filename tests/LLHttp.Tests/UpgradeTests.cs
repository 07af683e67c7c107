using System.Text;
using Xunit;
using static LLHttp.Tests.TestKit;

namespace LLHttp.Tests;

/// <summary><see cref="LLHttpConnection.RequestUpgrade"/> and the switched connection's byte stream after a 101.</summary>
public class UpgradeTests
{
    [Fact]
    public async Task A_requested_upgrade_returns_the_101_and_the_bytes_after_it_first_and_the_connection_is_never_reusable()
    {
        var transport = new ScriptedTransport("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nfirst", "second");
        using var connection = Connect(transport);
        connection.StartRequest("GET"u8, "/ws"u8, "origin"u8);
        connection.RequestUpgrade("websocket"u8);
        await connection.SendRequestAsync();
        Assert.Contains("\r\nConnection: upgrade\r\nUpgrade: websocket\r\n", transport.SentText, StringComparison.Ordinal);

        var head = await connection.ReadResponseHeadAsync();
        Assert.Equal(101, head.StatusCode);
        Assert.True(connection.IsUpgraded);
        Assert.False(connection.IsReusable);

        var buffer = new byte[64];
        var read = await connection.ReadUpgradedAsync(buffer, default);
        Assert.Equal("first", Encoding.Latin1.GetString(buffer, 0, read));
        read = await connection.ReadUpgradedAsync(buffer, default);
        Assert.Equal("second", Encoding.Latin1.GetString(buffer, 0, read));
        Assert.Equal(0, await connection.ReadUpgradedAsync(buffer, default));

        await connection.WriteUpgradedAsync("tunnel bytes"u8.ToArray(), default);
        Assert.EndsWith("tunnel bytes", transport.SentText, StringComparison.Ordinal);
        connection.CloseUpgraded();
        Assert.True(transport.Disposed);
    }

    [Fact]
    public async Task A_101_to_a_request_that_did_not_ask_is_still_refused()
    {
        var transport = new ScriptedTransport("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n");
        using var connection = Connect(transport);
        connection.StartRequest("GET"u8, "/"u8, "origin"u8);
        await connection.SendRequestAsync();
        var e = await Assert.ThrowsAsync<LLHttpException>(async () => await connection.ReadResponseHeadAsync());
        Assert.Equal(LLHttpError.UnsupportedUpgrade, e.Error);
    }

    [Fact]
    public async Task A_refused_upgrade_is_an_ordinary_response_on_a_reusable_connection()
    {
        var transport = new ScriptedTransport("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno");
        using var connection = Connect(transport);
        connection.StartRequest("GET"u8, "/ws"u8, "origin"u8);
        connection.RequestUpgrade("websocket"u8);
        await connection.SendRequestAsync();
        var head = await connection.ReadResponseHeadAsync();
        Assert.Equal(200, head.StatusCode);
        var buffer = new byte[8];
        Assert.Equal(2, await connection.ReadBodyAsync(buffer));
        Assert.Equal(0, await connection.ReadBodyAsync(buffer));
        Assert.False(connection.IsUpgraded);
        Assert.True(connection.IsReusable);
        Assert.Throws<InvalidOperationException>(() => { _ = connection.ReadUpgradedAsync(buffer, default); });
    }
}
