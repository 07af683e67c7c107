namespace LLHttp2.Frames;

/// <summary>The settings of RFC 9113 §6.5.2 and RFC 8441 §3. Any other identifier is ignored on receipt.</summary>
public enum Http2SettingId : ushort
{
    HeaderTableSize = 0x1,
    EnablePush = 0x2,
    MaxConcurrentStreams = 0x3,
    InitialWindowSize = 0x4,
    MaxFrameSize = 0x5,
    MaxHeaderListSize = 0x6,
    /// <summary>RFC 8441 §3: the sender accepts extended CONNECT (a request with :protocol).</summary>
    EnableConnectProtocol = 0x8,
}

/// <summary>One identifier/value pair of a SETTINGS frame.</summary>
public readonly record struct Http2Setting(Http2SettingId Id, uint Value);

/// <summary>
/// The settings one endpoint has in force, starting from RFC 9113 §6.5.2's initial values. <see cref="Apply"/> takes the
/// pairs of a SETTINGS frame the reader already validated.
/// </summary>
public struct Http2Settings
{
    /// <summary>RFC 9113 §6.5.2: the initial SETTINGS_HEADER_TABLE_SIZE.</summary>
    public const uint InitialHeaderTableSize = 4096;

    /// <summary>RFC 9113 §6.9.2: the initial SETTINGS_INITIAL_WINDOW_SIZE, 2^16-1.</summary>
    public const uint InitialInitialWindowSize = 65535;

    /// <summary>RFC 9113 §6.5.2: the initial and smallest SETTINGS_MAX_FRAME_SIZE, 2^14.</summary>
    public const uint InitialMaxFrameSize = 16384;

    /// <summary>RFC 9113 §6.5.2: the largest SETTINGS_MAX_FRAME_SIZE, 2^24-1.</summary>
    public const uint MaxMaxFrameSize = Http2FrameHeader.MaxLength;

    /// <summary>RFC 9113 §6.9.1: the largest flow-control window, 2^31-1.</summary>
    public const uint MaxWindowSize = int.MaxValue;

    public static Http2Settings Initial => new()
    {
        HeaderTableSize = InitialHeaderTableSize,
        EnablePush = true,
        MaxConcurrentStreams = uint.MaxValue, // RFC 9113 §6.5.2: initially unlimited
        InitialWindowSize = InitialInitialWindowSize,
        MaxFrameSize = InitialMaxFrameSize,
        MaxHeaderListSize = uint.MaxValue, // RFC 9113 §6.5.2: initially unlimited
    };

    public uint HeaderTableSize { get; set; }

    public bool EnablePush { get; set; }

    public uint MaxConcurrentStreams { get; set; }

    public uint InitialWindowSize { get; set; }

    public uint MaxFrameSize { get; set; }

    public uint MaxHeaderListSize { get; set; }

    /// <summary>RFC 8441 §3: the peer accepts extended CONNECT; initially not.</summary>
    public bool EnableConnectProtocol { get; set; }

    /// <summary>Applies one validated pair; unknown identifiers are ignored (RFC 9113 §6.5.2).</summary>
    public void Apply(Http2Setting setting)
    {
        switch (setting.Id)
        {
            case Http2SettingId.HeaderTableSize: HeaderTableSize = setting.Value; break;
            case Http2SettingId.EnablePush: EnablePush = setting.Value == 1; break;
            case Http2SettingId.MaxConcurrentStreams: MaxConcurrentStreams = setting.Value; break;
            case Http2SettingId.InitialWindowSize: InitialWindowSize = setting.Value; break;
            case Http2SettingId.MaxFrameSize: MaxFrameSize = setting.Value; break;
            case Http2SettingId.MaxHeaderListSize: MaxHeaderListSize = setting.Value; break;
            case Http2SettingId.EnableConnectProtocol: EnableConnectProtocol = setting.Value == 1; break;
        }
    }

    /// <summary>RFC 9113 §6.5.2's value checks, each a connection error; unknown identifiers pass.</summary>
    internal static void Validate(Http2SettingId id, uint value)
    {
        switch (id)
        {
            case Http2SettingId.EnablePush when value > 1:
                Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, "SETTINGS_ENABLE_PUSH is neither 0 nor 1");
                break;
            case Http2SettingId.EnableConnectProtocol when value > 1:
                // RFC 8441 §3: any other value is a connection error PROTOCOL_ERROR.
                Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, "SETTINGS_ENABLE_CONNECT_PROTOCOL is neither 0 nor 1");
                break;
            case Http2SettingId.InitialWindowSize when value > MaxWindowSize:
                Http2Throw.ConnectionError(Http2ErrorCode.FlowControlError, "SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1");
                break;
            case Http2SettingId.MaxFrameSize when value is < InitialMaxFrameSize or > MaxMaxFrameSize:
                Http2Throw.ConnectionError(Http2ErrorCode.ProtocolError, "SETTINGS_MAX_FRAME_SIZE outside 2^14..2^24-1");
                break;
        }
    }
}

/// <summary>The pairs of a validated SETTINGS payload, read in order without copying the payload.</summary>
public struct Http2SettingsReader
{
    private ReadOnlySequence<byte> _remaining;

    internal Http2SettingsReader(ReadOnlySequence<byte> payload) => _remaining = payload;

    /// <summary>The next pair, unknown identifiers included (the caller's <see cref="Http2Settings.Apply"/> ignores them).</summary>
    public bool TryRead(out Http2Setting setting)
    {
        if (_remaining.Length < 6)
        {
            setting = default;
            return false;
        }

        Span<byte> pair = stackalloc byte[6];
        _remaining.Slice(0, 6).CopyTo(pair);
        _remaining = _remaining.Slice(6);
        setting = new Http2Setting((Http2SettingId)BinaryPrimitives.ReadUInt16BigEndian(pair), BinaryPrimitives.ReadUInt32BigEndian(pair[2..]));
        return true;
    }
}
