using LLHttp2.Frames;
using static LLHttp2.Tests.TestKit;

namespace LLHttp2.Tests;

// Frame-level rules of RFC 9113, one class per section. Every input is read under every split of its bytes
// (TestKit.ReadAllSplits), so each rule also holds for a frame that arrives in pieces over a multi-segment sequence.

/// <summary>RFC 9113 §3.4: the client connection preface.</summary>
public class Rfc9113_3_4_Preface
{
    [Fact]
    public void The_preface_is_read_and_skipped_under_every_split()
    {
        var bytes = Concat(Http2Preface.Client.ToArray(), Frame(Http2FrameType.Settings, 0, 0));
        foreach (var split in AllSplits(bytes))
        {
            var arrived = new List<byte[]>();
            bool done = false;
            foreach (var piece in split)
            {
                arrived.Add(piece);
                var buffer = Sequence(arrived);
                if (Http2Preface.TryRead(ref buffer))
                {
                    Assert.Equal(arrived.Sum(p => p.Length) - Http2Preface.Length, buffer.Length);
                    done = true;
                    break;
                }
            }

            Assert.True(done);
        }
    }

    [Theory]
    [InlineData("GET / HTTP/1.1\r\n")]
    [InlineData("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\r")]
    [InlineData("P")] // a wrong byte is refused as soon as it arrives, not after 24
    public void Anything_else_is_a_connection_PROTOCOL_ERROR(string start)
    {
        var bytes = System.Text.Encoding.ASCII.GetBytes(start);
        if (bytes.Length == 1)
        {
            bytes[0] = (byte)'X';
        }

        var buffer = new ReadOnlySequence<byte>(bytes);
        var e = Assert.Throws<Http2Exception>(() => Http2Preface.TryRead(ref buffer));
        Assert.Equal(Http2ErrorCode.ProtocolError, e.Code);
        Assert.True(e.IsConnectionError);
    }

    [Fact]
    public void The_constant_is_the_RFC_bytes()
        => Assert.Equal("505249202a20485454502f322e300d0a0d0a534d0d0a0d0a", ToHex(Http2Preface.Client));
}

/// <summary>RFC 9113 §4.1: the frame header.</summary>
public class Rfc9113_4_1_FrameFormat
{
    [Fact]
    public void Header_fields_are_read_with_the_reserved_bit_ignored()
    {
        var bytes = Hex("01 02 03 08 ff ff ff ff ff");
        var header = Http2FrameHeader.Read(bytes);
        Assert.Equal(0x010203, header.Length);
        Assert.Equal(Http2FrameType.WindowUpdate, header.Type);
        Assert.Equal((Http2FrameFlags)0xff, header.Flags);
        Assert.Equal(int.MaxValue, header.StreamId);
    }

    [Fact]
    public void Header_is_written_with_the_reserved_bit_zero()
    {
        var bytes = new byte[9];
        Http2FrameHeader.Write(bytes, 0xffffff, Http2FrameType.Data, Http2FrameFlags.EndStream, int.MaxValue);
        Assert.Equal("ffffff00017fffffff", ToHex(bytes));
        Assert.Throws<ArgumentException>(() => Http2FrameHeader.Write(bytes, 1 << 24, Http2FrameType.Data, 0, 1));
        Assert.Throws<ArgumentException>(() => Http2FrameHeader.Write(bytes, 0, Http2FrameType.Data, 0, -1));
    }

    [Fact]
    public void A_frame_with_the_reserved_bit_set_is_read_on_its_stream()
    {
        var frame = Frame(Http2FrameType.Data, 0, 3, 0x61);
        frame[5] |= 0x80;
        var result = Assert.Single(ReadAllSplits(frame));
        Assert.Equal(new FrameSnapshot(Http2FrameType.Data, 0, 3, "61", 0), result);
    }

    [Fact]
    public void Unknown_frame_types_are_skipped_and_counted()
    {
        var bytes = Concat(Frame(0xfa, 0xff, 0, 1, 2, 3), Frame(0x20, 0, 5), Frame(Http2FrameType.Ping, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8));
        var result = Assert.Single(ReadAllSplits(bytes));
        Assert.Equal(Http2FrameType.Ping, ((FrameSnapshot)result).Type);

        var reader = new Http2FrameReader();
        ReadIncrementally([bytes], reader);
        Assert.Equal(2, reader.IgnoredFrameCount);
    }

    [Fact]
    public void Unknown_flags_are_kept_but_mean_nothing()
    {
        var result = Assert.Single(ReadAllSplits(Frame(Http2FrameType.Data, (Http2FrameFlags)0xf6, 1, 0x61)));
        Assert.Equal("61", ((FrameSnapshot)result).Payload); // 0xf6 has no PADDED bit
    }

    [Fact]
    public void Several_frames_in_one_buffer_are_read_in_order()
    {
        var bytes = Concat(Frame(Http2FrameType.Data, 0, 1, 0x61), Frame(Http2FrameType.Data, Http2FrameFlags.EndStream, 3), Frame(Http2FrameType.Data, 0, 5, 0x62, 0x63));
        var results = ReadAllSplits(bytes).Cast<FrameSnapshot>().ToList();
        Assert.Equal([1, 3, 5], results.Select(r => r.StreamId));
        Assert.Equal(["61", "", "6263"], results.Select(r => r.Payload));
    }

    [Fact]
    public void An_incomplete_frame_leaves_the_buffer_untouched()
    {
        var reader = new Http2FrameReader();
        var frame = Frame(Http2FrameType.Data, 0, 1, 0x61, 0x62);
        for (int i = 0; i < frame.Length; i++)
        {
            var buffer = new ReadOnlySequence<byte>(frame, 0, i);
            Assert.False(reader.TryReadFrame(ref buffer, out _));
            Assert.Equal(i, buffer.Length);
        }
    }
}

/// <summary>RFC 9113 §4.2: frame size.</summary>
public class Rfc9113_4_2_FrameSize
{
    [Fact]
    public void A_frame_of_exactly_SETTINGS_MAX_FRAME_SIZE_is_read()
    {
        var result = Assert.Single(ReadIncrementally([Frame(Http2FrameType.Data, 0, 1, new byte[16384])]));
        Assert.Equal(32768, ((FrameSnapshot)result).Payload.Length);
    }

    [Fact]
    public void A_larger_frame_is_a_connection_FRAME_SIZE_ERROR_before_its_payload_arrives()
    {
        var reader = new Http2FrameReader();
        var buffer = new ReadOnlySequence<byte>(Frame(Http2FrameType.Data, 0, 1, new byte[16385]), 0, 9);
        var e = Assert.Throws<Http2Exception>(() => reader.TryReadFrame(ref buffer, out _));
        Assert.Equal(Http2ErrorCode.FrameSizeError, e.Code);
        Assert.True(e.IsConnectionError);
        AssertConnectionErrorAllSplits(Frame(Http2FrameType.Ping, 0, 0, new byte[16385]), Http2ErrorCode.FrameSizeError);
    }

    [Fact]
    public void The_limit_follows_the_advertised_setting()
    {
        var reader = new Http2FrameReader { MaxFrameSize = 1 << 20 };
        Assert.Single(ReadIncrementally([Frame(Http2FrameType.Data, 0, 1, new byte[100_000])], reader));
        Assert.Throws<ArgumentException>(() => reader.MaxFrameSize = 16383);
        Assert.Throws<ArgumentException>(() => reader.MaxFrameSize = 1 << 24);
        reader.MaxFrameSize = (1 << 24) - 1;
        reader.Reset();
        Assert.Equal(16384, reader.MaxFrameSize);
    }
}

/// <summary>RFC 9113 §6.1: DATA.</summary>
public class Rfc9113_6_1_Data
{
    [Fact]
    public void Data_and_END_STREAM_are_read()
    {
        var result = (FrameSnapshot)Assert.Single(ReadAllSplits(Frame(Http2FrameType.Data, Http2FrameFlags.EndStream, 1, 0x68, 0x69)));
        Assert.Equal("6869", result.Payload);
        Assert.Equal(Http2FrameFlags.EndStream, result.Flags);
    }

    [Fact]
    public void Padding_is_removed_and_counted_for_flow_control()
    {
        var bytes = Frame(Http2FrameType.Data, Http2FrameFlags.Padded, 1, 3, 0x68, 0x69, 0, 0, 0);
        Assert.Equal("6869", ((FrameSnapshot)Assert.Single(ReadAllSplits(bytes))).Payload);
        var buffer = new ReadOnlySequence<byte>(bytes);
        Assert.True(new Http2FrameReader().TryReadFrame(ref buffer, out var frame));
        Assert.Equal(6, frame.FlowControlledLength);
    }

    [Fact]
    public void Padding_of_the_whole_rest_leaves_empty_data()
        => Assert.Equal("", ((FrameSnapshot)Assert.Single(ReadAllSplits(Frame(Http2FrameType.Data, Http2FrameFlags.Padded, 1, 2, 0, 0)))).Payload);

    [Theory]
    [InlineData(3)] // the pad length equals the payload length
    [InlineData(255)]
    public void Padding_as_long_as_the_payload_is_a_connection_PROTOCOL_ERROR(byte padLength)
        => AssertConnectionErrorAllSplits(Frame(Http2FrameType.Data, Http2FrameFlags.Padded, 1, padLength, 0, 0), Http2ErrorCode.ProtocolError);

    [Fact]
    public void A_padded_frame_without_the_pad_length_byte_is_a_FRAME_SIZE_ERROR()
        => AssertConnectionErrorAllSplits(Frame(Http2FrameType.Data, Http2FrameFlags.Padded, 1), Http2ErrorCode.FrameSizeError);

    [Fact]
    public void DATA_on_stream_0_is_a_connection_PROTOCOL_ERROR()
        => AssertConnectionErrorAllSplits(Frame(Http2FrameType.Data, 0, 0, 0x61), Http2ErrorCode.ProtocolError);
}

/// <summary>RFC 9113 §6.2: HEADERS.</summary>
public class Rfc9113_6_2_Headers
{
    [Fact]
    public void The_fragment_is_read_without_padding_and_priority_fields()
    {
        var flags = Http2FrameFlags.Padded | Http2FrameFlags.Priority | Http2FrameFlags.EndHeaders | Http2FrameFlags.EndStream;
        var bytes = Frame(Http2FrameType.Headers, flags, 1, 2, 0x80, 0, 0, 3, 15, 0x82, 0x84, 0, 0);
        var result = (FrameSnapshot)Assert.Single(ReadAllSplits(bytes));
        Assert.Equal("8284", result.Payload);
        Assert.Equal(flags, result.Flags);
    }

    [Fact]
    public void Priority_fields_alone_are_skipped()
        => Assert.Equal("82", ((FrameSnapshot)Assert.Single(ReadAllSplits(Frame(Http2FrameType.Headers, Http2FrameFlags.Priority | Http2FrameFlags.EndHeaders, 1, 0, 0, 0, 0, 16, 0x82)))).Payload);

    [Fact]
    public void A_payload_shorter_than_the_priority_fields_is_a_FRAME_SIZE_ERROR()
        => AssertConnectionErrorAllSplits(Frame(Http2FrameType.Headers, Http2FrameFlags.Priority | Http2FrameFlags.EndHeaders, 1, 0, 0, 0, 0), Http2ErrorCode.FrameSizeError);

    [Fact]
    public void Padding_longer_than_the_rest_is_a_connection_PROTOCOL_ERROR()
    {
        AssertConnectionErrorAllSplits(Frame(Http2FrameType.Headers, Http2FrameFlags.Padded | Http2FrameFlags.EndHeaders, 1, 2, 0x82), Http2ErrorCode.ProtocolError);
        // with priority fields the padding may take what they leave, no more
        AssertConnectionErrorAllSplits(Frame(Http2FrameType.Headers, Http2FrameFlags.Padded | Http2FrameFlags.Priority | Http2FrameFlags.EndHeaders, 1, 1, 0, 0, 0, 0, 0), Http2ErrorCode.ProtocolError);
    }

    [Fact]
    public void HEADERS_on_stream_0_is_a_connection_PROTOCOL_ERROR()
        => AssertConnectionErrorAllSplits(Frame(Http2FrameType.Headers, Http2FrameFlags.EndHeaders, 0, 0x82), Http2ErrorCode.ProtocolError);

    [Fact]
    public void Without_END_HEADERS_only_CONTINUATION_on_the_stream_may_follow()
    {
        var headers = Frame(Http2FrameType.Headers, 0, 1, 0x82);
        AssertConnectionErrorAllSplits(Concat(headers, Frame(Http2FrameType.Data, 0, 1, 0x61)), Http2ErrorCode.ProtocolError);
        AssertConnectionErrorAllSplits(Concat(headers, Frame(Http2FrameType.Headers, Http2FrameFlags.EndHeaders, 3, 0x82)), Http2ErrorCode.ProtocolError);
        AssertConnectionErrorAllSplits(Concat(headers, Frame(Http2FrameType.Ping, 0, 0, new byte[8])), Http2ErrorCode.ProtocolError);
    }
}

/// <summary>RFC 9113 §6.3: PRIORITY (parsed and ignored).</summary>
public class Rfc9113_6_3_Priority
{
    [Fact]
    public void A_PRIORITY_frame_is_yielded_with_no_payload()
    {
        var result = (FrameSnapshot)Assert.Single(ReadAllSplits(Frame(Http2FrameType.Priority, 0, 3, 0x80, 0, 0, 1, 255)));
        Assert.Equal(new FrameSnapshot(Http2FrameType.Priority, 0, 3, "", 0), result);
    }

    [Theory]
    [InlineData(4)]
    [InlineData(6)]
    public void Another_length_is_a_stream_FRAME_SIZE_ERROR_and_reading_goes_on(int length)
    {
        var bytes = Concat(Frame(Http2FrameType.Priority, 0, 3, new byte[length]), Frame(Http2FrameType.Data, 0, 1, 0x61));
        var results = ReadAllSplits(bytes);
        Assert.Equal(new ErrorSnapshot(Http2ErrorCode.FrameSizeError, false, 3), results[0]);
        Assert.Equal(Http2FrameType.Data, ((FrameSnapshot)results[1]).Type);
    }

    [Fact]
    public void PRIORITY_on_stream_0_is_a_connection_PROTOCOL_ERROR()
        => AssertConnectionErrorAllSplits(Frame(Http2FrameType.Priority, 0, 0, 0, 0, 0, 1, 0), Http2ErrorCode.ProtocolError);
}

/// <summary>RFC 9113 §6.4: RST_STREAM.</summary>
public class Rfc9113_6_4_RstStream
{
    [Fact]
    public void The_error_code_is_read()
    {
        var buffer = new ReadOnlySequence<byte>(Frame(Http2FrameType.RstStream, 0, 1, 0, 0, 0, 8));
        Assert.True(new Http2FrameReader().TryReadFrame(ref buffer, out var frame));
        Assert.Equal(Http2ErrorCode.Cancel, frame.ErrorCode);
        Assert.Single(ReadAllSplits(Frame(Http2FrameType.RstStream, 0, 1, 0, 0, 0, 8)));
    }

    [Theory]
    [InlineData(3)]
    [InlineData(5)]
    public void Another_length_is_a_connection_FRAME_SIZE_ERROR(int length)
        => AssertConnectionErrorAllSplits(Frame(Http2FrameType.RstStream, 0, 1, new byte[length]), Http2ErrorCode.FrameSizeError);

    [Fact]
    public void RST_STREAM_on_stream_0_is_a_connection_PROTOCOL_ERROR()
        => AssertConnectionErrorAllSplits(Frame(Http2FrameType.RstStream, 0, 0, 0, 0, 0, 8), Http2ErrorCode.ProtocolError);
}

/// <summary>RFC 9113 §6.5: SETTINGS.</summary>
public class Rfc9113_6_5_Settings
{
    private static byte[] Pair(ushort id, uint value) => [(byte)(id >> 8), (byte)id, (byte)(value >> 24), (byte)(value >> 16), (byte)(value >> 8), (byte)value];

    private static List<Http2Setting> Read(byte[] bytes)
    {
        var buffer = new ReadOnlySequence<byte>(bytes);
        Assert.True(new Http2FrameReader().TryReadFrame(ref buffer, out var frame));
        var settings = frame.GetSettings();
        var pairs = new List<Http2Setting>();
        while (settings.TryRead(out var setting))
        {
            pairs.Add(setting);
        }

        return pairs;
    }

    [Fact]
    public void Pairs_are_read_in_order_and_unknown_ones_ignored_when_applied()
    {
        var bytes = Frame(Http2FrameType.Settings, 0, 0, Concat(Pair(1, 0), Pair(0xff, 12345), Pair(4, 1 << 20), Pair(5, 1 << 20), Pair(3, 100), Pair(2, 0), Pair(6, 8192)));
        Assert.Single(ReadAllSplits(bytes));
        var pairs = Read(bytes);
        Assert.Equal(7, pairs.Count);
        var settings = Http2Settings.Initial;
        foreach (var pair in pairs)
        {
            settings.Apply(pair);
        }

        Assert.Equal(0u, settings.HeaderTableSize);
        Assert.False(settings.EnablePush);
        Assert.Equal(100u, settings.MaxConcurrentStreams);
        Assert.Equal(1u << 20, settings.InitialWindowSize);
        Assert.Equal(1u << 20, settings.MaxFrameSize);
        Assert.Equal(8192u, settings.MaxHeaderListSize);
    }

    [Fact]
    public void The_initial_values_are_the_RFC_ones()
    {
        var settings = Http2Settings.Initial;
        Assert.Equal(4096u, settings.HeaderTableSize);
        Assert.True(settings.EnablePush);
        Assert.Equal(65535u, settings.InitialWindowSize);
        Assert.Equal(16384u, settings.MaxFrameSize);
    }

    [Fact]
    public void An_ACK_is_read()
        => Assert.Equal(Http2FrameFlags.Ack, ((FrameSnapshot)Assert.Single(ReadAllSplits(Frame(Http2FrameType.Settings, Http2FrameFlags.Ack, 0)))).Flags);

    [Fact]
    public void An_ACK_with_a_payload_is_a_connection_FRAME_SIZE_ERROR()
        => AssertConnectionErrorAllSplits(Frame(Http2FrameType.Settings, Http2FrameFlags.Ack, 0, Pair(1, 0)), Http2ErrorCode.FrameSizeError);

    [Theory]
    [InlineData(1)]
    [InlineData(5)]
    [InlineData(7)]
    public void A_length_not_a_multiple_of_6_is_a_connection_FRAME_SIZE_ERROR(int length)
        => AssertConnectionErrorAllSplits(Frame(Http2FrameType.Settings, 0, 0, new byte[length]), Http2ErrorCode.FrameSizeError);

    [Fact]
    public void SETTINGS_on_a_stream_is_a_connection_PROTOCOL_ERROR()
        => AssertConnectionErrorAllSplits(Frame(Http2FrameType.Settings, 0, 1, Pair(1, 0)), Http2ErrorCode.ProtocolError);

    [Theory]
    [InlineData(2, 2u, Http2ErrorCode.ProtocolError)] // ENABLE_PUSH is 0 or 1
    [InlineData(2, uint.MaxValue, Http2ErrorCode.ProtocolError)]
    [InlineData(4, 0x8000_0000u, Http2ErrorCode.FlowControlError)] // INITIAL_WINDOW_SIZE at most 2^31-1
    [InlineData(5, 16383u, Http2ErrorCode.ProtocolError)] // MAX_FRAME_SIZE 2^14..2^24-1
    [InlineData(5, 16777216u, Http2ErrorCode.ProtocolError)]
    [InlineData(5, 0u, Http2ErrorCode.ProtocolError)]
    [InlineData(8, 2u, Http2ErrorCode.ProtocolError)] // RFC 8441 §3: ENABLE_CONNECT_PROTOCOL is 0 or 1
    [InlineData(8, uint.MaxValue, Http2ErrorCode.ProtocolError)]
    public void A_value_out_of_range_is_a_connection_error(ushort id, uint value, Http2ErrorCode code)
        => AssertConnectionErrorAllSplits(Frame(Http2FrameType.Settings, 0, 0, Concat(Pair(1, 0), Pair(id, value))), code);

    [Theory]
    [InlineData(2, 0u)]
    [InlineData(2, 1u)]
    [InlineData(4, 0x7fff_ffffu)]
    [InlineData(4, 0u)]
    [InlineData(5, 16384u)]
    [InlineData(5, 16777215u)]
    [InlineData(1, uint.MaxValue)]
    [InlineData(3, 0u)]
    [InlineData(6, 0u)]
    [InlineData(8, 0u)]
    [InlineData(8, 1u)]
    [InlineData(0, uint.MaxValue)]
    [InlineData(0xffff, uint.MaxValue)]
    public void Values_at_the_bounds_are_accepted(ushort id, uint value)
        => Assert.Equal(new Http2Setting((Http2SettingId)id, value), Assert.Single(Read(Frame(Http2FrameType.Settings, 0, 0, Pair(id, value)))));
}

/// <summary>RFC 9113 §6.6: PUSH_PROMISE.</summary>
public class Rfc9113_6_6_PushPromise
{
    [Fact]
    public void The_promised_stream_and_fragment_are_read()
    {
        var bytes = Frame(Http2FrameType.PushPromise, Http2FrameFlags.Padded | Http2FrameFlags.EndHeaders, 1, 1, 0x80, 0, 0, 2, 0x82, 0);
        var result = (FrameSnapshot)Assert.Single(ReadAllSplits(bytes));
        Assert.Equal("82", result.Payload);
        Assert.Equal(2ul, result.Value); // the reserved bit is ignored
    }

    [Fact]
    public void A_payload_shorter_than_the_promised_stream_is_a_FRAME_SIZE_ERROR()
        => AssertConnectionErrorAllSplits(Frame(Http2FrameType.PushPromise, Http2FrameFlags.EndHeaders, 1, 0, 0, 2), Http2ErrorCode.FrameSizeError);

    [Fact]
    public void Padding_longer_than_the_rest_is_a_connection_PROTOCOL_ERROR()
        => AssertConnectionErrorAllSplits(Frame(Http2FrameType.PushPromise, Http2FrameFlags.Padded | Http2FrameFlags.EndHeaders, 1, 2, 0, 0, 0, 2, 0x82), Http2ErrorCode.ProtocolError);

    [Fact]
    public void PUSH_PROMISE_on_stream_0_is_a_connection_PROTOCOL_ERROR()
        => AssertConnectionErrorAllSplits(Frame(Http2FrameType.PushPromise, Http2FrameFlags.EndHeaders, 0, 0, 0, 0, 2), Http2ErrorCode.ProtocolError);

    [Fact]
    public void Without_END_HEADERS_the_field_block_stays_open()
        => AssertConnectionErrorAllSplits(Concat(Frame(Http2FrameType.PushPromise, 0, 1, 0, 0, 0, 2), Frame(Http2FrameType.Data, 0, 1)), Http2ErrorCode.ProtocolError);
}

/// <summary>RFC 9113 §6.7: PING.</summary>
public class Rfc9113_6_7_Ping
{
    [Fact]
    public void The_opaque_data_and_ACK_are_read()
    {
        var result = (FrameSnapshot)Assert.Single(ReadAllSplits(Frame(Http2FrameType.Ping, Http2FrameFlags.Ack, 0, 1, 2, 3, 4, 5, 6, 7, 8)));
        Assert.Equal(0x0102030405060708ul, result.Value);
        Assert.Equal(Http2FrameFlags.Ack, result.Flags);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(7)]
    [InlineData(9)]
    public void Another_length_is_a_connection_FRAME_SIZE_ERROR(int length)
        => AssertConnectionErrorAllSplits(Frame(Http2FrameType.Ping, 0, 0, new byte[length]), Http2ErrorCode.FrameSizeError);

    [Fact]
    public void PING_on_a_stream_is_a_connection_PROTOCOL_ERROR()
        => AssertConnectionErrorAllSplits(Frame(Http2FrameType.Ping, 0, 1, new byte[8]), Http2ErrorCode.ProtocolError);
}

/// <summary>RFC 9113 §6.8: GOAWAY.</summary>
public class Rfc9113_6_8_GoAway
{
    [Fact]
    public void Last_stream_error_code_and_debug_data_are_read()
    {
        var bytes = Frame(Http2FrameType.GoAway, 0, 0, 0x80, 0, 0, 7, 0, 0, 0, 0xb, 0x68, 0x69);
        var buffer = new ReadOnlySequence<byte>(bytes);
        Assert.True(new Http2FrameReader().TryReadFrame(ref buffer, out var frame));
        Assert.Equal(7, frame.LastStreamId); // the reserved bit is ignored
        Assert.Equal(Http2ErrorCode.EnhanceYourCalm, frame.ErrorCode);
        Assert.Equal("6869", ToHex(frame.Payload.ToArray()));
        Assert.Single(ReadAllSplits(bytes));
    }

    [Fact]
    public void An_unknown_error_code_is_kept()
    {
        var buffer = new ReadOnlySequence<byte>(Frame(Http2FrameType.GoAway, 0, 0, 0, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef));
        Assert.True(new Http2FrameReader().TryReadFrame(ref buffer, out var frame));
        Assert.Equal((Http2ErrorCode)0xdeadbeef, frame.ErrorCode);
    }

    [Fact]
    public void Less_than_8_bytes_is_a_connection_FRAME_SIZE_ERROR()
        => AssertConnectionErrorAllSplits(Frame(Http2FrameType.GoAway, 0, 0, new byte[7]), Http2ErrorCode.FrameSizeError);

    [Fact]
    public void GOAWAY_on_a_stream_is_a_connection_PROTOCOL_ERROR()
        => AssertConnectionErrorAllSplits(Frame(Http2FrameType.GoAway, 0, 1, new byte[8]), Http2ErrorCode.ProtocolError);
}

/// <summary>RFC 9113 §6.9: WINDOW_UPDATE.</summary>
public class Rfc9113_6_9_WindowUpdate
{
    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    public void The_increment_is_read_with_the_reserved_bit_ignored(int streamId)
    {
        var result = (FrameSnapshot)Assert.Single(ReadAllSplits(Frame(Http2FrameType.WindowUpdate, 0, streamId, 0xff, 0xff, 0xff, 0xff)));
        Assert.Equal((ulong)int.MaxValue, result.Value);
    }

    [Fact]
    public void A_zero_increment_on_a_stream_is_a_stream_PROTOCOL_ERROR_and_reading_goes_on()
    {
        var results = ReadAllSplits(Concat(Frame(Http2FrameType.WindowUpdate, 0, 5, 0x80, 0, 0, 0), Frame(Http2FrameType.WindowUpdate, 0, 5, 0, 0, 0, 1)));
        Assert.Equal(new ErrorSnapshot(Http2ErrorCode.ProtocolError, false, 5), results[0]);
        Assert.Equal(1ul, ((FrameSnapshot)results[1]).Value);
    }

    [Fact]
    public void A_zero_increment_on_the_connection_is_a_connection_PROTOCOL_ERROR()
        => AssertConnectionErrorAllSplits(Frame(Http2FrameType.WindowUpdate, 0, 0, 0, 0, 0, 0), Http2ErrorCode.ProtocolError);

    [Theory]
    [InlineData(0, 3)]
    [InlineData(1, 5)]
    [InlineData(1, 0)]
    public void Another_length_is_a_connection_FRAME_SIZE_ERROR(int streamId, int length)
        => AssertConnectionErrorAllSplits(Frame(Http2FrameType.WindowUpdate, 0, streamId, Enumerable.Repeat((byte)1, length).ToArray()), Http2ErrorCode.FrameSizeError);
}

/// <summary>RFC 9113 §6.10: CONTINUATION.</summary>
public class Rfc9113_6_10_Continuation
{
    [Fact]
    public void A_field_block_continues_until_END_HEADERS()
    {
        var bytes = Concat(
            Frame(Http2FrameType.Headers, Http2FrameFlags.EndStream, 1, 0x82),
            Frame(Http2FrameType.Continuation, 0, 1, 0x84),
            Frame(Http2FrameType.Continuation, Http2FrameFlags.EndHeaders, 1, 0x86),
            Frame(Http2FrameType.Data, 0, 1, 0x61));
        var results = ReadAllSplits(bytes).Cast<FrameSnapshot>().ToList();
        Assert.Equal([Http2FrameType.Headers, Http2FrameType.Continuation, Http2FrameType.Continuation, Http2FrameType.Data], results.Select(r => r.Type));
        Assert.Equal(["82", "84", "86", "61"], results.Select(r => r.Payload));
    }

    [Fact]
    public void The_reader_tells_whether_a_block_is_open()
    {
        var reader = new Http2FrameReader();
        ReadIncrementally([Frame(Http2FrameType.Headers, 0, 7, 0x82)], reader);
        Assert.True(reader.IsFieldBlockOpen);
        Assert.Equal(7, reader.OpenFieldBlockStreamId);
        ReadIncrementally([Frame(Http2FrameType.Continuation, Http2FrameFlags.EndHeaders, 7)], reader);
        Assert.False(reader.IsFieldBlockOpen);
    }

    [Fact]
    public void CONTINUATION_without_an_open_block_is_a_connection_PROTOCOL_ERROR()
    {
        AssertConnectionErrorAllSplits(Frame(Http2FrameType.Continuation, Http2FrameFlags.EndHeaders, 1, 0x82), Http2ErrorCode.ProtocolError);
        AssertConnectionErrorAllSplits(
            Concat(Frame(Http2FrameType.Headers, Http2FrameFlags.EndHeaders, 1, 0x82), Frame(Http2FrameType.Continuation, Http2FrameFlags.EndHeaders, 1, 0x82)),
            Http2ErrorCode.ProtocolError);
    }

    [Fact]
    public void CONTINUATION_on_another_stream_or_stream_0_is_a_connection_PROTOCOL_ERROR()
    {
        var headers = Frame(Http2FrameType.Headers, 0, 1, 0x82);
        AssertConnectionErrorAllSplits(Concat(headers, Frame(Http2FrameType.Continuation, Http2FrameFlags.EndHeaders, 3, 0x84)), Http2ErrorCode.ProtocolError);
        AssertConnectionErrorAllSplits(Concat(headers, Frame(Http2FrameType.Continuation, Http2FrameFlags.EndHeaders, 0, 0x84)), Http2ErrorCode.ProtocolError);
    }

    [Fact]
    public void An_unknown_frame_type_inside_a_block_is_a_connection_PROTOCOL_ERROR()
        => AssertConnectionErrorAllSplits(Concat(Frame(Http2FrameType.Headers, 0, 1, 0x82), Frame(0xfa, 0, 1)), Http2ErrorCode.ProtocolError);
}
