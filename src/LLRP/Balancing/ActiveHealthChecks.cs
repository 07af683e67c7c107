using System.Globalization;
using System.Net;
using Microsoft.Extensions.Logging;

namespace LLRP.Balancing;

/// <summary>
/// Active health: every healthCheckInterval each downstream is sent GET healthCheckPath on the checks' own connections
/// (one HttpClient, never a client's connection, never on the request path). A downstream that fails healthCheckFall
/// probes in a row (no 2xx within healthCheckTimeout) is taken out; one that then answers healthCheckRise probes in a
/// row is back. Changes are logged (out: Warning, back: Information).
/// </summary>
internal sealed class ActiveHealthChecks : IDisposable
{
    private readonly Destination[] _destinations;
    private readonly string _path;
    private readonly TimeSpan _interval;
    private readonly TimeSpan _timeout;
    private readonly int _fall;
    private readonly int _rise;
    private readonly ILogger _logger;
    private readonly HttpClient _client;
    // The downstreams' protocol (--downstreamProtocol): an h2c-only origin would refuse an HTTP/1.1 probe.
    private readonly Version _version;
    private readonly CancellationTokenSource _stop = new();
    // Per destination: successes (> 0) or failures (< 0) in a row; touched by the one probe loop only.
    private readonly int[] _streaks;
    private readonly Task _loop;

    public ActiveHealthChecks(Destination[] destinations, BalancingOptions options, ILogger logger)
    {
        _destinations = destinations;
        _path = options.HealthCheckPath.StartsWith('/') ? options.HealthCheckPath : "/" + options.HealthCheckPath;
        _interval = options.HealthCheckInterval;
        _timeout = options.HealthCheckTimeout;
        _fall = options.HealthCheckFall;
        _rise = options.HealthCheckRise;
        _logger = logger;
        _streaks = new int[destinations.Length];
        _version = options.DownstreamVersion;
        _client = new HttpClient(new SocketsHttpHandler
        {
            UseProxy = false,
            AllowAutoRedirect = false,
            AutomaticDecompression = DecompressionMethods.None,
            UseCookies = false,
            ConnectTimeout = options.HealthCheckTimeout,
            // Probes of https downstreams trust what the exchanges trust.
            SslOptions = new() { RemoteCertificateValidationCallback = options.DownstreamTrust.Callback },
        })
        {
            // Each probe has its own deadline (healthCheckTimeout) through its token.
            Timeout = Timeout.InfiniteTimeSpan,
        };
        _loop = RunAsync();
    }

    private async Task RunAsync()
    {
        using var timer = new PeriodicTimer(_interval);
        try
        {
            do
            {
                var probes = new Task[_destinations.Length];
                for (var i = 0; i < probes.Length; i++)
                {
                    probes[i] = ProbeAsync(i);
                }
                await Task.WhenAll(probes);
            }
            while (await timer.WaitForNextTickAsync(_stop.Token));
        }
        catch (OperationCanceledException) when (_stop.IsCancellationRequested)
        {
        }
    }

    private async Task ProbeAsync(int index)
    {
        var destination = _destinations[index];
        string? failure = null;
        using (var deadline = CancellationTokenSource.CreateLinkedTokenSource(_stop.Token))
        {
            deadline.CancelAfter(_timeout);
            try
            {
                using var request = new HttpRequestMessage(HttpMethod.Get, destination.Id + _path)
                {
                    Version = _version,
                    VersionPolicy = HttpVersionPolicy.RequestVersionExact,
                };
                using var response = await _client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, deadline.Token);
                if (!response.IsSuccessStatusCode)
                {
                    failure = string.Create(CultureInfo.InvariantCulture, $"{_path} answered {(int)response.StatusCode}");
                }
            }
            catch (OperationCanceledException) when (_stop.IsCancellationRequested)
            {
                return;
            }
            catch (OperationCanceledException)
            {
                failure = $"{_path} gave no answer within {_timeout.TotalSeconds.ToString(CultureInfo.InvariantCulture)} s";
            }
            catch (HttpRequestException e)
            {
                failure = $"{_path} failed: {e.Message}";
            }
        }
        Record(index, destination, failure);
    }

    private void Record(int index, Destination destination, string? failure)
    {
        var streak = _streaks[index];
        streak = failure is null ? Math.Max(streak, 0) + 1 : Math.Min(streak, 0) - 1;
        _streaks[index] = streak;
        if (failure is not null && !destination.IsActiveOut && -streak >= _fall)
        {
            destination.SetActiveOut(true);
            _logger.LogWarning("Downstream {Downstream} taken out (active health, {Count} failed checks in a row): {Reason}", destination.Id, -streak, failure);
        }
        else if (failure is null && destination.IsActiveOut && streak >= _rise)
        {
            destination.SetActiveOut(false);
            _logger.LogInformation("Downstream {Downstream} back in (active health, {Count} passed checks in a row)", destination.Id, streak);
        }
    }

    public void Dispose()
    {
        _stop.Cancel();
        // A probe in flight ends at once on cancellation; waiting keeps the client alive until then.
        _loop.Wait(TimeSpan.FromSeconds(5));
        _client.Dispose();
        _stop.Dispose();
    }
}
