using LLRP.Balancing;
using LLRP.Buffers;
using LLRP.Forwarding;
using Microsoft.Extensions.Configuration;

namespace LLRP.Tests;

/// <summary>
/// The llhttp variant's downstream options reach LLHttp: each one lands in the options every downstream connection is
/// opened with. LLHttp's own tests show those reach the socket (ReceiveBufferTests, on both engines) and the parser.
/// </summary>
public sealed class LLHttpClientOptionsTests
{
    [Fact]
    public void Downstream_options_become_the_options_of_every_downstream_connection()
    {
        var options = Options(new()
        {
            ["downstreamReceiveBuffer"] = "262144",
            ["downstreamConnectTimeout"] = "7",
            ["downstreamIdleTimeout"] = "11",
            ["maxResponseHeadersTotalSize"] = "12345",
            ["maxRequestLineSize"] = "1000",
            ["maxRequestHeadersTotalSize"] = "3000",
        });
        using var downstreams = new DownstreamSet(options.Balancing);
        using var factory = new LLHttpForwarderFactory(options, downstreams);

        var client = factory.ClientOptions;

        Assert.Equal(262144, client.ReceiveBufferSize);
        Assert.Equal(TimeSpan.FromSeconds(7), client.ConnectTimeout);
        Assert.Equal(TimeSpan.FromSeconds(11), client.PooledConnectionIdleTimeout);
        Assert.Equal(12345, client.MaxResponseHeadersLength);
        // The forwarded head: the client's request line and fields, plus room for Host, Via and X-Forwarded-For.
        Assert.True(client.MaxRequestHeadLength >= 1000 + 3000, $"MaxRequestHeadLength {client.MaxRequestHeadLength}");
        Assert.Equal(options.SocketEngine, client.SocketEngine);
        Assert.Same(ProxyBuffers.Bytes, client.BufferPool);
    }

    [Fact]
    public void By_default_downstream_connections_keep_the_kernels_receive_buffer()
    {
        var options = Options([]);
        using var downstreams = new DownstreamSet(options.Balancing);
        using var factory = new LLHttpForwarderFactory(options, downstreams);

        Assert.Equal(0, factory.ClientOptions.ReceiveBufferSize);
    }

    private static ProxyOptions Options(Dictionary<string, string?> settings)
    {
        settings["downstream"] = "http://127.0.0.1:9";
        return CommandLine.Read(new ConfigurationBuilder().AddInMemoryCollection(settings).Build());
    }
}
