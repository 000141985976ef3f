using Microsoft.AspNetCore.Http.HttpResults;
using WorkflowService.Engine.Runtime;
using WorkflowService.Engine.WakeUp;
using WorkflowService.Security;

namespace WorkflowService.Api;

/// <summary>
/// This node's engine counters since it started (also exported as System.Diagnostics.Metrics "WorkflowService.Engine"), and
/// the runtime's JIT work so far (methods compiled, time spent compiling): a node still compiling is not yet at its
/// steady-state speed.
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
    double JitCompilationMs);

/// <summary>Operators' view of one node.</summary>
public static class MetricsEndpoints
{
    public static RouteGroupBuilder MapMetricsEndpoints(this IEndpointRouteBuilder routes)
    {
        var group = routes.MapGroup("/metrics").WithTags("Operations").RequireAuthorization(Policies.Operate);
        group.MapGet("/", Get).WithName("GetNodeMetrics")
            .WithSummary("This node's counters: signals handled, conflicts, retries, dead letters, idle polls, wake-ups, JIT work");
        return group;
    }

    private static Ok<NodeMetricsView> Get(EngineMetrics metrics, NodeIdentity node, IWakeUpTransport wakeUp) =>
        TypedResults.Ok(new NodeMetricsView(
            node.Id, metrics.SignalsHandled, metrics.Conflicts, metrics.Retries, metrics.DeadLetters, metrics.IdlePolls,
            wakeUp.IsHealthy, wakeUp.NotificationsRequested, wakeUp.NotificationsSent,
            System.Runtime.JitInfo.GetCompiledMethodCount(), System.Runtime.JitInfo.GetCompilationTime().TotalMilliseconds));
}
