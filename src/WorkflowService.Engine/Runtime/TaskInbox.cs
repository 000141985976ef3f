using WorkflowService.Engine.Events;
using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.WakeUp;

namespace WorkflowService.Engine.Runtime;

/// <summary>Human tasks: the inbox query, claiming, and completion that resumes the waiting instance.</summary>
public sealed class TaskInbox(ITaskStore tasks, IInstanceStore instances, IStoreClock clock, WaitPointWriter writer, EventOutbox outbox,
    EngineMetrics metrics)
{
    public Task<Page<HumanTask>> QueryAsync(TaskQuery query, CancellationToken cancellationToken) =>
        tasks.QueryTasksAsync(query, cancellationToken);

    /// <summary>The task of <paramref name="tenant"/> with this id; another tenant's is as unknown.</summary>
    public Task<HumanTask?> GetAsync(string tenant, Guid taskId, CancellationToken cancellationToken) =>
        tasks.GetTaskAsync(tenant, taskId, cancellationToken);

    /// <summary>Claims <paramref name="task"/> (read in its caller's tenant) for <paramref name="user"/>.</summary>
    public async Task<TaskClaimOutcome> ClaimAsync(HumanTask task, string user, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(task);
        // Its task.claimed events, when a subscription of the task's tenant takes them: they are written with the claim.
        List<EventDelivery> deliveries = [];
        if (!outbox.IsIdle && task.Status == HumanTaskStatus.Open && outbox.Takes(task.Tenant, EventTypes.TaskClaimed, task.DefinitionName)
            && await instances.GetInstanceAsync(task.Tenant, task.InstanceId, cancellationToken).ConfigureAwait(false) is { } instance)
        {
            deliveries = outbox.ForTaskClaim(instance, task, user, clock.NowMs());
        }

        var outcome = await tasks.ClaimTaskAsync(task.Id, user, deliveries, cancellationToken).ConfigureAwait(false);
        // Written with the claim only: a claim that lost wrote none.
        if (deliveries.Count > 0 && outcome == TaskClaimOutcome.Claimed)
        {
            outbox.Written(deliveries.Count);
        }

        return outcome;
    }

    /// <summary>Completes the task of <paramref name="tenant"/> and queues the signal that resumes its instance; another tenant's is not found.</summary>
    public async Task<TaskCompletionOutcome> CompleteAsync(string tenant, Guid taskId, string? user, string? resultJson, CancellationToken cancellationToken)
    {
        var task = await tasks.GetTaskAsync(tenant, taskId, cancellationToken).ConfigureAwait(false);
        if (task is null)
        {
            return TaskCompletionOutcome.NotFound;
        }

        var now = clock.Now();
        var resume = new SignalMessage
        {
            Id = Guid.CreateVersion7(),
            InstanceId = task.InstanceId,
            Name = SignalMessage.TaskSignal,
            PayloadJson = resultJson,
            SubjectId = task.Id,
            Actor = user,
            Status = SignalStatus.Pending,
            DueAtMs = now.UnixMs,
            CreatedAt = now.UtcDateTime,
            TraceParent = EngineTelemetry.CurrentTraceParent(),
        };
        var outcome = await writer.CompleteTaskAsync(taskId, user, resultJson, resume, cancellationToken).ConfigureAwait(false);
        if (outcome == TaskCompletionOutcome.Completed)
        {
            metrics.SignalAccepted();
        }

        return outcome;
    }
}
