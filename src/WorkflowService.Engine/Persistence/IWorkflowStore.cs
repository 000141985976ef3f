namespace WorkflowService.Engine.Persistence;

/// <summary>
/// The durable source of truth. Every method is one round of work against the store; the writes of a wait point
/// (<see cref="CommitAsync"/>) are one transaction. "Now" for due times and leases is the store's clock.
/// </summary>
public interface IWorkflowStore
{
    /// <summary>Creates the schema (collections, tables, indexes) before any other call; safe on many nodes at once.</summary>
    Task InitializeAsync(CancellationToken cancellationToken);

    /// <summary>The store's clock, in Unix milliseconds.</summary>
    long NowMs();

    // Definitions
    Task<DefinitionRecord> PublishDefinitionAsync(string name, Func<int, DefinitionRecord> build, CancellationToken cancellationToken);
    Task<DefinitionRecord?> GetDefinitionAsync(string name, int? version, CancellationToken cancellationToken);
    Task<IReadOnlyList<DefinitionSummary>> ListDefinitionsAsync(CancellationToken cancellationToken);
    Task<IReadOnlyList<DefinitionRecord>> ListDefinitionVersionsAsync(string name, CancellationToken cancellationToken);

    // Instances
    /// <summary>Writes a new instance; throws <see cref="DuplicateInstanceException"/> on a repeated idempotency or business key.</summary>
    Task CreateInstanceAsync(WaitPointCommit commit, CancellationToken cancellationToken);
    /// <summary>Writes a wait point; throws <see cref="ConcurrencyConflictException"/> or <see cref="LeaseLostException"/>.</summary>
    Task CommitAsync(WaitPointCommit commit, CancellationToken cancellationToken);
    Task<WorkflowInstance?> GetInstanceAsync(Guid id, CancellationToken cancellationToken);
    /// <summary>The instances of these ids that exist, in one read (the instances of a batch of claimed signals).</summary>
    Task<IReadOnlyList<WorkflowInstance>> GetInstancesAsync(IReadOnlyCollection<Guid> ids, CancellationToken cancellationToken);
    Task<WorkflowInstance?> FindInstanceAsync(string? idempotencyKey, string definitionName, string? businessKey, CancellationToken cancellationToken);
    Task<Page<WorkflowInstance>> QueryInstancesAsync(InstanceQuery query, CancellationToken cancellationToken);
    Task<IReadOnlyList<HistoryEvent>> GetHistoryAsync(Guid instanceId, CancellationToken cancellationToken);

    // Signals
    /// <summary>Queues a signal; returns the existing one when its idempotency key was used before for the instance.</summary>
    Task<(SignalMessage Signal, bool Created)> EnqueueSignalAsync(SignalMessage signal, CancellationToken cancellationToken);
    /// <summary>
    /// Queues a signal only while its instance exists and has not ended, in one round trip; returns a null signal when the
    /// instance is missing or ended (the caller reads it to tell which), and the existing signal for a repeated idempotency key.
    /// </summary>
    Task<(SignalMessage? Signal, bool Created)> EnqueueSignalIfOpenAsync(SignalMessage signal, CancellationToken cancellationToken);
    /// <summary>Leases up to <paramref name="max"/> due signals to <paramref name="owner"/> (attempts incremented).</summary>
    Task<IReadOnlyList<SignalMessage>> ClaimDueSignalsAsync(string owner, int max, TimeSpan lease, CancellationToken cancellationToken);
    /// <summary>
    /// <see cref="ClaimDueSignalsAsync"/>, with each signal's instance read as of the claim: one round trip where the
    /// database allows (the workers' claim). In due order.
    /// </summary>
    Task<IReadOnlyList<ClaimedSignal>> ClaimDueWorkAsync(string owner, int max, TimeSpan lease, CancellationToken cancellationToken);
    /// <summary>When the next pending signal becomes claimable (Unix ms), or null when none is pending.</summary>
    Task<long?> GetNextDueAsync(CancellationToken cancellationToken);
    /// <summary>Gives a claimed signal back for a later retry; false when the lease was lost.</summary>
    Task<bool> ReleaseSignalAsync(Guid signalId, long leaseToken, long dueAtMs, string? error, CancellationToken cancellationToken);
    /// <summary>Dead-letters a claimed signal that cannot be applied to any instance; false when the lease was lost.</summary>
    Task<bool> DeadLetterSignalAsync(Guid signalId, long leaseToken, string error, CancellationToken cancellationToken);
    /// <summary>Releases every lease held by <paramref name="owner"/> (graceful shutdown).</summary>
    Task<int> ReleaseLeasesAsync(string owner, CancellationToken cancellationToken);
    Task<SignalMessage?> GetSignalAsync(Guid signalId, CancellationToken cancellationToken);
    Task<IReadOnlyList<SignalMessage>> GetParkedSignalsAsync(Guid instanceId, CancellationToken cancellationToken);
    Task<IReadOnlyList<SignalMessage>> ListSignalsAsync(Guid instanceId, CancellationToken cancellationToken);
    /// <summary>Signals across instances, e.g. the claims a node holds (operators' view of the queue).</summary>
    Task<Page<SignalMessage>> QuerySignalsAsync(SignalQuery query, CancellationToken cancellationToken);
    Task<Page<SignalMessage>> ListDeadLettersAsync(int offset, int limit, CancellationToken cancellationToken);
    /// <summary>Makes a dead-lettered signal pending again and a faulted instance waiting again, atomically.</summary>
    Task<ReplayOutcome> ReplayDeadLetterAsync(Guid signalId, HistoryEvent? replayEvent, CancellationToken cancellationToken);

    // Tasks
    Task<HumanTask?> GetTaskAsync(Guid taskId, CancellationToken cancellationToken);
    Task<Page<HumanTask>> QueryTasksAsync(TaskQuery query, CancellationToken cancellationToken);
    Task<TaskClaimOutcome> ClaimTaskAsync(Guid taskId, string user, CancellationToken cancellationToken);
    /// <summary>Completes the task and queues the signal that resumes its instance, atomically.</summary>
    Task<TaskCompletionOutcome> CompleteTaskAsync(Guid taskId, string? user, string? resultJson, SignalMessage resume, CancellationToken cancellationToken);
}
