using System.Net;
using System.Net.Sockets;
using LLRP.Tests.Infrastructure;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Primitives;

namespace LLRP.Tests;

/// <summary>
/// The command line: --help, unknown options, bad values and a port in use each end in one clear line and the
/// documented exit code (0 for help, 2 otherwise). The process tests run LLRP itself; the exhaustive ones call the
/// same option code in-process.
/// </summary>
public sealed class CommandLineTests
{
    private const string Downstream = "http://127.0.0.1:9";

    // One bad value per option, with what the message must promise. Every known option must appear here.
    public static readonly TheoryData<string, string, string> BadValues = new()
    {
        { "urls", "ftp://127.0.0.1:1", "is not an http://IP:PORT or https://IP:PORT address" },
        { "certificate", "/nonexistent/llrp.pem", "does not exist" },
        { "certificateKey", "/nonexistent/llrp.key", "is given without --certificate" },
        { "tlsHandshakeTimeout", "0", "is not a number of seconds above 0 and at most 86400" },
        { "downstream", "ftp://127.0.0.1:1", "is not an http://HOST:PORT or https://HOST:PORT address (paths and queries are not supported)" },
        { "downstreamTrust", "/nonexistent/ca.pem", "does not exist" },
        { "client", "nginx", "is not one of llhttp, httpclient, httpclient-httpcontext, yarp" },
        { "downstreamProtocol", "http2", "is not one of http1, h2, h2c" },
        { "protocols", "h3", "is not one of http1, h2, http1,h2" },
        { "frontEnd", "nginx", "is not one of raw, kestrel" },
        { "http2MaxConcurrentStreams", "0", "is not a whole number from 1 to 1000000" },
        { "shareClients", "yes", "is not true or false" },
        { "shareClients.roundRobin", "2", "is not true or false" },
        { "shareClients.count", "0", "is not a whole number from 1 to 4096" },
        { "maxRequestLineSize", "8k", "is not a whole number from 64 to 1048576" },
        { "maxRequestHeadersTotalSize", "-1", "is not a whole number from 256 to 524288" },
        { "maxRequestHeaderCount", "1.5", "is not a whole number from 1 to 10000" },
        { "maxRequestBodySize", "99999999999999999999", "is not a whole number from 0 to 9223372036854775807" },
        { "maxResponseHeadersTotalSize", "100", "is not a whole number from 256 to 1048576" },
        { "requestHeadersTimeout", "0", "is not a number of seconds above 0 and at most 86400" },
        { "keepAliveTimeout", "1m", "is not a number of seconds above 0 and at most 86400" },
        { "tunnelIdleTimeout", "0", "is not a number of seconds above 0 and at most 86400" },
        { "lingeringTime", "-1", "is not a number of seconds from 0 to 86400" },
        { "lingeringTimeout", "0", "is not a number of seconds above 0 and at most 86400" },
        { "lingeringMaxBytes", "30MB", "is not a whole number from 0 to 9223372036854775807" },
        { "downstreamConnectTimeout", "86401", "is not a number of seconds above 0 and at most 86400" },
        { "downstreamResponseTimeout", "-5", "is not a number of seconds above 0 and at most 86400" },
        { "downstreamIdleTimeout", "0", "is not a number of seconds above 0 and at most 86400" },
        { "downstreamReceiveBuffer", "256k", "is not a whole number from 0 to 67108864" },
        { "loadBalancing", "LeastConnections", "is not one of ConnectionRoundRobin, PowerOfTwoChoices, FirstAlphabetical, Random, RoundRobin, LeastRequests" },
        { "passiveHealthReactivationPeriod", "-1", "is not a number of seconds from 0 to 86400" },
        { "healthCheckPath", "health", "is not a path starting with '/' (printable ASCII, no spaces, no '#')" },
        { "healthCheckInterval", "0", "is not a number of seconds above 0 and at most 86400" },
        { "healthCheckTimeout", "1s", "is not a number of seconds above 0 and at most 86400" },
        { "healthCheckFall", "0", "is not a whole number from 1 to 1000" },
        { "healthCheckRise", "1001", "is not a whole number from 1 to 1000" },
        { "shutdownTimeout", "0", "is not a number of seconds above 0 and at most 86400" },
        { "statsInterval", "-1", "is not a number of seconds from 0 to 86400" },
        { "statsWindow", "x", "is not a number of seconds from 0 to 86400" },
        { "downstreamShareAfter", "-1", "is not a number of seconds from 0 to 86400" },
        { "idleTrimAfter", "-1", "is not a number of seconds from 0 to 86400" },
        { "inlineScheduling", "on", "is not true or false" },
        { "socketEngine", "io_uring", "is not one of runtime, epoll" },
        { "engineThreads", "0", "is not a whole number from 1 to 1024" },
    };

    [Theory]
    [InlineData("--help")]
    [InlineData("-h")]
    public async Task Help_lists_every_option_with_its_default_and_exits_0(string flag)
    {
        // No --downstream: help must not complain about what it was not asked to do.
        var result = await ProgramRun.RunAsync([flag]);

        Assert.True(result.ExitCode == 0, result.ToString());
        Assert.Empty(result.Errors);
        foreach (var option in CommandLine.Known)
        {
            Assert.Contains(result.Output, line =>
                line.TrimStart().StartsWith($"--{option.Name} ", StringComparison.Ordinal)
                && line.Contains($" {option.Default} ", StringComparison.Ordinal)
                && line.TrimEnd().EndsWith(option.Meaning, StringComparison.Ordinal));
        }
    }

    /// <summary>
    /// The whole --help text, byte for byte: scripts and the README quote it, and moving the options between records
    /// must not change a character. The socket engine's default is the one column that depends on the platform.
    /// </summary>
    [Fact]
    public void The_help_text_is_pinned()
    {
        const string Expected = """
        Usage: LLRP --downstream http://HOST:PORT[;...] [--option value]...
        Options also come from environment variables (name=value) and appsettings.json; names are case-insensitive,
        durations are seconds (fractions allowed). A bad or unknown option stops LLRP with one line and exit code 2.

          option                             default                meaning
          --urls                             http://127.0.0.1:8080  listen addresses, ';'-separated http://IP:PORT or https://IP:PORT (localhost, * and + accepted)
          --certificate                                             https listeners: the server certificate, a PEM file (key in --certificateKey, or in the same file) or a PKCS#12 file
          --certificateKey                                          https listeners: the PEM private key of --certificate
          --protocols                        http1 (https: both)    what the listeners speak: http1, h2 or http1,h2; on https ALPN chooses, on http h2 alone is prior-knowledge h2c and http1,h2 is told apart by the HTTP/2 preface
          --frontEnd                         raw                    HTTP/1.1 from clients: raw (LLRP's connection handler) or kestrel (Kestrel's own HTTP/1.1 and the HTTP/2 streams' application)
          --http2MaxConcurrentStreams        100                    HTTP/2: streams a client connection may have open at once; more are refused (Kestrel's default)
          --tlsHandshakeTimeout              10                     seconds a client may take to complete its TLS handshake; then the connection closes (Kestrel's default)
          --downstream                       (required)             one or more http://HOST:PORT or https://HOST:PORT, ';'-separated; loadBalancing chooses among them
          --downstreamTrust                                         https downstreams: a PEM bundle of CA certificates trusted besides the system store
          --downstreamProtocol               http1                  what requests speak downstream: http1, h2 (TLS with ALPN h2, https:// downstreams) or h2c (prior-knowledge cleartext, http:// downstreams); h2 and h2c need an HttpClient-based --client
          --client                           llhttp                 forwarding variant: llhttp, httpclient, httpclient-httpcontext or yarp
          --shareClients                     false                  share clients across inbound connections (llhttp: one LIFO connection pool per downstream)
          --shareClients.roundRobin          false                  HttpClient-based variants with shareClients: rotate clients per request, not per connection
          --shareClients.count               processor count        HttpClient-based variants with shareClients: how many clients
          --maxRequestLineSize               8192                   longest request line in bytes; longer: 414 (Kestrel's default)
          --maxRequestHeadersTotalSize       32768                  largest request header section in bytes; larger: 431 (Kestrel's default)
          --maxRequestHeaderCount            100                    most request header fields; more: 431 (Kestrel's default)
          --maxRequestBodySize               30000000               largest request body in bytes; larger: 413 (Kestrel's default)
          --maxResponseHeadersTotalSize      65536                  largest downstream response head in bytes; larger: 502 (SocketsHttpHandler's default)
          --requestHeadersTimeout            30                     seconds for a started request head to complete; then 408 and close (Kestrel's default)
          --keepAliveTimeout                 130                    seconds an idle client connection is kept (Kestrel's default)
          --tunnelIdleTimeout                60                     seconds a tunnel after 101 Switching Protocols (WebSocket) may carry nothing either way before both sides close (nginx's proxy_read_timeout default)
          --lingeringTime                    30                     a connection closed with unread input (an error answer, a body not read): at most this many seconds of reading and discarding after its FIN; 0 closes at once (nginx's lingering_time)
          --lingeringTimeout                 5                      that lingering close ends once the client sends nothing for this many seconds (nginx's lingering_timeout)
          --lingeringMaxBytes                30000000               that lingering close ends after discarding this many bytes (maxRequestBodySize's default)
          --downstreamConnectTimeout         15                     seconds to connect downstream; then 502 (YARP's default)
          --downstreamResponseTimeout        100                    seconds without a response head (504) or body progress (abort) (YARP's default)
          --downstreamIdleTimeout            60                     llhttp: seconds an idle downstream connection is kept (SocketsHttpHandler's PooledConnectionIdleTimeout)
          --loadBalancing                    ConnectionRoundRobin   ConnectionRoundRobin (per inbound connection), or per request: PowerOfTwoChoices, FirstAlphabetical, Random, RoundRobin, LeastRequests
          --passiveHealthReactivationPeriod  60                     seconds a downstream stays out after a transport failure (not with one downstream); 0 is off (YARP's default)
          --healthCheckPath                                         active health: GET this path on every downstream (2xx is healthy); empty is off
          --healthCheckInterval              15                     active health: seconds between checks (YARP's default)
          --healthCheckTimeout               10                     active health: seconds a check may take; longer is a failure (YARP's default)
          --healthCheckFall                  2                      active health: failed checks in a row that take a downstream out (YARP's ConsecutiveFailures default)
          --healthCheckRise                  1                      active health: passed checks in a row that bring it back (YARP: the first)
          --shutdownTimeout                  30                     seconds a stop (SIGTERM, Ctrl+C) waits for exchanges in flight before aborting them (HostOptions.ShutdownTimeout's default)
          --downstreamReceiveBuffer          0                      llhttp: SO_RCVBUF in bytes for downstream connections; 0 keeps the kernel's autotuned buffer (as SocketsHttpHandler, nginx and HAProxy do); a set size fixes the receive window (docs/tcp-receive-window.md)
          --downstreamShareAfter             1                      llhttp without shareClients: seconds a client connection stays idle before its downstream connection goes to the shared idle pool (at most 1,024 per downstream)
          --idleTrimAfter                    0.5                    seconds without connections, requests or exchanges in flight after which the proxy gives back the buffers and heap a burst left (at most once per 16 MiB allocated); 0 is off
          --inlineScheduling                 true                   run each exchange on the socket engine's epoll thread (Kestrel UnsafePreferInlineScheduling + inline socket completions); unsafe with blocking code
          --socketEngine                     epoll                  client connections (Kestrel's transport) and llhttp's downstream connections: epoll (LLHttp's own engine; the default on Linux x86-64) or runtime (System.Net.Sockets; the default elsewhere)
          --engineThreads                    processor count        socketEngine=epoll: its loop threads, which run every exchange (as nginx's worker_processes or HAProxy's nbthread)
          --statsInterval                    0                      print crank statistics every N seconds; 0 is off
          --statsWindow                      0                      statistics cover the last N seconds that ended with requests served; 0: since the first request
          --help, -h                                                print this and exit

        """;
        var engine = ProxyOptions.DefaultSocketEngine.ToString().ToLowerInvariant();
        var expected = Expected.Replace(
            "--socketEngine                     epoll                  ",
            $"--socketEngine                     {engine.PadRight(21)}  ", StringComparison.Ordinal);

        Assert.Equal(expected.ReplaceLineEndings("\n"), CommandLine.Usage().ReplaceLineEndings("\n"));
    }

    /// <summary>
    /// docs/options.md's table is what the options render (docs/options.sh writes it): a default, a help line or the
    /// reason for a default changed in the code and not on the page, or on the page and not in the code, fails here.
    /// </summary>
    [Fact]
    public void The_options_page_table_is_what_the_options_render()
    {
        const string Start = "<!-- options:start -->\n";
        const string End = "<!-- options:end -->\n";
        var page = File.ReadAllText(Path.Combine(ArchitectureTests.RepositoryRoot(), "docs", "options.md")).ReplaceLineEndings("\n");
        var from = page.IndexOf(Start, StringComparison.Ordinal);
        var to = page.IndexOf(End, StringComparison.Ordinal);
        Assert.True(from >= 0 && to > from, "docs/options.md has no options:start and options:end lines");
        // The page shows the socket engine's default on Linux x86-64, the one cell that depends on the platform.
        var engine = ProxyOptions.DefaultSocketEngine.ToString().ToLowerInvariant();
        var rendered = CommandLine.Markdown().Replace($"| `--socketEngine` | `{engine}` |", "| `--socketEngine` | `epoll` |", StringComparison.Ordinal);

        Assert.Equal(page[(from + Start.Length)..to], rendered);
    }

    /// <summary>The page's details below the table name only options there are: a renamed option leaves no row behind.</summary>
    [Fact]
    public void The_options_page_details_name_only_known_options()
    {
        var rows = File.ReadAllLines(Path.Combine(ArchitectureTests.RepositoryRoot(), "docs", "options.md"))
            .SkipWhile(line => !line.StartsWith("| option | more on", StringComparison.Ordinal)).Skip(2)
            .TakeWhile(line => line.StartsWith('|')).ToList();

        Assert.NotEmpty(rows);
        Assert.All(rows, row => Assert.Contains(CommandLine.Known, option => row.StartsWith($"| `{option.Name}` |", StringComparison.Ordinal)));
    }

    /// <summary>Every option's descriptor says where its default comes from, for the page's table.</summary>
    [Fact]
    public void Every_option_gives_the_reason_for_its_default() =>
        Assert.All(CommandLine.Known, option => Assert.False(string.IsNullOrWhiteSpace(option.Reason), option.Name));

    [Fact]
    public async Task A_misspelt_option_is_one_line_with_a_suggestion_and_exit_2()
    {
        var result = await ProgramRun.RunAsync(["--downstream", Downstream, "--statsintervall", "3"]);

        Assert.True(result.ExitCode == 2, result.ToString());
        Assert.Empty(result.Output);
        Assert.Equal(["LLRP: unknown option --statsintervall; did you mean --statsInterval?"], result.Errors);
    }

    [Fact]
    public async Task A_bad_value_is_one_line_naming_the_option_and_exit_2()
    {
        var result = await ProgramRun.RunAsync(["--downstream", Downstream, "--keepAliveTimeout", "soon"]);

        Assert.True(result.ExitCode == 2, result.ToString());
        Assert.Empty(result.Output);
        Assert.Equal(["LLRP: --keepAliveTimeout 'soon' is not a number of seconds above 0 and at most 86400."], result.Errors);
    }

    [Fact]
    public async Task A_port_in_use_is_one_line_naming_the_address_and_exit_2()
    {
        using var holder = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        holder.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        holder.Listen();
        var url = $"http://127.0.0.1:{((IPEndPoint)holder.LocalEndPoint!).Port}";

        var result = await ProgramRun.RunAsync(["--urls", url, "--downstream", Downstream]);

        Assert.True(result.ExitCode == 2, result.ToString());
        Assert.Empty(result.Output);
        Assert.Equal([$"LLRP: Failed to bind to address {url}: address already in use."], result.Errors);
    }

    [Fact]
    public async Task Environment_variables_that_are_not_options_are_left_alone_and_options_among_them_apply()
    {
        var result = await ProgramRun.RunUntilAsync(
            ["--urls", "http://127.0.0.1:0", "--downstream", Downstream],
            ready: "Application started.",
            new Dictionary<string, string> { ["shareClients"] = "true", ["NOT_AN_LLRP_OPTION"] = "1" });

        Assert.True(result.Errors.Count == 0, result.ToString());
        Assert.Contains(result.Output, line => line.StartsWith("LLRP client=llhttp ", StringComparison.Ordinal) && line.Contains(" shareClients=True ", StringComparison.Ordinal));
        Assert.Contains(result.Output, line => line.Contains("Application started.", StringComparison.Ordinal));
    }

    [Theory]
    [MemberData(nameof(BadValues))]
    public void Every_option_refuses_a_bad_value_naming_itself_and_the_expected_form(string name, string value, string expected)
    {
        var settings = new Dictionary<string, string?> { ["downstream"] = Downstream, [name] = value };

        var e = Assert.Throws<OptionsException>(() => CommandLine.Read(Configuration(settings)));

        Assert.Equal($"--{name} '{value}' {expected}.", e.Message);
    }

    [Fact]
    public void Every_known_option_has_a_bad_value_case()
    {
        var covered = BadValues.Select(row => (string)row[0]).ToHashSet();
        Assert.All(CommandLine.Known, option => Assert.Contains(option.Name, covered));
    }

    [Fact]
    public void The_known_options_are_exactly_the_ones_read()
    {
        var config = new RecordingConfiguration(new Dictionary<string, string?> { ["downstream"] = Downstream });

        CommandLine.Read(config);

        Assert.Equal(CommandLine.Known.Select(o => o.Name).Order(StringComparer.OrdinalIgnoreCase),
            config.Read.Order(StringComparer.OrdinalIgnoreCase), StringComparer.OrdinalIgnoreCase);
    }

    [Fact]
    public void The_documented_defaults_are_the_defaults()
    {
        var bare = CommandLine.Read(Configuration(new() { ["downstream"] = Downstream }));
        var settings = new Dictionary<string, string?> { ["downstream"] = Downstream };
        // protocols' default depends on each listener's scheme: checked on its own below.
        foreach (var option in CommandLine.Known.Where(o => o.Name is not "downstream" and not "protocols"))
        {
            settings[option.Name] = option.Default == "processor count" ? $"{Environment.ProcessorCount}" : option.Default;
        }

        var spelledOut = CommandLine.Read(Configuration(settings));

        Assert.Equal(bare.Describe(), spelledOut.Describe());
        Assert.Equal(bare.Urls, spelledOut.Urls);
        Assert.Equal(bare.ListenEndPoints, spelledOut.ListenEndPoints);
        Assert.Null(bare.Protocols);
        Assert.Equal(ListenProtocols.Http1, bare.ProtocolsOf(new ListenEndPoint(new IPEndPoint(IPAddress.Loopback, 80), Tls: false)));
        Assert.Equal(ListenProtocols.Http1AndHttp2, bare.ProtocolsOf(new ListenEndPoint(new IPEndPoint(IPAddress.Loopback, 443), Tls: true)));
    }

    [Theory]
    [InlineData("http1", ListenProtocols.Http1)]
    [InlineData("h2", ListenProtocols.Http2)]
    [InlineData("http1,h2", ListenProtocols.Http1AndHttp2)]
    [InlineData("H2, HTTP1", ListenProtocols.Http1AndHttp2)]
    public void Protocols_take_http1_h2_or_both(string value, ListenProtocols expected) =>
        Assert.Equal(expected, CommandLine.ParseProtocols(value));

    [Theory]
    [InlineData("h2,h2")]
    [InlineData("http1,")]
    [InlineData("http2")]
    public void Protocols_refuse_repeats_and_unknown_names(string value) =>
        Assert.Equal($"--protocols '{value}' is not one of http1, h2, http1,h2.", Assert.Throws<OptionsException>(() => CommandLine.ParseProtocols(value)).Message);

    [Fact]
    public async Task Both_protocols_on_a_cleartext_listener_with_kestrel_as_front_end_is_one_line_and_exit_2()
    {
        var result = await ProgramRun.RunAsync(["--downstream", Downstream, "--protocols", "http1,h2", "--frontEnd", "kestrel"]);

        Assert.True(result.ExitCode == 2, result.ToString());
        Assert.Equal(["LLRP: --protocols http1,h2 on an http:// listener needs --frontEnd raw (Kestrel cannot serve both without TLS)."], result.Errors);
    }

    [Theory]
    [InlineData("http1", DownstreamProtocol.Http1)]
    [InlineData("h2", DownstreamProtocol.H2)]
    [InlineData("H2C", DownstreamProtocol.H2c)]
    public void DownstreamProtocol_takes_http1_h2_or_h2c(string value, DownstreamProtocol expected) =>
        Assert.Equal(expected, CommandLine.ParseDownstreamProtocol(value));

    // h2 is negotiated by ALPN inside TLS, h2c is cleartext with prior knowledge; any other pairing cannot work.
    [Theory]
    [InlineData("h2", "http://127.0.0.1:9", "httpclient", "--downstreamProtocol h2 needs https:// downstreams (HTTP/2 over TLS with ALPN); http://127.0.0.1:9 is not (h2c is HTTP/2 in cleartext).")]
    [InlineData("h2", "https://localhost:9;http://127.0.0.1:9", "yarp", "--downstreamProtocol h2 needs https:// downstreams (HTTP/2 over TLS with ALPN); http://127.0.0.1:9 is not (h2c is HTTP/2 in cleartext).")]
    [InlineData("h2c", "https://localhost:9", "httpclient-httpcontext", "--downstreamProtocol h2c needs http:// downstreams (HTTP/2 in cleartext); https://localhost:9 is not (h2 is HTTP/2 over TLS).")]
    [InlineData("h2c", "http://127.0.0.1:9", "llhttp", "--downstreamProtocol h2c needs --client httpclient, httpclient-httpcontext or yarp: llhttp has no HTTP/2 client yet.")]
    [InlineData("h2", "https://localhost:9", "llhttp", "--downstreamProtocol h2 needs --client httpclient, httpclient-httpcontext or yarp: llhttp has no HTTP/2 client yet.")]
    public void DownstreamProtocol_refuses_a_scheme_or_client_it_cannot_speak_with(string protocol, string downstream, string client, string expected)
    {
        var settings = new Dictionary<string, string?> { ["downstream"] = downstream, ["downstreamProtocol"] = protocol, ["client"] = client };

        Assert.Equal(expected, Assert.Throws<OptionsException>(() => CommandLine.Read(Configuration(settings))).Message);
    }

    [Theory]
    [InlineData("h2", "https://localhost:9")]
    [InlineData("h2c", "http://127.0.0.1:9")]
    [InlineData("http1", "https://localhost:9;http://127.0.0.1:9")]
    public void DownstreamProtocol_takes_the_schemes_it_speaks_with(string protocol, string downstream)
    {
        var settings = new Dictionary<string, string?> { ["downstream"] = downstream, ["downstreamProtocol"] = protocol, ["client"] = "yarp" };

        Assert.Equal(CommandLine.ParseDownstreamProtocol(protocol), CommandLine.Read(Configuration(settings)).Balancing.DownstreamProtocol);
    }

    [Fact]
    public async Task Llhttp_with_an_http2_downstream_is_one_line_and_exit_2()
    {
        var result = await ProgramRun.RunAsync(["--downstream", Downstream, "--downstreamProtocol", "h2c"]);

        Assert.True(result.ExitCode == 2, result.ToString());
        Assert.Equal(["LLRP: --downstreamProtocol h2c needs --client httpclient, httpclient-httpcontext or yarp: llhttp has no HTTP/2 client yet."], result.Errors);
    }

    [Theory]
    [InlineData("--statsintervall", "--statsInterval")]
    [InlineData("--downstreams", "--downstream")]
    [InlineData("--maxRequestBody", "--maxRequestBodySize")]
    [InlineData("--shareClient", "--shareClients")]
    [InlineData("--url", "--urls")]
    [InlineData("-client", "--client")]
    [InlineData("/keepaliveTimout", "--keepAliveTimeout")]
    public void An_unknown_name_is_refused_with_the_closest_known_one(string given, string suggested)
    {
        var e = Assert.Throws<OptionsException>(() => CommandLine.Check([given, "1"]));

        Assert.Equal($"unknown option {given}; did you mean {suggested}?", e.Message);
    }

    [Theory]
    [InlineData("--environment")]
    [InlineData("--Logging:LogLevel:Default")]
    public void An_unknown_name_far_from_every_option_gets_no_suggestion(string given)
    {
        var e = Assert.Throws<OptionsException>(() => CommandLine.Check([given, "x"]));

        Assert.Equal($"unknown option {given} (--help lists every option).", e.Message);
    }

    [Theory]
    [InlineData("--client", "yarp")]
    [InlineData("--CLIENT", "yarp")]
    [InlineData("--client=yarp")]
    [InlineData("/client", "yarp")]
    [InlineData("/client=yarp")]
    [InlineData("client=yarp")]
    [InlineData("--shareClients.roundRobin", "true", "--urls", "http://127.0.0.1:0")]
    public void Every_form_of_the_configuration_command_line_is_accepted(params string[] args) => CommandLine.Check(args);

    [Theory]
    [InlineData("unexpected argument 'yarp': options are written --name value (--help lists them).", "--client=llhttp", "yarp")]
    [InlineData("--client is given twice.", "--client", "llhttp", "--Client=yarp")]
    [InlineData("--statsInterval needs a value.", "--client", "llhttp", "--statsInterval")]
    public void Stray_words_repeated_names_and_missing_values_are_refused(string message, params string[] args)
    {
        var e = Assert.Throws<OptionsException>(() => CommandLine.Check(args));

        Assert.Equal(message, e.Message);
    }

    private static IConfiguration Configuration(Dictionary<string, string?> settings) =>
        new ConfigurationBuilder().AddInMemoryCollection(settings).Build();

    /// <summary>A configuration that remembers every key asked for.</summary>
    private sealed class RecordingConfiguration(Dictionary<string, string?> settings) : IConfiguration
    {
        private readonly IConfiguration _inner = Configuration(settings);

        public HashSet<string> Read { get; } = new(StringComparer.OrdinalIgnoreCase);

        public string? this[string key]
        {
            get
            {
                Read.Add(key);
                return _inner[key];
            }
            set => throw new NotSupportedException();
        }

        public IEnumerable<IConfigurationSection> GetChildren() => throw new NotSupportedException();

        public IChangeToken GetReloadToken() => throw new NotSupportedException();

        public IConfigurationSection GetSection(string key) => throw new NotSupportedException();
    }
}
