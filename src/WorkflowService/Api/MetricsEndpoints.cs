using Microsoft.AspNetCore.Http.HttpResults;
using WorkflowService.Engine.Runtime;
using WorkflowService.Engine.WakeUp;

namespace WorkflowService.Api;

/// <summary>This node's engine counters since it started (also exported as System.Diagnostics.Metrics "WorkflowService.Engine").</summary>
public sealed record NodeMetricsView(
    string NodeId,
    long SignalsHandled,
    long RuntimeConflicts,
    long RunsRetried,
    long SignalsDeadLettered,
    long IdlePolls,
    bool WakeUpHealthy,
    long WakeUpsRequested,
    long WakeUpsSent);

/// <summary>Operators' view of one node.</summary>
public static class MetricsEndpoints
{
    public static RouteGroupBuilder MapMetricsEndpoints(this IEndpointRouteBuilder routes)
    {
        var group = routes.MapGroup("/metrics").WithTags("Operations");
        group.MapGet("/", Get).WithName("GetNodeMetrics")
            .WithSummary("This node's counters: signals handled, conflicts, retries, dead letters, idle polls, wake-ups");
        return group;
    }

    private static Ok<NodeMetricsView> Get(EngineMetrics metrics, NodeIdentity node, IWakeUpTransport wakeUp) =>
        TypedResults.Ok(new NodeMetricsView(
            node.Id, metrics.SignalsHandled, metrics.Conflicts, metrics.Retries, metrics.DeadLetters, metrics.IdlePolls,
            wakeUp.IsHealthy, wakeUp.NotificationsRequested, wakeUp.NotificationsSent));
}
