namespace LLHttp.Syntax;

/// <summary>How a recipient treats more than one Content-Length value (RFC 9110 §8.6).</summary>
public enum ContentLengthRepeats : byte
{
    /// <summary>
    /// Exactly one field holding exactly 1*DIGIT; a list or a second field is refused even when the values agree. A proxy
    /// receiving a request takes this reading (as nginx does): the next hop may not collapse the list, and the
    /// desync-guardian corpus classifies such requests as Severe.
    /// </summary>
    Refused,

    /// <summary>
    /// RFC 9110 §8.6: a recipient MAY accept a list of identical values, or repeated fields with the same value, as that
    /// one value. A client reading a response takes it: the response ends where every value agrees it ends.
    /// </summary>
    IdenticalAccepted,
}

public enum ContentLengthStatus : byte
{
    Valid,
    /// <summary>Not 1*DIGIT (empty, sign, whitespace inside, other bytes) or larger than a long.</summary>
    Invalid,
    /// <summary>A second value: different from the first, or any second value under <see cref="ContentLengthRepeats.Refused"/>.</summary>
    Conflicting,
}

/// <summary>Content-Length = 1*DIGIT (RFC 9110 §8.6); an invalid one is an unrecoverable framing error (RFC 9112 §6.3 rule 5).</summary>
public static class ContentLengthSyntax
{
    /// <summary>Exactly 1*DIGIT, without overflow; -1 otherwise.</summary>
    public static long Parse(ReadOnlySpan<byte> value)
    {
        if (value.IsEmpty)
        {
            return -1;
        }

        long n = 0;
        foreach (byte b in value)
        {
            uint digit = (uint)(b - '0');
            if (digit > 9 || n > (long.MaxValue - digit) / 10)
            {
                return -1;
            }

            n = (n * 10) + digit;
        }

        return n;
    }

    /// <summary>
    /// Adds one Content-Length field to what earlier fields of the same head declared. <paramref name="length"/> is -1
    /// before the first field and holds the declared length after a <see cref="ContentLengthStatus.Valid"/> answer.
    /// </summary>
    public static ContentLengthStatus Accumulate(ReadOnlySpan<byte> value, ContentLengthRepeats repeats, ref long length)
    {
        if (repeats == ContentLengthRepeats.Refused)
        {
            long parsed = Parse(value);
            if (parsed < 0)
            {
                return ContentLengthStatus.Invalid;
            }

            if (length >= 0)
            {
                return ContentLengthStatus.Conflicting;
            }

            length = parsed;
            return ContentLengthStatus.Valid;
        }

        var elements = new ListTokenizer(value);
        bool any = false;
        while (elements.TryNext(out var element))
        {
            any = true;
            long parsed = Parse(element);
            if (parsed < 0)
            {
                return ContentLengthStatus.Invalid;
            }

            if (length >= 0 && parsed != length)
            {
                return ContentLengthStatus.Conflicting;
            }

            length = parsed;
        }

        return any ? ContentLengthStatus.Valid : ContentLengthStatus.Invalid;
    }
}
