using LLRP.Jobs;

// benchmarks.yml's jobs, one subcommand each; crank and the runner call them through crank/<name>-job.sh.
var jobs = new Dictionary<string, Func<string[], int>>(StringComparer.Ordinal)
{
    ["ab"] = AbJob.Run,
    ["caddy"] = CaddyJob.Run,
    ["fixedrate"] = FixedRateJob.Run,
    ["h2load"] = H2LoadJob.Run,
    ["h2o"] = H2oJob.Run,
    ["haproxy"] = HaproxyJob.Run,
    ["nginx"] = NginxJob.Run,
    ["ramp"] = RampJob.Run,
    ["websocket"] = WebSocketJob.Run,
    ["wrk"] = WrkJob.Run,
};

if (args.Length == 0 || !jobs.TryGetValue(args[0], out var job))
{
    Console.Error.WriteLine($"jobs: the first argument names the job: {string.Join('|', jobs.Keys)}");
    return JobFailure.Usage;
}
try
{
    return job(args[1..]);
}
catch (JobFailure e)
{
    Console.Out.Flush();
    if (e.Message.Length > 0)
    {
        Console.Error.WriteLine($"{args[0]}-job: {e.Message}");
    }
    return e.ExitCode;
}
