using System.Text;

namespace LLRP.Fuzz.Strict;

/// <summary>One request as <see cref="StrictRequestParser"/> framed it; <see cref="Length"/> counts every byte it took.</summary>
public sealed record StrictRequest(string Method, string Target, string Version, IReadOnlyList<(string Name, string Value)> Fields,
    byte[] Body, int Length);

/// <summary>
/// An RFC 9112 request parser written for the differential target, sharing nothing with the proxy's: it takes only
/// what the grammar allows, with no leniency (no bare LF or CR, no obs-fold, no whitespace before a colon, no CTL in a
/// value, one Content-Length of digits only, Transfer-Encoding exactly "chunked" and never with Content-Length or in
/// HTTP/1.0, the chunked grammar of §7.1 with its extensions and trailers). It answers null for anything invalid or
/// incomplete. Small and slow on purpose: it must be easy to check by reading.
/// </summary>
public static class StrictRequestParser
{
    // RFC 9110 §5.6.2: tchar.
    private const string TcharPunctuation = "!#$%&'*+-.^_`|~";

    public static StrictRequest? Parse(ReadOnlySpan<byte> data)
    {
        var pos = 0;
        // RFC 9112 §2.2: a server SHOULD ignore at least one empty line (CRLF) received before the request-line.
        while (pos + 1 < data.Length && data[pos] == '\r' && data[pos + 1] == '\n')
        {
            pos += 2;
        }
        if (!TryLine(data, ref pos, out var requestLine))
        {
            return null;
        }
        // RFC 9112 §3: request-line = method SP request-target SP HTTP-version.
        var parts = requestLine.Split(' ');
        if (parts.Length != 3 || !IsToken(parts[0]) || parts[1].Length == 0 || !parts[1].All(c => c is > ' ' and < (char)0x7F)
            || parts[2] is not ("HTTP/1.1" or "HTTP/1.0"))
        {
            return null;
        }
        var (method, target, version) = (parts[0], parts[1], parts[2]);

        var fields = new List<(string, string)>();
        while (true)
        {
            if (!TryLine(data, ref pos, out var line))
            {
                return null;
            }
            if (line.Length == 0)
            {
                break;
            }
            if (ParseField(line) is not { } field)
            {
                return null;
            }
            fields.Add(field);
        }

        var contentLengths = fields.Where(f => f.Item1.Equals("Content-Length", StringComparison.OrdinalIgnoreCase)).ToList();
        var transferEncodings = fields.Where(f => f.Item1.Equals("Transfer-Encoding", StringComparison.OrdinalIgnoreCase)).ToList();
        var hosts = fields.Count(f => f.Item1.Equals("Host", StringComparison.OrdinalIgnoreCase));
        // RFC 9112 §3.2: exactly one Host in HTTP/1.1, at most one otherwise.
        if (hosts > 1 || (hosts == 0 && version == "HTTP/1.1"))
        {
            return null;
        }

        byte[] body;
        if (transferEncodings.Count > 0)
        {
            // RFC 9112 §6.1: no Transfer-Encoding in HTTP/1.0, never beside Content-Length; the strict reading takes the
            // one coding a proxy can re-frame.
            var codings = string.Join(",", transferEncodings.Select(f => f.Item2)).Split(',').Select(c => c.Trim(' ', '\t')).ToList();
            if (version == "HTTP/1.0" || contentLengths.Count > 0 || codings.Count != 1 || !codings[0].Equals("chunked", StringComparison.OrdinalIgnoreCase))
            {
                return null;
            }
            if (ParseChunked(data, ref pos) is not { } chunked)
            {
                return null;
            }
            body = chunked;
        }
        else if (contentLengths.Count > 0)
        {
            // RFC 9110 §8.6: Content-Length = 1*DIGIT; one field, no list.
            var value = contentLengths[0].Item2;
            if (contentLengths.Count != 1 || value.Length is 0 or > 15 || !value.All(char.IsAsciiDigit))
            {
                return null;
            }
            var length = long.Parse(value, System.Globalization.CultureInfo.InvariantCulture);
            if (data.Length - pos < length)
            {
                return null;
            }
            body = data.Slice(pos, (int)length).ToArray();
            pos += (int)length;
        }
        else
        {
            body = [];
        }
        return new StrictRequest(method, target, version, fields, body, pos);
    }

    // RFC 9112 §5: field-line = field-name ":" OWS field-value OWS, with no whitespace before the colon and no obs-fold.
    private static (string, string)? ParseField(string line)
    {
        var colon = line.IndexOf(':', StringComparison.Ordinal);
        if (colon <= 0 || !IsToken(line[..colon]))
        {
            return null;
        }
        var value = line[(colon + 1)..].Trim(' ', '\t');
        // RFC 9110 §5.5: field-value = *field-content of VCHAR, obs-text, SP and HTAB inside.
        if (!value.All(c => c == ' ' || c == '\t' || (c > ' ' && c != (char)0x7F)))
        {
            return null;
        }
        return (line[..colon], value);
    }

    // RFC 9112 §7.1: chunked-body = *chunk last-chunk trailer-section CRLF.
    private static byte[]? ParseChunked(ReadOnlySpan<byte> data, ref int pos)
    {
        var body = new MemoryStream();
        while (true)
        {
            if (!TryLine(data, ref pos, out var line))
            {
                return null;
            }
            var digits = 0;
            while (digits < line.Length && Uri.IsHexDigit(line[digits]))
            {
                digits++;
            }
            if (digits == 0 || !IsChunkExtensions(line[digits..]))
            {
                return null;
            }
            var hex = line[..digits].TrimStart('0');
            if (hex.Length > 15)
            {
                return null;
            }
            var size = hex.Length == 0 ? 0 : long.Parse(hex, System.Globalization.NumberStyles.HexNumber, System.Globalization.CultureInfo.InvariantCulture);
            if (size == 0)
            {
                break;
            }
            if (data.Length - pos < size + 2 || data[pos + (int)size] != '\r' || data[pos + (int)size + 1] != '\n')
            {
                return null;
            }
            body.Write(data.Slice(pos, (int)size));
            pos += (int)size + 2;
        }
        // RFC 9112 §7.1.2: trailer-section = *( field-line CRLF ).
        while (true)
        {
            if (!TryLine(data, ref pos, out var trailer))
            {
                return null;
            }
            if (trailer.Length == 0)
            {
                return body.ToArray();
            }
            if (ParseField(trailer) is null)
            {
                return null;
            }
        }
    }

    // RFC 9112 §7.1.1: chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] ), val = token / quoted-string.
    private static bool IsChunkExtensions(string text)
    {
        var i = 0;
        while (true)
        {
            SkipWhitespace(text, ref i);
            if (i == text.Length)
            {
                // Whitespace may only precede ';' (BWS belongs to an extension): none may end the line.
                return text.Length == 0 || text[^1] is not (' ' or '\t');
            }
            if (text[i++] != ';')
            {
                return false;
            }
            SkipWhitespace(text, ref i);
            if (ReadToken(text, ref i) == 0)
            {
                return false;
            }
            var afterName = i;
            SkipWhitespace(text, ref i);
            if (i < text.Length && text[i] == '=')
            {
                i++;
                SkipWhitespace(text, ref i);
                if (i < text.Length && text[i] == '"')
                {
                    if (!ReadQuoted(text, ref i))
                    {
                        return false;
                    }
                }
                else if (ReadToken(text, ref i) == 0)
                {
                    return false;
                }
            }
            else
            {
                i = afterName;
            }
        }
    }

    // RFC 9110 §5.6.4: quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE.
    private static bool ReadQuoted(string text, ref int i)
    {
        i++;
        while (i < text.Length)
        {
            var c = text[i++];
            if (c == '"')
            {
                return true;
            }
            if (c == '\\')
            {
                if (i == text.Length || !(text[i] == '\t' || (text[i] >= ' ' && text[i] != (char)0x7F)))
                {
                    return false;
                }
                i++;
            }
            else if (!(c == '\t' || (c >= ' ' && c != (char)0x7F)))
            {
                return false;
            }
        }
        return false;
    }

    private static int ReadToken(string text, ref int i)
    {
        var start = i;
        while (i < text.Length && IsTchar(text[i]))
        {
            i++;
        }
        return i - start;
    }

    private static void SkipWhitespace(string text, ref int i)
    {
        while (i < text.Length && text[i] is ' ' or '\t')
        {
            i++;
        }
    }

    /// <summary>A line ended by CRLF, without CR or LF inside (RFC 9112 §2.2: no bare CR, and here no bare LF either).</summary>
    private static bool TryLine(ReadOnlySpan<byte> data, ref int pos, out string line)
    {
        line = "";
        var rest = data[pos..];
        var end = rest.IndexOfAny((byte)'\r', (byte)'\n');
        if (end < 0 || rest[end] != '\r' || end + 1 >= rest.Length || rest[end + 1] != '\n')
        {
            return false;
        }
        line = Encoding.Latin1.GetString(rest[..end]);
        pos += end + 2;
        return true;
    }

    private static bool IsToken(string text) => text.Length > 0 && text.All(IsTchar);

    private static bool IsTchar(char c) => char.IsAsciiLetterOrDigit(c) || TcharPunctuation.Contains(c, StringComparison.Ordinal);
}
