using System.Security.Claims;
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
            .WithSummary("This node's counters: signals handled, conflicts, retries, dead letters, idle polls, wake-ups, JIT work");
        return group;
    }

    private static Results<Ok<NodeMetricsView>, ProblemHttpResult> Get(EngineMetrics metrics, NodeIdentity node, IWakeUpTransport wakeUp, ClaimsPrincipal user) =>
        user.Tenant().Length > 0
            ? Problems.Forbidden("The node's metrics count the work of every tenant; only callers of the default tenant (credentials without a tenant) may read them.")
            : TypedResults.Ok(new NodeMetricsView(
                node.Id, metrics.SignalsHandled, metrics.Conflicts, metrics.Retries, metrics.DeadLetters, metrics.IdlePolls,
                wakeUp.IsHealthy, wakeUp.NotificationsRequested, wakeUp.NotificationsSent,
                System.Runtime.JitInfo.GetCompiledMethodCount(), System.Runtime.JitInfo.GetCompilationTime().TotalMilliseconds));
}
