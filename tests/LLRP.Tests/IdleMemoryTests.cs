using System.Buffers;
using System.Text;
using LLRP.Http1;
using Xunit;

namespace LLRP.Tests;

/// <summary>An idle client connection holds no request buffers: they are rented for a request and given back after it.</summary>
public sealed class IdleMemoryTests
{
    [Fact]
    public void Request_head_holds_buffers_only_from_a_request_line_until_reset()
    {
        var head = new RequestHead(new ProxyOptions { Downstreams = [new Uri("http://127.0.0.1:1")] });
        Assert.False(head.HoldsBuffers);
        for (var round = 0; round < 2; round++)
        {
            var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>("GET /a?b HTTP/1.1\r\nHost: h\r\nX-One: 1\r\n\r\n"u8.ToArray()));
            Assert.True(KestrelParser.ParseRequestLine(head, ref reader));
            Assert.True(KestrelParser.ParseHeaders(head, ref reader));
            Assert.True(head.HoldsBuffers);
            Assert.Equal("/a?b", Encoding.ASCII.GetString(head.Target));
            Assert.Equal(2, head.HeaderCount);
            Assert.Equal("X-One", Encoding.ASCII.GetString(head.Name(1)));

            head.Reset();
            Assert.False(head.HoldsBuffers);
        }
    }
}
