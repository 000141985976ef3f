namespace WorkflowService.Engine.Persistence;

/// <summary>Human tasks: the inbox's queries, claims and completions.</summary>
public interface ITaskStore
{
    /// <summary>The task of <paramref name="tenant"/> with this id; null when there is none, or it is another tenant's.</summary>
    Task<HumanTask?> GetTaskAsync(string tenant, Guid taskId, CancellationToken cancellationToken);
    Task<Page<HumanTask>> QueryTasksAsync(TaskQuery query, CancellationToken cancellationToken);
    /// <summary>Claims an open task for <paramref name="user"/>, writing <paramref name="deliveries"/> (its task.claimed events) with the claim.</summary>
    Task<TaskClaimOutcome> ClaimTaskAsync(Guid taskId, string user, IReadOnlyList<Events.EventDelivery> deliveries, CancellationToken cancellationToken);
    /// <summary>Completes the task and queues the signal that resumes its instance, atomically.</summary>
    Task<TaskCompletionOutcome> CompleteTaskAsync(Guid taskId, string? user, string? resultJson, SignalMessage resume, CancellationToken cancellationToken);
}
