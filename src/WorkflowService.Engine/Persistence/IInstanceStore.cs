namespace WorkflowService.Engine.Persistence;

/// <summary>
/// Workflow instances and their history. The writes of a wait point (<see cref="CommitAsync"/>) are one transaction:
/// the instance, its history, the signals and tasks it creates and the fate of the signals it consumed. A read for a
/// tenant's request takes the tenant, or an instance read in it (its history is its tenant's); the reads marked
/// <see cref="EngineOnlyAttribute"/> are the engine's own.
/// </summary>
public interface IInstanceStore
{
    /// <summary>Writes a new instance; throws <see cref="DuplicateInstanceException"/> on a repeated idempotency or business key.</summary>
    Task CreateInstanceAsync(WaitPointCommit commit, CancellationToken cancellationToken);
    /// <summary>Writes a wait point; throws <see cref="ConcurrencyConflictException"/> or <see cref="LeaseLostException"/>.</summary>
    Task CommitAsync(WaitPointCommit commit, CancellationToken cancellationToken);
    /// <summary>
    /// The instance of <paramref name="tenant"/> with this id; null when there is none, or when it is another tenant's (to
    /// any other tenant it does not exist).
    /// </summary>
    Task<WorkflowInstance?> GetInstanceAsync(string tenant, Guid id, CancellationToken cancellationToken);
    /// <summary>The instance with this id, whatever its tenant: for the engine's own work (a worker resuming the instance of a signal it claimed).</summary>
    [EngineOnly]
    Task<WorkflowInstance?> GetInstanceForEngineAsync(Guid id, CancellationToken cancellationToken);
    /// <summary>The instances of these ids that exist, whatever their tenant, in one read (the change watcher's recheck).</summary>
    [EngineOnly]
    Task<IReadOnlyList<WorkflowInstance>> GetInstancesAsync(IReadOnlyCollection<Guid> ids, CancellationToken cancellationToken);
    /// <summary>
    /// The instance of <paramref name="tenant"/> with this idempotency key, or else the open instance with this definition
    /// and business key (a key is unique among open instances; ended ones may share it).
    /// </summary>
    Task<WorkflowInstance?> FindInstanceAsync(string tenant, string? idempotencyKey, string definitionName, string? businessKey, CancellationToken cancellationToken);
    /// <summary>
    /// The id of the newest instance of <paramref name="tenant"/>'s definition with this business key, open or ended (an
    /// ended one's key may repeat: the newest is the one a caller means); null when none has it. Read on the primary.
    /// </summary>
    Task<Guid?> FindNewestInstanceIdAsync(string tenant, string definitionName, string businessKey, CancellationToken cancellationToken);
    /// <summary>The whole history of an instance read in its tenant, oldest first (a diagram, a replay's check); callers page with the overload.</summary>
    Task<IReadOnlyList<HistoryEvent>> GetHistoryAsync(WorkflowInstance instance, CancellationToken cancellationToken);
    /// <summary>
    /// Up to <paramref name="limit"/> events after sequence <paramref name="afterSequence"/> (from the first when null),
    /// oldest first, reading only the stored rows those events are in; the total is the instance's history length (the
    /// caller has read the instance in its tenant already).
    /// </summary>
    Task<KeysetPage<HistoryEvent>> GetHistoryAsync(WorkflowInstance instance, int? afterSequence, int limit, CancellationToken cancellationToken);
    /// <summary>
    /// Whether <see cref="CommitAsync"/> honours <see cref="WaitPointCommit.RequireNoDueSignals"/>: without it, signals
    /// are never applied on arrival, only queued.
    /// </summary>
    bool GuardsDueSignals { get; }
}
