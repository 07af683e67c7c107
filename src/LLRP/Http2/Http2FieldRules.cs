using System.Text;
using LLRP.Errors;
using LLRP.Http1;

namespace LLRP.Http2;

/// <summary>
/// The rules an HTTP/2 request's fields are held to beyond those of the HTTP/1.1 request it is forwarded as
/// (<see cref="RequestHead"/>): both HTTP/2 front ends, the proxy's own and Kestrel's, check each field here before
/// <see cref="RequestHead.AddField"/>.
/// </summary>
internal static class Http2FieldRules
{
    /// <summary>
    /// RFC 9113 §8.2.2: a request with a connection-specific field (Connection, Keep-Alive, Proxy-Connection,
    /// Transfer-Encoding, Upgrade) or a TE other than "trailers" is malformed. Kestrel refuses them too; the proxy holds
    /// the rule itself, since an HTTP/1.1 downstream would act on Transfer-Encoding.
    /// </summary>
    public static void Check(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
    {
        var kind = FieldNames.Classify(name);
        var te = kind == HeaderKind.HopByHop && name.Length == 2;
        if (kind is HeaderKind.Connection or HeaderKind.TransferEncoding ||
            (kind == HeaderKind.HopByHop && !(te && Ascii.EqualsIgnoreCase(value, "trailers"u8))))
        {
            ProxyThrow.BadRequest("Connection-specific field in an HTTP/2 request.");
        }
    }
}
