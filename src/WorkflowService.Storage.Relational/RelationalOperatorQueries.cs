using Microsoft.EntityFrameworkCore;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.Relational;

/// <summary>
/// Operators' lists and queries (<see cref="IOperatorQueries"/>) on the contexts given: the store's own, or those of a
/// read-only server (a standby) where the backend is configured with one for reads that may be stale. A list filtered or
/// sorted by search attributes goes to <paramref name="searches"/> (the primary's store, which knows the tenant's slots).
/// </summary>
internal sealed class RelationalOperatorQueries(IDbContextFactory<WorkflowDbContext> contexts, IOperatorQueries? searches = null) : IOperatorQueries
{
    public async Task<Page<WorkflowInstance>> QueryInstancesAsync(InstanceQuery query, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(query);
        if (query.Searches && searches is not null)
        {
            return await searches.QueryInstancesAsync(query, cancellationToken).ConfigureAwait(false);
        }

        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var q = Filter(db.Instances.AsNoTracking(), query);
        if (query.Status is { } status) q = q.Where(i => i.Status == status);
        var total = await q.CountAsync(cancellationToken).ConfigureAwait(false);
        if (query.After is { } after)
        {
            // The rows after the position in the list's order (newest first, then id): the index on created_at serves it.
            var (at, id) = (after.CreatedAt, after.Id);
            q = q.Where(i => i.CreatedAt < at || (i.CreatedAt == at && i.Id.CompareTo(id) > 0));
        }

        var items = await q.OrderByDescending(i => i.CreatedAt).ThenBy(i => i.Id).Skip(query.Offset).Take(query.Limit)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        return new Page<WorkflowInstance>(items, total, query.Offset, query.Limit);
    }

    public async Task<IReadOnlyDictionary<InstanceStatus, long>> CountInstancesByStatusAsync(CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var counts = await db.Instances.AsNoTracking().GroupBy(i => i.Status).Select(g => new { Status = g.Key, Count = g.LongCount() })
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        return counts.ToDictionary(c => c.Status, c => c.Count);
    }

    public async Task<IReadOnlyDictionary<InstanceStatus, long>> CountInstancesByStatusAsync(InstanceQuery filter, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var counts = await Filter(db.Instances.AsNoTracking(), filter).GroupBy(i => i.Status).Select(g => new { Status = g.Key, Count = g.LongCount() })
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        return counts.ToDictionary(c => c.Status, c => c.Count);
    }

    /// <summary>The query's tenant and filters, all but its status.</summary>
    private static IQueryable<WorkflowInstance> Filter(IQueryable<WorkflowInstance> instances, InstanceQuery query)
    {
        var q = instances.Where(i => i.Tenant == query.Tenant);
        if (query.DefinitionName is not null) q = q.Where(i => i.DefinitionName == query.DefinitionName);
        if (query.DefinitionVersion is { } version) q = q.Where(i => i.DefinitionVersion == version);
        if (query.BusinessKey is not null) q = q.Where(i => i.BusinessKey == query.BusinessKey);
        if (query.CreatedFrom is { } from) q = q.Where(i => i.CreatedAt >= from);
        if (query.CreatedTo is { } to) q = q.Where(i => i.CreatedAt < to);
        if (query.ParentId is { } parent) q = q.Where(i => i.ParentInstanceId == parent);
        return q;
    }

    public async Task<IReadOnlyList<SignalMessage>> ListSignalsAsync(WorkflowInstance instance, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(instance);
        var instanceId = instance.Id;
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        return await db.Signals.AsNoTracking().Where(s => s.InstanceId == instanceId)
            .OrderBy(s => s.CreatedAt).ThenBy(s => s.Id).ToListAsync(cancellationToken).ConfigureAwait(false);
    }

    public async Task<KeysetPage<SignalMessage>> ListSignalsAsync(WorkflowInstance instance, SignalPosition? after, int limit, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(instance);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        var instanceId = instance.Id;
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var total = await db.Signals.CountAsync(s => s.InstanceId == instanceId, cancellationToken).ConfigureAwait(false);
        var items = await RelationalWorkflowStore.SignalLedger(db, instanceId, after).Take(limit + 1).ToListAsync(cancellationToken).ConfigureAwait(false);
        return RelationalWorkflowStore.Keyset(items, total, limit);
    }

    public Task<Page<SignalMessage>> ListDeadLettersAsync(string tenant, int offset, int limit, CancellationToken cancellationToken) =>
        QuerySignalsAsync(new SignalQuery(SignalStatus.DeadLettered, Offset: offset, Limit: limit, Tenant: tenant), cancellationToken);

    public async Task<Page<SignalMessage>> QuerySignalsAsync(SignalQuery query, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var q = RelationalWorkflowStore.SignalsOf(db, query.Tenant);
        if (query.Status is { } status) q = q.Where(s => s.Status == status);
        if (query.ClaimedBy is not null) q = q.Where(s => s.LeaseOwner == query.ClaimedBy);
        if (query.Name is not null) q = q.Where(s => s.Name == query.Name);
        var total = await q.CountAsync(cancellationToken).ConfigureAwait(false);
        var items = await q.OrderBy(s => s.CreatedAt).ThenBy(s => s.Id).Skip(query.Offset).Take(query.Limit)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        return new Page<SignalMessage>(items, total, query.Offset, query.Limit);
    }
}
