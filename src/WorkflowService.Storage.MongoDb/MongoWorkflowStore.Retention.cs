using MongoDB.Bson;
using MongoDB.Driver;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.MongoDb;

/// <summary>
/// Ended instances deleted after their retention period (<see cref="IRetentionStore"/>), and the named leases that let one
/// node at a time run the job. Rare, batched work.
/// </summary>
public sealed partial class MongoWorkflowStore : IRetentionStore
{
    private static readonly string[] EndedStatuses =
        [nameof(InstanceStatus.Completed), nameof(InstanceStatus.Failed), nameof(InstanceStatus.Cancelled)];

    // One document: an upsert that matches only while the lease is this owner's or has run out. When another owner's
    // lease runs, the filter misses, the upsert tries to insert the same _id, and the unique key refuses it: not taken.
    public async Task<bool> TryTakeLeaseAsync(string name, string owner, TimeSpan duration, CancellationToken cancellationToken)
    {
        var now = NowMs();
        var filter = Builders<LeaseDocument>.Filter;
        try
        {
            await _leases.UpdateOneAsync(
                filter.Eq(l => l.Name, name) & (filter.Eq(l => l.Owner, owner) | filter.Lt(l => l.UntilMs, now)),
                Builders<LeaseDocument>.Update.Set(l => l.Owner, owner).Set(l => l.UntilMs, now + (long)duration.TotalMilliseconds),
                new UpdateOptions { IsUpsert = true }, cancellationToken).ConfigureAwait(false);
            return true;
        }
        catch (MongoException e) when (IsDuplicateKey(e))
        {
            return false;
        }
    }

    public Task ReleaseLeaseAsync(string name, string owner, CancellationToken cancellationToken) =>
        _leases.DeleteOneAsync(l => l.Name == name && l.Owner == owner, cancellationToken);

    public async Task<IReadOnlyList<Guid>> FindExpiredAsync(RetentionScope scope, int limit, CancellationToken cancellationToken) =>
        (await _instances.Find(Expired(scope)).SortBy(i => i.CompletedAt).Limit(limit).Project(i => new { i.Id })
            .ToListAsync(cancellationToken).ConfigureAwait(false)).ConvertAll(i => i.Id);

    public Task<long> CountExpiredAsync(RetentionScope scope, CancellationToken cancellationToken) =>
        _instances.CountDocumentsAsync(Expired(scope), cancellationToken: cancellationToken);

    /// <summary>
    /// The ended instances of <paramref name="scope"/>: found through the partial index on completedAt (open instances have
    /// none), whose filter (completedAt is a date) the query repeats so that the planner may use it.
    /// </summary>
    private static FilterDefinition<InstanceDocument> Expired(RetentionScope scope)
    {
        ArgumentNullException.ThrowIfNull(scope);
        var filter = InstanceFilter.In(i => i.Status, EndedStatuses)
                     & InstanceFilter.Type(i => i.CompletedAt, BsonType.DateTime)
                     & InstanceFilter.Lt(i => i.CompletedAt, scope.EndedBefore);
        if (scope.Definition is { } definition)
        {
            filter &= InstanceFilter.Eq(i => i.DefinitionName, definition);
        }
        else if (scope.ExceptDefinitions.Count > 0)
        {
            filter &= InstanceFilter.Nin(i => i.DefinitionName, scope.ExceptDefinitions);
        }

        return filter;
    }

    public async Task<IReadOnlyList<ArchivedInstance>> ReadForArchiveAsync(IReadOnlyList<Guid> instanceIds, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(instanceIds);
        var instances = await _instances.Find(InstanceFilter.In(i => i.Id, instanceIds)).ToListAsync(cancellationToken).ConfigureAwait(false);
        var history = await _history.Find(Builders<HistoryDocument>.Filter.In(h => h.InstanceId, instanceIds)).SortBy(h => h.Sequence)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        var signals = await _signals.Find(SignalFilter.In(s => s.InstanceId, instanceIds)).SortBy(s => s.CreatedAt)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        var tasks = await _tasks.Find(TaskFilter.In(t => t.InstanceId, instanceIds)).SortBy(t => t.CreatedAt)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        var deliveries = await _deliveries.Find(DeliveryFilter.In(d => d.InstanceId, instanceIds)).SortBy(d => d.Sequence)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        var historyOf = history.ToLookup(h => h.InstanceId);
        var signalsOf = signals.ToLookup(s => s.InstanceId);
        var tasksOf = tasks.ToLookup(t => t.InstanceId);
        var deliveriesOf = deliveries.ToLookup(d => d.InstanceId);
        return instances.OrderBy(i => i.CompletedAt)
            .Select(i => new ArchivedInstance(i.ToModel(),
                historyOf[i.Id].Select(h => h.ToModel()).ToList(),
                signalsOf[i.Id].Select(s => s.ToModel()).ToList(),
                tasksOf[i.Id].Select(t => t.ToModel()).ToList(),
                deliveriesOf[i.Id].Select(d => d.ToModel()).ToList()))
            .ToList();
    }

    // Transaction boundary: one batch of ended instances with everything that belongs to them. Deleted together, an
    // instance never loses its history while it can still be read, and no signal or task outlives its instance. The
    // retention job bounds the batch, which keeps the transaction well inside the server's 60 s transaction lifetime.
    public Task<PurgedRows> DeleteEndedAsync(IReadOnlyList<Guid> instanceIds, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(instanceIds);
        return InTransactionAsync(async (session, ct) =>
        {
            // Ended is final: an instance found ended here stays ended, so its documents can go in any order within the transaction.
            var ended = await _instances.Find(session, InstanceFilter.In(i => i.Id, instanceIds) & InstanceFilter.In(i => i.Status, EndedStatuses))
                .Project(i => new { i.Id }).ToListAsync(ct).ConfigureAwait(false);
            if (ended.Count == 0)
            {
                return default(PurgedRows);
            }

            var ids = ended.ConvertAll(i => i.Id);
            var history = await _history.DeleteManyAsync(session, Builders<HistoryDocument>.Filter.In(h => h.InstanceId, ids), cancellationToken: ct).ConfigureAwait(false);
            var signals = await _signals.DeleteManyAsync(session, SignalFilter.In(s => s.InstanceId, ids), cancellationToken: ct).ConfigureAwait(false);
            var tasks = await _tasks.DeleteManyAsync(session, TaskFilter.In(t => t.InstanceId, ids), cancellationToken: ct).ConfigureAwait(false);
            // Dead-lettered ones too: nothing is left to replay them for. Through the instanceId index (schema step 5).
            var deliveries = await _deliveries.DeleteManyAsync(session, DeliveryFilter.In(d => d.InstanceId, ids), cancellationToken: ct).ConfigureAwait(false);
            var instances = await _instances.DeleteManyAsync(session, InstanceFilter.In(i => i.Id, ids), cancellationToken: ct).ConfigureAwait(false);
            return new PurgedRows((int)instances.DeletedCount, (int)history.DeletedCount, (int)signals.DeletedCount, (int)tasks.DeletedCount,
                (int)deliveries.DeletedCount);
        }, cancellationToken);
    }

    // The oldest first, through the status_deliveredAt index (schema step 5); deleteMany has no limit, so the batch's ids
    // are read first. A delivery settles once: what is found delivered is not changed by a dispatcher meanwhile.
    public async Task<int> DeleteDeliveredAsync(DateTime deliveredBefore, int limit, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        var due = await _deliveries.Find(Delivered(deliveredBefore)).SortBy(d => d.DeliveredAt).Limit(limit).Project(d => d.Id)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        if (due.Count == 0)
        {
            return 0;
        }

        var deleted = await _deliveries.DeleteManyAsync(DeliveryFilter.In(d => d.Id, due) & Delivered(deliveredBefore), cancellationToken)
            .ConfigureAwait(false);
        return (int)deleted.DeletedCount;
    }

    public Task<long> CountDeliveredAsync(DateTime deliveredBefore, CancellationToken cancellationToken) =>
        _deliveries.CountDocumentsAsync(Delivered(deliveredBefore), cancellationToken: cancellationToken);

    private static FilterDefinition<DeliveryDocument> Delivered(DateTime deliveredBefore) =>
        DeliveryFilter.Eq(d => d.Status, Engine.Events.DeliveryStatus.Delivered) & DeliveryFilter.Lt(d => d.DeliveredAt, deliveredBefore);
}
