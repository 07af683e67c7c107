namespace LLRP.Http1;

/// <summary>One field line of the request head, stored as ranges into <see cref="RequestHead"/>'s buffer.</summary>
internal struct HeaderEntry
{
    public int NameStart;
    public int NameLength;
    public int ValueStart;
    public int ValueLength;
    public HeaderKind Kind;
}
