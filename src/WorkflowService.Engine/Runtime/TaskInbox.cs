using WorkflowService.Engine.Persistence;
using WorkflowService.Engine.WakeUp;

namespace WorkflowService.Engine.Runtime;

/// <summary>Human tasks: the inbox query, claiming, and completion that resumes the waiting instance.</summary>
public sealed class TaskInbox(IWorkflowStore store, IWakeUpTransport wakeUp, TimeProvider time)
{
    public Task<Page<HumanTask>> QueryAsync(TaskQuery query, CancellationToken cancellationToken) =>
        store.QueryTasksAsync(query, cancellationToken);

    public Task<HumanTask?> GetAsync(Guid taskId, CancellationToken cancellationToken) =>
        store.GetTaskAsync(taskId, cancellationToken);

    public Task<TaskClaimOutcome> ClaimAsync(Guid taskId, string user, CancellationToken cancellationToken) =>
        store.ClaimTaskAsync(taskId, user, cancellationToken);

    public async Task<TaskCompletionOutcome> CompleteAsync(Guid taskId, string? user, string? resultJson, CancellationToken cancellationToken)
    {
        var task = await store.GetTaskAsync(taskId, cancellationToken).ConfigureAwait(false);
        if (task is null)
        {
            return TaskCompletionOutcome.NotFound;
        }

        var resume = new SignalMessage
        {
            Id = Guid.CreateVersion7(),
            InstanceId = task.InstanceId,
            Name = SignalMessage.TaskSignal,
            PayloadJson = resultJson,
            TaskId = task.Id,
            Status = SignalStatus.Pending,
            DueAtMs = store.NowMs(),
            CreatedAt = time.GetUtcNow().UtcDateTime,
        };
        var outcome = await store.CompleteTaskAsync(taskId, user, resultJson, resume, cancellationToken).ConfigureAwait(false);
        if (outcome == TaskCompletionOutcome.Completed)
        {
            wakeUp.Notify(resume.DueAtMs);
        }

        return outcome;
    }
}
