namespace LLRP.Analysis;

/// <summary>What the load generator saw in one run (crank's wrk job names; latencies in ms).</summary>
internal sealed record LoadFigures(
    double? Rps, double? Requests, double? MeanMs, double? P50Ms, double? P75Ms, double? P90Ms, double? P99Ms, double? MaxMs,
    double? BadResponses, double? SocketErrors);

/// <summary>One process's figures over the measured window: the proxy's, or the downstream's for <c>direct</c>.</summary>
internal sealed record ProcessFigures(
    double? CpuPercent, double? CoresPercent, double? CpuUsPerRequest, bool CpuPerRequestEstimated,
    double? AllocatedPerRequest, double? WorkingSetMb, double? PeakWorkingSetMb, double? Threads, Steadiness? Steady,
    double? JitMethodsInWindow);

/// <summary>
/// The steady-state check of one run: CPU µs per request in the first and second half of the measured window agree
/// within the tolerance (percent of their mean), and a .NET process spent at most <c>JitShareLimit</c> percent of its
/// CPU time in the window JIT-compiling (<c>JitSharePercent</c> is null for a process that reports none).
/// <c>JitMethods</c>, the methods compiled in the window, is shown beside it.
/// </summary>
internal sealed record Steadiness(
    double FirstHalf, double SecondHalf, double TolerancePercent, double? JitMethods, double? JitSharePercent, double JitShareLimit)
{
    public double ChangePercent => (SecondHalf - FirstHalf) / ((FirstHalf + SecondHalf) / 2) * 100;

    public bool HalvesOk => Math.Abs(ChangePercent) <= TolerancePercent;

    public bool JitOk => JitSharePercent is not { } s || s <= JitShareLimit;

    public bool Ok => HalvesOk && JitOk;
}

/// <summary>
/// The conditions a run was measured under. Runs of one point differ only in scenario and round, so ratios between
/// scenarios are taken within a point. <c>Request</c> names what the request matrix and the proxies' thread count add
/// (<see cref="DescribeRequest"/>; empty for a file from before them). <c>ServerScheme</c> is what the load speaks to
/// the proxy and <c>DownstreamScheme</c> what the proxy speaks to the origin (benchmarks.yml's serverScheme and
/// downstreamScheme; http for a file from before them). <c>NewConnectionPerRequest</c>: the handshake header preset,
/// which closes the connection after every response, so that over https every request is one TLS handshake.
/// </summary>
internal sealed record Point(int? Connections, string Path, long? ResponseBytes, string Profile, string AppEnv, string Request = "",
    string ServerScheme = Point.Http, string DownstreamScheme = Point.Http, bool NewConnectionPerRequest = false)
{
    public const string Http = "http";
    public const string Https = "https";

    /// <summary>Every request is a TLS handshake: RPS is handshakes per second, CPU per request is CPU per handshake.</summary>
    public bool Handshakes => NewConnectionPerRequest && ServerScheme == Https;

    /// <summary>The same point in cleartext on both sides: what the TLS layer's costs are taken against.</summary>
    public Point Cleartext => this with { ServerScheme = Http, DownstreamScheme = Http };

    /// <summary>"https → http": the load's scheme to the proxy, then the proxy's to the origin.</summary>
    public string Schemes => $"{ServerScheme} → {DownstreamScheme}";

    /// <summary>What a request is called in this point's tables ("handshake" when every request is one).</summary>
    public string Unit => Handshakes ? "handshake" : "request";

    /// <summary>Its rate's name: "handshakes/s" or "RPS".</summary>
    public string RateName => Handshakes ? "handshakes/s" : "RPS";

    /// <summary>
    /// The proxies' threads (benchmarks.yml's "threads"), the request body and its framing, the header preset, for the
    /// fixed-rate load its offered rate, and for the WebSocket load its message size, in words ("proxy threads 1, POST
    /// 1 KiB chunked, browser headers"). Defaults are said too, so that every point of a newer file names its thread count.
    /// </summary>
    public static string DescribeRequest(int? proxyThreads, long? bodyBytes, string? framing, string? headers, string? load, double? rate,
        double? messageSize = null)
    {
        var parts = new List<string>();
        if (proxyThreads is { } t)
        {
            parts.Add($"proxy threads {t}");
        }
        if (bodyBytes is > 0)
        {
            parts.Add($"POST {Format.Bytes(bodyBytes)}{(framing == "chunked" ? " chunked" : "")}");
        }
        if (!string.IsNullOrEmpty(headers) && headers != "plaintext")
        {
            parts.Add($"{headers} headers");
        }
        if (load == "fixedrate")
        {
            parts.Add(string.Create(System.Globalization.CultureInfo.InvariantCulture, $"fixed rate {rate:N0}/s"));
        }
        if (load == "websocket")
        {
            // crank/websocket-job.sh: a request is one message and its echo, so RPS is round trips and CPU per request
            // CPU per message.
            parts.Add($"WebSocket echo of {Format.Bytes((long?)messageSize)} messages (a request is a round trip)");
        }
        return string.Join(", ", parts);
    }

    public string ProfileLabel => Profile.Length == 0 ? "default" : Profile;

    public string Label
    {
        get
        {
            var label = $"{(Connections is { } c ? $"{c} connections" : "connections ?")}, {Format.Bytes(ResponseBytes)} responses (path `{Path}`)";
            if (Profile.Length > 0)
            {
                label += $", profile {Profile}";
            }
            if (AppEnv.Length > 0)
            {
                label += $", proxy env `{AppEnv}`";
            }
            if (Request.Length > 0)
            {
                label += $", {Request}";
            }
            if (ServerScheme != Http || DownstreamScheme != Http)
            {
                label += $", {Schemes}";
            }
            if (Handshakes)
            {
                label += ", a TLS handshake per request";
            }
            return label;
        }
    }

    /// <summary>File-name part for this point's charts: c64-s10[-pgo][-env…].</summary>
    public string Slug
    {
        get
        {
            var slug = $"c{Connections?.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "x"}-s{ResponseBytes?.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "x"}";
            if (Profile.Length > 0)
            {
                slug += "-" + Profile;
            }
            if (AppEnv.Length > 0)
            {
                slug += "-env" + ((uint)StableHash(AppEnv) % 10000).ToString("D4", System.Globalization.CultureInfo.InvariantCulture);
            }
            if (Request.Length > 0)
            {
                slug += "-q" + ((uint)StableHash(Request) % 10000).ToString("D4", System.Globalization.CultureInfo.InvariantCulture);
            }
            if (ServerScheme != Http || DownstreamScheme != Http)
            {
                slug += $"-{ServerScheme}-{DownstreamScheme}";
            }
            return slug;
        }
    }

    private static int StableHash(string s)
    {
        var h = 17;
        foreach (var ch in s)
        {
            h = unchecked((h * 31) + ch);
        }
        return h;
    }
}

internal sealed class Run
{
    public required string File { get; init; }
    public required string Scenario { get; init; }
    public required string Round { get; init; }
    public required Point Point { get; init; }
    /// <summary>returnCode != 0 (crank or run-local says the run failed); such runs count as failures, not data.</summary>
    public required bool Failed { get; init; }
    public required LoadFigures Load { get; init; }
    /// <summary>The application job (the proxy); null for <c>direct</c>, where nothing runs between wrk and the origin.</summary>
    public ProcessFigures? Proxy { get; init; }
    public ProcessFigures? Downstream { get; init; }
    public string? Commit { get; init; }
    public string? Mode { get; init; }
    public int? Processors { get; init; }
    /// <summary>Attempts run-local.sh made before keeping this run (1 + retries of unsteady attempts); 1 when not recorded.</summary>
    public int Attempts { get; init; } = 1;
    /// <summary>Each attempt's verdict, as run-local.sh recorded it.</summary>
    public string? AttemptHistory { get; init; }
    /// <summary>Seconds of load before the measured run, and whether the adaptive warm-up hit its cap.</summary>
    public double? WarmupSeconds { get; init; }
    public bool WarmupCapped { get; init; }
    /// <summary>What the load's TLS probe negotiated with the target (crank/wrk-job.sh); null for cleartext or no probe.</summary>
    public TlsFigures? Tls { get; init; }
}

/// <summary>
/// The TLS the target of a run negotiated with OpenSSL's client, probed once before the load (crank/wrk-job.sh's
/// <c>tls/*</c>): protocol, cipher suite and key exchange group as OpenSSL names them, and whether a second
/// connection resumed the first one's session.
/// </summary>
internal sealed record TlsFigures(string? Protocol, string? Cipher, string? Group, bool? Resumed)
{
    /// <summary>"TLSv1.3, TLS_AES_256_GCM_SHA384, X25519": what every proxy of a point must share.</summary>
    public string Suite => string.Join(", ", new[] { Protocol, Cipher, Group }.Where(x => !string.IsNullOrEmpty(x)));
}

/// <summary>A run-local.sh run.json or sweep.sh sweep.json: the machine and the exact command of a set of runs.</summary>
internal sealed record RunMeta(
    string File, string? Date, string? Commit, bool? Dirty, int? Nproc, string? CpuModel, string? Kernel, string? Dotnet,
    string? Wrk, string? Nginx, string? Haproxy, string? Mode, string? Pinned, string? Origin, IReadOnlyList<string> Commands,
    IReadOnlyList<string> Warnings, string? Status, int? Warmup, int? Duration)
{
    public bool IsSweep => Path.GetFileName(File) == "sweep.json";
}
