namespace WorkflowService.Engine.Persistence;

/// <summary>
/// Operators' views across instances and the signal queue: paged lists and queries, read-only, each within one tenant
/// (a signal belongs to its instance's tenant).
/// </summary>
public interface IOperatorQueries
{
    Task<Page<WorkflowInstance>> QueryInstancesAsync(InstanceQuery query, CancellationToken cancellationToken);
    /// <summary>
    /// How many instances there are in each status, across every tenant (operators' gauge); statuses with none are left
    /// out. Reads every instance's status: callers bound how often (see <see cref="Runtime.StoreCountGauges"/>).
    /// </summary>
    Task<IReadOnlyDictionary<InstanceStatus, long>> CountInstancesByStatusAsync(CancellationToken cancellationToken);
    /// <summary>
    /// How many instances of <paramref name="filter"/>'s tenant match its filters in each status (its status, paging and
    /// position are ignored); statuses with none are left out.
    /// </summary>
    Task<IReadOnlyDictionary<InstanceStatus, long>> CountInstancesByStatusAsync(InstanceQuery filter, CancellationToken cancellationToken);
    /// <summary>Every signal of an instance read in its tenant, oldest first.</summary>
    Task<IReadOnlyList<SignalMessage>> ListSignalsAsync(WorkflowInstance instance, CancellationToken cancellationToken);
    /// <summary>
    /// Up to <paramref name="limit"/> signals of an instance read in its tenant after <paramref name="after"/> (from the
    /// oldest when null), oldest first.
    /// </summary>
    Task<KeysetPage<SignalMessage>> ListSignalsAsync(WorkflowInstance instance, SignalPosition? after, int limit, CancellationToken cancellationToken);
    /// <summary>Signals across instances, e.g. the claims a node holds (operators' view of the queue).</summary>
    Task<Page<SignalMessage>> QuerySignalsAsync(SignalQuery query, CancellationToken cancellationToken);
    Task<Page<SignalMessage>> ListDeadLettersAsync(string tenant, int offset, int limit, CancellationToken cancellationToken);
}
