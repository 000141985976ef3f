namespace WorkflowService.Engine.Persistence;

/// <summary>Human tasks: the inbox's queries, claims and completions.</summary>
public interface ITaskStore
{
    Task<HumanTask?> GetTaskAsync(Guid taskId, CancellationToken cancellationToken);
    Task<Page<HumanTask>> QueryTasksAsync(TaskQuery query, CancellationToken cancellationToken);
    Task<TaskClaimOutcome> ClaimTaskAsync(Guid taskId, string user, CancellationToken cancellationToken);
    /// <summary>Completes the task and queues the signal that resumes its instance, atomically.</summary>
    Task<TaskCompletionOutcome> CompleteTaskAsync(Guid taskId, string? user, string? resultJson, SignalMessage resume, CancellationToken cancellationToken);
}
