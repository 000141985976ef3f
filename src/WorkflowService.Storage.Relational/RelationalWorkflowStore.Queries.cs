using Microsoft.EntityFrameworkCore;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.Relational;

/// <summary>Operators' lists and queries (<see cref="IOperatorQueries"/>) on the store's own database, and the reading helpers they share with the other facets.</summary>
public sealed partial class RelationalWorkflowStore : IOperatorQueries
{
    private RelationalOperatorQueries Queries => field ??= new RelationalOperatorQueries(contexts);

    public Task<Page<WorkflowInstance>> QueryInstancesAsync(InstanceQuery query, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(query);
        return query.Searches ? SearchInstancesAsync(query, cancellationToken) : Queries.QueryInstancesAsync(query, cancellationToken);
    }

    public Task<IReadOnlyDictionary<InstanceStatus, long>> CountInstancesByStatusAsync(CancellationToken cancellationToken) =>
        Queries.CountInstancesByStatusAsync(cancellationToken);

    public Task<IReadOnlyDictionary<InstanceStatus, long>> CountInstancesByStatusAsync(InstanceQuery filter, CancellationToken cancellationToken) =>
        Queries.CountInstancesByStatusAsync(filter, cancellationToken);

    public Task<IReadOnlyList<SignalMessage>> ListSignalsAsync(WorkflowInstance instance, CancellationToken cancellationToken) =>
        Queries.ListSignalsAsync(instance, cancellationToken);

    public Task<KeysetPage<SignalMessage>> ListSignalsAsync(WorkflowInstance instance, SignalPosition? after, int limit, CancellationToken cancellationToken) =>
        Queries.ListSignalsAsync(instance, after, limit, cancellationToken);

    public Task<Page<SignalMessage>> QuerySignalsAsync(SignalQuery query, CancellationToken cancellationToken) =>
        Queries.QuerySignalsAsync(query, cancellationToken);

    public Task<Page<SignalMessage>> ListDeadLettersAsync(string tenant, int offset, int limit, CancellationToken cancellationToken) =>
        Queries.ListDeadLettersAsync(tenant, offset, limit, cancellationToken);

    /// <summary>
    /// An instance's signals after <paramref name="after"/> in the ledger's order: a seek on the (instance_id, created_at,
    /// id) index, which also gives the order (no sort).
    /// </summary>
    internal static IQueryable<SignalMessage> SignalLedger(WorkflowDbContext db, Guid instanceId, SignalPosition? after)
    {
        var q = db.Signals.AsNoTracking().Where(s => s.InstanceId == instanceId);
        if (after is { } position)
        {
            // created_at >= at on its own is the index condition the seek starts from; the rest only sorts out the few
            // signals of that very instant (an OR alone would scan the instance's ledger from its start).
            var (at, id) = (position.CreatedAt, position.Id);
            q = q.Where(s => s.CreatedAt >= at && (s.CreatedAt > at || s.Id.CompareTo(id) > 0));
        }

        return q.OrderBy(s => s.CreatedAt).ThenBy(s => s.Id);
    }

    /// <summary>The page of <paramref name="read"/>, up to limit + 1 items read: whether the last one is there says whether more follow.</summary>
    internal static KeysetPage<T> Keyset<T>(List<T> read, int total, int limit) =>
        read.Count > limit ? new KeysetPage<T>(read[..limit], total, true) : new KeysetPage<T>(read, total, false);

    /// <summary>
    /// The signals of <paramref name="tenant"/>: a signal is its instance's tenant's; one whose instance does not exist (it
    /// can only be dead-lettered) is the default tenant's to see.
    /// </summary>
    internal static IQueryable<SignalMessage> SignalsOf(WorkflowDbContext db, string tenant) =>
        db.Signals.AsNoTracking().Where(s => db.Instances.Any(i => i.Id == s.InstanceId && i.Tenant == tenant)
                                             || (tenant == "" && !db.Instances.Any(i => i.Id == s.InstanceId)));
}
