using System.IO.Pipelines;
using LLRP.Connections;
using Microsoft.AspNetCore.Connections;

namespace LLRP.Tests.Upgrade;

/// <summary>
/// The deadline sweep may see a tunnel the moment its connection publishes it, before the tunnel has run: the tunnel's
/// idle deadline must already be armed then, or the sweep ends it as idle before one byte has passed.
/// </summary>
public sealed class TunnelDeadlineTests
{
    // Nothing runs: the connection's pipes are only there because the tunnel takes them in its constructor.
    private static Tunnel NewTunnel()
    {
        var pipe = new Pipe();
        var context = new DefaultConnectionContext { Transport = new Pipes(pipe.Reader, pipe.Writer) };
        return new Tunnel(new ConnectionTunnelClient(context), downstream: null!, TimeSpan.FromSeconds(30), new TunnelCounters());
    }

    private sealed record Pipes(PipeReader Input, PipeWriter Output) : IDuplexPipe;

    [Fact]
    public void A_new_tunnel_is_not_idle_to_the_sweep()
    {
        var tunnel = NewTunnel();

        tunnel.Check(Environment.TickCount64, stopping: false);

        Assert.False(tunnel.HasEnded);
    }

    [Fact]
    public void A_new_tunnel_ends_when_its_idle_time_has_passed()
    {
        var tunnel = NewTunnel();

        tunnel.Check(Environment.TickCount64 + 31_000, stopping: false);

        Assert.True(tunnel.HasEnded);
    }
}
