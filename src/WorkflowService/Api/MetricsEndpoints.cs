using System.Security.Claims;
using Microsoft.AspNetCore.Http.HttpResults;
using WorkflowService.Engine.Runtime;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Security;

namespace WorkflowService.Api;

/// <summary>
/// This node's engine counters since it started (also exported as System.Diagnostics.Metrics "WorkflowService.Engine"), and
/// the runtime's JIT work so far (methods compiled, time spent compiling): a node still compiling is not yet at its
/// steady-state speed; the long-polls this node holds now; the rows this node's retention job deleted (every table); and how long due signals waited for a worker (<c>signalAgeAtClaim</c>: due time, or creation, to
/// claim, by the store's clock), which is the wake-up's latency where the signal was taken by another node. The events
/// outbox: deliveries this node's commits wrote, and of this node's posts those delivered, retried and dead-lettered, with
/// their lag (<c>eventLag</c>: commit to the receiver's 2xx, by the store's clock).
/// </summary>
public sealed record NodeMetricsView(
    string NodeId,
    long SignalsHandled,
    long RuntimeConflicts,
    long RunsRetried,
    long SignalsDeadLettered,
    long IdlePolls,
    bool WakeUpHealthy,
    long WakeUpsRequested,
    long WakeUpsSent,
    long JitCompiledMethods,
    double JitCompilationMs,
    int LongPollsWaiting,
    LatencyHistogramView SignalAgeAtClaim,
    long RetentionRowsDeleted,
    long EventsWritten,
    long EventsDelivered,
    long EventDeliveryRetries,
    long EventsDeadLettered,
    LatencyHistogramView EventLag);

/// <summary>
/// Durations counted in fixed buckets since the node started: <c>buckets[i]</c> counts those above the previous bucket's
/// <c>upToMs</c> and at most its own (the last bucket, with no <c>upToMs</c>, everything above). Subtract two readings for a
/// period; a percentile is the bucket it falls in.
/// </summary>
public sealed record LatencyHistogramView(long Count, double SumMs, IReadOnlyList<LatencyBucketView> Buckets)
{
    public static LatencyHistogramView From(LatencyHistogram histogram)
    {
        var counts = histogram.Counts();
        var buckets = counts.Select((count, i) => new LatencyBucketView(i < LatencyHistogram.UpperBoundsMs.Count ? LatencyHistogram.UpperBoundsMs[i] : null, count)).ToList();
        return new LatencyHistogramView(counts.Sum(), histogram.SumMs, buckets);
    }
}

/// <summary>One bucket: how many durations were at most <c>upToMs</c> and above the bucket before it (null: no bound).</summary>
public sealed record LatencyBucketView(double? UpToMs, long Count);

/// <summary>
/// Operators' view of one node. Its counters cover every tenant's work, so only callers of the default tenant (no tenant
/// claim) read them; a tenant's caller gets 403.
/// </summary>
public static class MetricsEndpoints
{
    public static RouteGroupBuilder MapMetricsEndpoints(this IEndpointRouteBuilder routes)
    {
        var group = routes.MapGroup("/metrics").WithTags("Operations").RequireAuthorization(Policies.Operate);
        group.MapGet("/", Get).WithName("GetNodeMetrics")
            .WithSummary("This node's counters: signals handled, conflicts, retries, dead letters, idle polls, wake-ups, JIT work, long-polls waiting, signal age at claim, events delivered and their lag");
        return group;
    }

    private static Results<Ok<NodeMetricsView>, ProblemHttpResult> Get(EngineMetrics metrics, NodeIdentity node, IWakeUpTransport wakeUp, LongPollGate longPolls, ClaimsPrincipal user) =>
        user.Tenant().Length > 0
            ? Problems.Forbidden("The node's metrics count the work of every tenant; only callers of the default tenant (credentials without a tenant) may read them.")
            : TypedResults.Ok(new NodeMetricsView(
                node.Id, metrics.SignalsHandled, metrics.Conflicts, metrics.Retries, metrics.DeadLetters, metrics.IdlePolls,
                wakeUp.IsHealthy, wakeUp.NotificationsRequested, wakeUp.NotificationsSent,
                System.Runtime.JitInfo.GetCompiledMethodCount(), System.Runtime.JitInfo.GetCompilationTime().TotalMilliseconds,
                longPolls.InUse, LatencyHistogramView.From(metrics.SignalAgeAtClaim), metrics.RetentionDeleted,
                metrics.EventsWritten, metrics.EventsDelivered, metrics.EventDeliveryRetries, metrics.EventsDeadLettered,
                LatencyHistogramView.From(metrics.EventLag)));
}
