using Microsoft.Extensions.DependencyInjection;
using System.Diagnostics.CodeAnalysis;
using System.Diagnostics.Metrics;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Engine.Runtime;

/// <summary>
/// The gauges that count the store: <c>workflow.instances</c>, how many instances are in each status, and
/// <c>workflow.events.pending</c>, the events outbox's backlog, across tenants. A collector's read never waits for the
/// store: it gets the last count, and starts a new one in the background when that count is older than
/// <see cref="TelemetryOptions.InstanceCountInterval"/>. So the store is counted only while a collector reads (a node
/// without telemetry never counts), at most once per interval. While counts fail (the store is down) the gauges report
/// nothing rather than an old figure.
/// </summary>
public sealed partial class StoreCountGauges(
    [FromKeyedServices(OperatorReads.MayBeStale)] IOperatorQueries queries,
    IDeliveryQueue deliveries,
    Events.SubscriptionDirectory subscriptions,
    EngineMetrics metrics,
    TimeProvider time,
    IOptions<TelemetryOptions> options,
    ILogger<StoreCountGauges> logger) : IHostedService, IDisposable
{
    private static readonly InstanceStatus[] Statuses = Enum.GetValues<InstanceStatus>();

    private readonly CancellationTokenSource _stopping = new();
    private volatile StoreCounts? _counts;
    private long _countedAt = long.MinValue;
    private int _counting;
    private int _stopped;
    private int _disposed;

    public Task StartAsync(CancellationToken cancellationToken)
    {
        metrics.ObserveGauge("workflow.instances", "{instance}",
            "instances in each status (attribute workflow.instance.status), across tenants, as last counted", ReadInstances);
        metrics.ObserveGauge("workflow.events.pending", "{event}",
            "event deliveries waiting to be delivered (due, retrying, or held back by an earlier one), across tenants, as last counted",
            ReadPendingDeliveries);
        return Task.CompletedTask;
    }

    public async Task StopAsync(CancellationToken cancellationToken)
    {
        // A host may stop a service after disposing it (a test host torn down twice): stopping then has nothing to do.
        if (Interlocked.Exchange(ref _stopped, 1) == 0 && Volatile.Read(ref _disposed) == 0)
        {
            await _stopping.CancelAsync().ConfigureAwait(false);
        }
    }

    public void Dispose()
    {
        Volatile.Write(ref _stopped, 1);
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            _stopping.Dispose();
        }
    }

    private IEnumerable<Measurement<long>> ReadInstances() =>
        Counted() is { } counts
            ? Statuses.Select(status => new Measurement<long>(counts.Instances.GetValueOrDefault(status),
                new KeyValuePair<string, object?>("workflow.instance.status", status.ToString())))
            : [];

    private IEnumerable<Measurement<long>> ReadPendingDeliveries() =>
        Counted() is { } counts ? [new Measurement<long>(counts.PendingDeliveries)] : [];

    /// <summary>The last counts, starting a new count when they are older than the interval.</summary>
    private StoreCounts? Counted()
    {
        var countedAt = Interlocked.Read(ref _countedAt);
        if ((countedAt == long.MinValue || time.GetElapsedTime(countedAt) >= options.Value.InstanceCountInterval)
            && Interlocked.CompareExchange(ref _counting, 1, 0) == 0)
        {
            // The count belongs to no collector's request: it runs outside the reader's trace and logging scope.
            using (ExecutionContext.SuppressFlow())
            {
                _ = Task.Run(CountAsync, CancellationToken.None);
            }
        }

        return _counts;
    }

    [SuppressMessage("Design", "CA1031:Do not catch general exception types", Justification = "A background count: whatever ends it is logged and leaves the gauge empty; letting it escape would fault an unobserved task.")]
    private async Task CountAsync()
    {
        try
        {
            // Bounded by the interval: a slow count never runs into the next one.
            using var bounded = CancellationTokenSource.CreateLinkedTokenSource(_stopping.Token);
            bounded.CancelAfter(options.Value.InstanceCountInterval);
            var instances = await queries.CountInstancesByStatusAsync(bounded.Token).ConfigureAwait(false);
            // No subscription anywhere: no delivery can be pending (a subscription's deliveries go with it).
            var pending = subscriptions.IsEmpty ? 0 : await deliveries.CountPendingDeliveriesAsync(bounded.Token).ConfigureAwait(false);
            _counts = new StoreCounts(instances, pending);
        }
        catch (Exception e)
        {
            // Stopping (the token, or the source already disposed) ends the count quietly; anything else is said once.
            _counts = null;
            if (e is not (OperationCanceledException or ObjectDisposedException) || !IsStopping)
            {
                LogCountFailed(logger, e.GetType().Name);
            }
        }
        finally
        {
            Interlocked.Exchange(ref _countedAt, time.GetTimestamp());
            Volatile.Write(ref _counting, 0);
        }
    }

    private bool IsStopping => Volatile.Read(ref _stopped) == 1;

    [LoggerMessage(Level = LogLevel.Warning, Message = "Counting instances by status and pending deliveries for the store's gauges failed ({Error}); they report nothing until a count succeeds")]
    private static partial void LogCountFailed(ILogger logger, string error);

    private sealed record StoreCounts(IReadOnlyDictionary<InstanceStatus, long> Instances, long PendingDeliveries);
}
