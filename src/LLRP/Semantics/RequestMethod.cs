namespace LLRP.Semantics;

/// <summary>
/// A request's method (RFC 9110 §9), whichever protocol carried it: the methods the proxy has rules for by name, and
/// <see cref="Custom"/> for any other token (its bytes are the head's).
/// </summary>
internal enum RequestMethod : byte
{
    Get,
    Head,
    Post,
    Put,
    Delete,
    Connect,
    Options,
    Trace,
    Patch,
    Custom,
}
