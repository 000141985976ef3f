using WorkflowService.Engine.Persistence;

namespace WorkflowService.FaultHost;

/// <summary>The instance store with its writes (creating an instance, committing a wait point) failing as the injector decides; reads go through.</summary>
internal sealed class FaultyInstanceStore(IInstanceStore inner, StoreFaultInjector faults) : IInstanceStore
{
    public Task CreateInstanceAsync(WaitPointCommit commit, CancellationToken cancellationToken) =>
        faults.RunAsync(nameof(CreateInstanceAsync), () => inner.CreateInstanceAsync(commit, cancellationToken), cancellationToken);

    public Task CommitAsync(WaitPointCommit commit, CancellationToken cancellationToken) =>
        faults.RunAsync(nameof(CommitAsync), () => inner.CommitAsync(commit, cancellationToken), cancellationToken);

    public Task<WorkflowInstance?> GetInstanceAsync(string tenant, Guid id, CancellationToken cancellationToken) =>
        inner.GetInstanceAsync(tenant, id, cancellationToken);

    public Task<WorkflowInstance?> GetInstanceForEngineAsync(Guid id, CancellationToken cancellationToken) =>
        inner.GetInstanceForEngineAsync(id, cancellationToken);

    public Task<IReadOnlyList<WorkflowInstance>> GetInstancesAsync(IReadOnlyCollection<Guid> ids, CancellationToken cancellationToken) =>
        inner.GetInstancesAsync(ids, cancellationToken);

    public Task<WorkflowInstance?> FindInstanceAsync(string tenant, string? idempotencyKey, string definitionName, string? businessKey, CancellationToken cancellationToken) =>
        inner.FindInstanceAsync(tenant, idempotencyKey, definitionName, businessKey, cancellationToken);

    public Task<Guid?> FindNewestInstanceIdAsync(string tenant, string definitionName, string businessKey, CancellationToken cancellationToken) =>
        inner.FindNewestInstanceIdAsync(tenant, definitionName, businessKey, cancellationToken);

    public Task<IReadOnlyList<HistoryEvent>> GetHistoryAsync(WorkflowInstance instance, CancellationToken cancellationToken) =>
        inner.GetHistoryAsync(instance, cancellationToken);

    public Task<KeysetPage<HistoryEvent>> GetHistoryAsync(WorkflowInstance instance, int? afterSequence, int limit, CancellationToken cancellationToken) =>
        inner.GetHistoryAsync(instance, afterSequence, limit, cancellationToken);

    public bool GuardsDueSignals => inner.GuardsDueSignals;
}
