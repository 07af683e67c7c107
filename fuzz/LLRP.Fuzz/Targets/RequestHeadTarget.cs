using LLRP.Fuzz.Support;
using LLRP.Http1;

namespace LLRP.Fuzz.Targets;

/// <summary>
/// RequestHead parsing with its validation: the input is a request head (and whatever follows it), parsed whole and
/// again as it arrives in pieces on the same reused head (a connection's next request). Rejections are expected; both
/// readings must agree, and an accepted head must hold what the forwarder relies on.
/// </summary>
internal static class RequestHeadTarget
{
    private static readonly RequestHead s_head = RequestSide.NewHead();

    public static void Run(ReadOnlySpan<byte> input)
    {
        var whole = RequestSide.ParseHead(s_head, [input.ToArray()]);
        if (whole.Accepted)
        {
            CheckAccepted(whole);
        }
        var split = RequestSide.ParseHead(s_head, Pieces.Split(input));
        // A head arriving in pieces may be rejected earlier or later, but never answered differently.
        Finding.Check(Same(whole, split), $"Whole and in pieces disagree:\n  whole:  {whole}\n  pieces: {split}");
        s_head.Reset();
    }

    private static bool Same(HeadOutcome a, HeadOutcome b) =>
        a.Verdict == b.Verdict && (!a.Accepted || (a with { Fields = [] }) == (b with { Fields = [] }) && a.Fields.SequenceEqual(b.Fields));

    private static void CheckAccepted(HeadOutcome head)
    {
        // The forwarder writes origin-form (or "*") and a Host that HostSyntax calls forwardable.
        Finding.Check(head.Target.StartsWith('/') || head.Target == "*", $"Forwarded target is not origin-form: '{head.Target}'.");
        Finding.Check(head.Authority.Length > 0 || head.Version == "Http10", "An HTTP/1.1 request was accepted without an authority.");
        Finding.Check(head.Authority.Length == 0 || HostSyntax.Check(System.Text.Encoding.Latin1.GetBytes(head.Authority)) == HostCheck.Forwardable,
            $"The authority to forward is not forwardable: '{head.Authority}'.");
        foreach (var (kind, name, value) in head.Fields)
        {
            if (kind != nameof(HeaderKind.Other))
            {
                continue;
            }
            // Fields of kind Other are copied to the downstream verbatim: nothing in them may reframe or split it.
            Finding.Check(!name.Equals("Content-Length", StringComparison.OrdinalIgnoreCase) && !name.Equals("Transfer-Encoding", StringComparison.OrdinalIgnoreCase)
                && !name.Equals("Host", StringComparison.OrdinalIgnoreCase), $"A framing or Host field would be forwarded as is: {name}.");
            Finding.Check(name.Length > 0 && name.All(c => c > ' ' && c < 0x7F && c != ':'), $"Forwarded field name has a separator or control: '{name}'.");
            Finding.Check(value.All(c => c == '\t' || (c >= ' ' && c != 0x7F)), $"Forwarded field value has a control: '{name}'.");
            Finding.Check(value.Length == 0 || (value[0] is not (' ' or '\t') && value[^1] is not (' ' or '\t')),
                $"Forwarded field value keeps surrounding whitespace: '{name}'.");
        }
    }
}
