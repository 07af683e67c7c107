using System.Diagnostics;
using System.Text;

namespace LLRP.Tests.Infrastructure;

/// <summary>
/// OpenSSL's own client (`openssl s_client`) as the TLS peer, for what .NET's SslStream cannot tell: whether the proxy
/// closed with a close_notify alert or with a bare FIN. SslStream.ReadAsync returns 0 for both (tried on .NET 10, TLS
/// 1.2 and 1.3); s_client prints every alert it receives (-msg) and fails with "unexpected eof while reading" when
/// the connection ends without one. It sends the given bytes, keeps reading after its input ends (-quiet implies
/// -ign_eof), and exits when the proxy closes.
/// </summary>
public sealed class OpenSslClient : IAsyncDisposable
{
    private readonly Process _process;
    private readonly StringBuilder _output = new();
    private readonly Task _stdout;
    private readonly Task<string> _stderr;

    private OpenSslClient(Process process)
    {
        _process = process;
        _stdout = PumpAsync(process.StandardOutput);
        _stderr = process.StandardError.ReadToEndAsync();
    }

    /// <summary>
    /// Connects to the proxy's https listener on <paramref name="port"/>, sends <paramref name="request"/> (each char
    /// one octet) and ends its input. <paramref name="alpn"/>: the protocol to offer (h2 for an HTTP/2 connection).
    /// </summary>
    public static async Task<OpenSslClient> StartAsync(int port, string request, string alpn = "http/1.1")
    {
        var start = new ProcessStartInfo("openssl")
        {
            ArgumentList =
            {
                "s_client", "-connect", $"127.0.0.1:{port}", "-servername", "localhost", "-CAfile", TestCertificates.AuthorityPem,
                "-verify_return_error", "-alpn", alpn, "-quiet", "-msg",
            },
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        var client = new OpenSslClient(Process.Start(start)!);
        var input = client._process.StandardInput.BaseStream;
        await input.WriteAsync(Wire.Bytes(request), Wire.Deadline());
        await input.FlushAsync(Wire.Deadline());
        client._process.StandardInput.Close();
        return client;
    }

    /// <summary>What s_client printed so far: the response, and its record of every TLS message (-msg).</summary>
    public string Output
    {
        get
        {
            lock (_output)
            {
                return _output.ToString();
            }
        }
    }

    /// <summary>Waits (bounded) until the output contains <paramref name="text"/>, e.g. the response's status line.</summary>
    public async Task<bool> WaitForOutputAsync(string text)
    {
        using var cap = new CancellationTokenSource(Wire.Cap);
        while (!Output.Contains(text, StringComparison.Ordinal))
        {
            if (_process.HasExited && _stdout.IsCompleted)
            {
                return Output.Contains(text, StringComparison.Ordinal);
            }
            try
            {
                await Task.Delay(20, cap.Token);
            }
            catch (OperationCanceledException)
            {
                return false;
            }
        }
        return true;
    }

    /// <summary>Waits (bounded) for the proxy to close and s_client to exit, and reads how the connection ended.</summary>
    public async Task<TlsEnding> WaitForEndAsync()
    {
        using var cap = new CancellationTokenSource(Wire.Cap);
        try
        {
            await _process.WaitForExitAsync(cap.Token);
        }
        catch (OperationCanceledException)
        {
            return new TlsEnding(StillOpen: true, ReceivedCloseNotify: false, UnexpectedEof: false, ExitCode: -1, Output, "");
        }
        await _stdout;
        var errors = await _stderr;
        var output = Output;
        // "<<<" is what s_client received; ">>>" its own alerts (it answers a close_notify with one).
        var received = output.Split('\n').Any(l => l.StartsWith("<<< ", StringComparison.Ordinal) && l.Contains("Alert", StringComparison.Ordinal)
            && l.Contains("close_notify", StringComparison.Ordinal));
        return new TlsEnding(StillOpen: false, received, errors.Contains("unexpected eof", StringComparison.OrdinalIgnoreCase),
            _process.ExitCode, output, errors);
    }

    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            _process.Kill();
            await _process.WaitForExitAsync();
        }
        _process.Dispose();
    }

    private async Task PumpAsync(StreamReader reader)
    {
        var buffer = new char[4096];
        int read;
        while ((read = await reader.ReadAsync(buffer)) > 0)
        {
            lock (_output)
            {
                _output.Append(buffer, 0, read);
            }
        }
    }
}

/// <summary>How a TLS connection ended, as OpenSSL's client saw it.</summary>
public sealed record TlsEnding(bool StillOpen, bool ReceivedCloseNotify, bool UnexpectedEof, int ExitCode, string Output, string Errors)
{
    /// <summary>A clean TLS close: the proxy's close_notify, then its FIN, and s_client content with both.</summary>
    public bool IsCloseNotify => !StillOpen && ReceivedCloseNotify && !UnexpectedEof && ExitCode == 0;

    public override string ToString() =>
        $"still open: {StillOpen}, close_notify received: {ReceivedCloseNotify}, unexpected eof: {UnexpectedEof}, exit code {ExitCode}; " +
        $"errors '{Errors.Trim()}'; output '{(Output.Length > 1500 ? Output[^1500..] : Output)}'";
}
