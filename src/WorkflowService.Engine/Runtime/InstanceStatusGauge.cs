using System.Diagnostics.Metrics;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Runtime;

/// <summary>
/// The <c>workflow.instances</c> gauge: how many instances are in each status, across tenants. A collector's read never
/// waits for the store: it gets the last count, and starts a new one in the background when that count is older than
/// <see cref="TelemetryOptions.InstanceCountInterval"/>. So the store is counted only while a collector reads (a node
/// without telemetry never counts), at most once per interval. While counts fail (the store is down) the gauge reports
/// nothing rather than an old figure.
/// </summary>
public sealed partial class InstanceStatusGauge(
    IOperatorQueries queries,
    EngineMetrics metrics,
    TimeProvider time,
    IOptions<TelemetryOptions> options,
    ILogger<InstanceStatusGauge> logger) : IHostedService, IDisposable
{
    private static readonly InstanceStatus[] Statuses = Enum.GetValues<InstanceStatus>();

    private readonly CancellationTokenSource _stopping = new();
    private volatile IReadOnlyDictionary<InstanceStatus, long>? _counts;
    private long _countedAt = long.MinValue;
    private int _counting;

    public Task StartAsync(CancellationToken cancellationToken)
    {
        metrics.ObserveGauge("workflow.instances", "{instance}",
            "instances in each status (attribute workflow.instance.status), across tenants, as last counted", Read);
        return Task.CompletedTask;
    }

    public async Task StopAsync(CancellationToken cancellationToken) => await _stopping.CancelAsync().ConfigureAwait(false);

    public void Dispose() => _stopping.Dispose();

    private IEnumerable<Measurement<long>> Read()
    {
        var countedAt = Interlocked.Read(ref _countedAt);
        if ((countedAt == long.MinValue || time.GetElapsedTime(countedAt) >= options.Value.InstanceCountInterval)
            && !_stopping.IsCancellationRequested && Interlocked.CompareExchange(ref _counting, 1, 0) == 0)
        {
            _ = Task.Run(CountAsync, CancellationToken.None);
        }

        return _counts is { } counts
            ? Statuses.Select(status => new Measurement<long>(counts.GetValueOrDefault(status),
                new KeyValuePair<string, object?>("workflow.instance.status", status.ToString())))
            : [];
    }

    private async Task CountAsync()
    {
        // Bounded by the interval: a slow count never runs into the next one.
        using var bounded = CancellationTokenSource.CreateLinkedTokenSource(_stopping.Token);
        bounded.CancelAfter(options.Value.InstanceCountInterval);
        try
        {
            _counts = await queries.CountInstancesByStatusAsync(bounded.Token).ConfigureAwait(false);
        }
        catch (Exception e) when (!_stopping.IsCancellationRequested)
        {
            _counts = null;
            LogCountFailed(logger, e.GetType().Name);
        }
        catch (OperationCanceledException)
        {
            // Stopping.
        }
        finally
        {
            Interlocked.Exchange(ref _countedAt, time.GetTimestamp());
            Volatile.Write(ref _counting, 0);
        }
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "Counting instances by status for the workflow.instances gauge failed ({Error}); it reports nothing until a count succeeds")]
    private static partial void LogCountFailed(ILogger logger, string error);
}
