using Microsoft.EntityFrameworkCore;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.Relational;

/// <summary>
/// Ended instances deleted after their retention period (<see cref="IRetentionStore"/>), and the named leases that let one
/// node at a time run the job. Rare, batched work: EF Core queries, each deletion one short transaction.
/// </summary>
public sealed partial class RelationalWorkflowStore : IRetentionStore
{
    public async Task<bool> TryTakeLeaseAsync(string name, string owner, TimeSpan duration, CancellationToken cancellationToken)
    {
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var now = NowMs();
        // One statement on both databases: insert the lease, or take it over when it is this owner's or has run out.
        var rows = await db.Database.ExecuteSqlRawAsync(
            """
            INSERT INTO wf_leases (name, owner, until_ms) VALUES ({0}, {1}, {2})
            ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, until_ms = excluded.until_ms
             WHERE wf_leases.owner = excluded.owner OR wf_leases.until_ms < {3}
            """,
            [name, owner, now + (long)duration.TotalMilliseconds, now], cancellationToken).ConfigureAwait(false);
        return rows == 1;
    }

    public async Task ReleaseLeaseAsync(string name, string owner, CancellationToken cancellationToken)
    {
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        await db.Leases.Where(l => l.Name == name && l.Owner == owner).ExecuteDeleteAsync(cancellationToken).ConfigureAwait(false);
    }

    public async Task<IReadOnlyList<Guid>> FindExpiredAsync(RetentionScope scope, int limit, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        return await Expired(db, scope).OrderBy(i => i.CompletedAt).Select(i => i.Id).Take(limit)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
    }

    public async Task<long> CountExpiredAsync(RetentionScope scope, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        return await Expired(db, scope).LongCountAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>The ended instances of <paramref name="scope"/>: found through the index on completed_at (open instances have none).</summary>
    private static IQueryable<WorkflowInstance> Expired(WorkflowDbContext db, RetentionScope scope)
    {
        var query = Ended(db.Instances.AsNoTracking()).Where(i => i.CompletedAt != null && i.CompletedAt < scope.EndedBefore);
        if (scope.Definition is { } definition)
        {
            query = query.Where(i => i.DefinitionName == definition);
        }
        else if (scope.ExceptDefinitions.Count > 0)
        {
            var except = scope.ExceptDefinitions.ToList();
            query = query.Where(i => !except.Contains(i.DefinitionName));
        }

        return query;
    }

    private static IQueryable<WorkflowInstance> Ended(IQueryable<WorkflowInstance> instances) =>
        instances.Where(i => i.Status == InstanceStatus.Completed || i.Status == InstanceStatus.Failed || i.Status == InstanceStatus.Cancelled);

    public async Task<IReadOnlyList<ArchivedInstance>> ReadForArchiveAsync(IReadOnlyList<Guid> instanceIds, CancellationToken cancellationToken)
    {
        var ids = instanceIds.ToList();
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        var instances = await db.Instances.AsNoTracking().Where(i => ids.Contains(i.Id)).ToListAsync(cancellationToken).ConfigureAwait(false);
        var history = await HistoryOf(db, h => ids.Contains(h.InstanceId), cancellationToken).ConfigureAwait(false);

        var signals = await db.Signals.AsNoTracking().Where(s => ids.Contains(s.InstanceId)).OrderBy(s => s.CreatedAt)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        var tasks = await db.Tasks.AsNoTracking().Where(t => ids.Contains(t.InstanceId)).OrderBy(t => t.CreatedAt)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        var deliveries = await DeliveriesOf(db, ids).AsNoTracking().OrderBy(d => d.Sequence)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        var historyOf = history.ToLookup(h => h.InstanceId);
        var signalsOf = signals.ToLookup(s => s.InstanceId);
        var tasksOf = tasks.ToLookup(t => t.InstanceId);
        var deliveriesOf = deliveries.ToLookup(d => d.InstanceId);
        return instances.OrderBy(i => i.CompletedAt)
            .Select(i => new ArchivedInstance(i, historyOf[i.Id].ToList(), signalsOf[i.Id].ToList(), tasksOf[i.Id].ToList(), deliveriesOf[i.Id].ToList()))
            .ToList();
    }

    public async Task<PurgedRows> DeleteEndedAsync(IReadOnlyList<Guid> instanceIds, CancellationToken cancellationToken)
    {
        var ids = instanceIds.ToList();
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        return await RetryTransientAsync(async (db, ct) =>
        {
            await using var transaction = await db.Database.BeginTransactionAsync(ct).ConfigureAwait(false);
            // Ended is final: an instance found ended here stays ended, so its rows can go in any order within the transaction.
            var ended = await Ended(db.Instances).Where(i => ids.Contains(i.Id)).Select(i => i.Id).ToListAsync(ct).ConfigureAwait(false);
            if (ended.Count == 0)
            {
                return default;
            }

            var history = await db.History.Where(h => ended.Contains(h.InstanceId)).ExecuteDeleteAsync(ct).ConfigureAwait(false);
            var signals = await db.Signals.Where(s => ended.Contains(s.InstanceId)).ExecuteDeleteAsync(ct).ConfigureAwait(false);
            var tasks = await db.Tasks.Where(t => ended.Contains(t.InstanceId)).ExecuteDeleteAsync(ct).ConfigureAwait(false);
            // Dead-lettered ones too: nothing is left to replay them for. Through ix_wf_deliveries_instance_id. Then their queue
            // rows (those still waiting: a backlog, a retry, a paused subscription), read whole (the queue is the backlog).
            // In this order: a replay committed between the two statements finds no log row, or its queue row is deleted here.
            var deliveries = await DeliveriesOf(db, ended).ExecuteDeleteAsync(ct).ConfigureAwait(false);
            await db.DeliveryQueue.Where(e => ended.Contains(e.InstanceId)).ExecuteDeleteAsync(ct).ConfigureAwait(false);
            var instances = await db.Instances.Where(i => ended.Contains(i.Id)).ExecuteDeleteAsync(ct).ConfigureAwait(false);
            await transaction.CommitAsync(ct).ConfigureAwait(false);
            return new PurgedRows(instances, history, signals, tasks, deliveries);
        }, cancellationToken).ConfigureAwait(false);
    }

    public async Task<int> DeleteDeliveredAsync(DateTime deliveredBefore, int limit, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        using var gate = await dialect.EnterWriteAsync(cancellationToken).ConfigureAwait(false);
        // One statement, the oldest first in the log's order (its primary key; no index reads delivered_at, so that a
        // settlement writes no index: schema 18); a delivery settles once, so what is found delivered here is not changed
        // by a dispatcher meanwhile.
        return await RetryTransientAsync((db, ct) => OldestDelivered(db, deliveredBefore, limit).ExecuteDeleteAsync(ct), cancellationToken)
            .ConfigureAwait(false);
    }

    public async Task<long> CountDeliveredAsync(DateTime deliveredBefore, CancellationToken cancellationToken)
    {
        await using var db = await contexts.CreateDbContextAsync(cancellationToken).ConfigureAwait(false);
        return await Delivered(db, deliveredBefore).LongCountAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <summary>The deliveries of <paramref name="instanceIds"/>, through ix_wf_deliveries_instance_id.</summary>
    internal static IQueryable<Engine.Events.EventDelivery> DeliveriesOf(WorkflowDbContext db, List<Guid> instanceIds) =>
        db.Deliveries.Where(d => instanceIds.Contains(d.InstanceId));

    /// <summary>
    /// At most <paramref name="limit"/> deliveries delivered before <paramref name="deliveredBefore"/>, the oldest first,
    /// through ix_wf_deliveries_id: a delivery's id is a version 7 UUID made when its event was, and one delivered before
    /// the cutoff was made before it, so only ids below the cutoff's are read (not the whole log). No index reads
    /// delivered_at: a settlement writes no index (schema 18).
    /// </summary>
    internal static IQueryable<Engine.Events.EventDelivery> OldestDelivered(WorkflowDbContext db, DateTime deliveredBefore, int limit) =>
        Delivered(db, deliveredBefore).OrderBy(d => d.Id).Take(limit);

    /// <summary>Delivered before <paramref name="deliveredBefore"/>, among the ids made before it.</summary>
    private static IQueryable<Engine.Events.EventDelivery> Delivered(WorkflowDbContext db, DateTime deliveredBefore)
    {
        var madeBefore = IdsMadeBefore(deliveredBefore);
        return db.Deliveries.Where(d => d.Id.CompareTo(madeBefore) < 0 && d.Status == Engine.Events.DeliveryStatus.Delivered && d.DeliveredAt < deliveredBefore);
    }

    /// <summary>The smallest version 7 UUID of <paramref name="instant"/>'s millisecond: every id made earlier sorts below it.</summary>
    internal static Guid IdsMadeBefore(DateTime instant)
    {
        var ms = Math.Max(0, new DateTimeOffset(DateTime.SpecifyKind(instant, DateTimeKind.Utc)).ToUnixTimeMilliseconds());
        var hex = ms.ToString("x12", System.Globalization.CultureInfo.InvariantCulture);
        return Guid.ParseExact($"{hex[..8]}-{hex[8..]}-0000-0000-000000000000", "D");
    }
}
