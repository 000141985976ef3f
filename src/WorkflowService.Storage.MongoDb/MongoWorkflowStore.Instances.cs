using MongoDB.Bson;
using MongoDB.Driver;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.MongoDb;

/// <summary>Instances, their wait-point commits and history (<see cref="IInstanceStore"/>).</summary>
public sealed partial class MongoWorkflowStore : IInstanceStore
{
    public async Task CreateInstanceAsync(WaitPointCommit commit, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(commit);
        try
        {
            await CommitAsync(commit, cancellationToken).ConfigureAwait(false);
        }
        catch (MongoException e) when (IsDuplicateKey(e))
        {
            throw new DuplicateInstanceException(commit.Instance.IdempotencyKey is { } key
                ? $"idempotency key '{key}'"
                : $"business key '{commit.Instance.BusinessKey}' of '{commit.Instance.DefinitionName}'");
        }
    }

    /// <summary>
    /// Not yet: the check that no signal of the instance is due would be one more read in the transaction, not run
    /// against a server anywhere so far. Signals are queued on this store, as before.
    /// </summary>
    public bool GuardsDueSignals => false;

    /// <summary>A wait point, committed through the group commit (alone when nothing else is queued).</summary>
    public Task CommitAsync(WaitPointCommit commit, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(commit);
        return commit.Instance.SearchAttributes is null ? _group.CommitAsync(commit, cancellationToken) : CommitWithSearchAsync(commit, cancellationToken);
    }

    /// <summary>A commit that writes search attribute values: the document's search fields are made first (their slots cached per tenant).</summary>
    private async Task CommitWithSearchAsync(WaitPointCommit commit, CancellationToken cancellationToken)
    {
        var instance = commit.Instance;
        var declared = await SearchSlotsAsync(instance.Tenant, instance.SearchAttributes!.Select(v => v.Name), cancellationToken).ConfigureAwait(false);
        instance.StoreSearchValues = SearchFields.Document(instance.StoreSearchValues as BsonDocument, instance.SearchAttributes!, declared);
        await _group.CommitAsync(commit, cancellationToken).ConfigureAwait(false);
    }

    // Transaction boundary: one wait point. The instance (checked against the version read before the run), its history,
    // the signals and tasks the run created and the fate of the signals it consumed are written together or not at all:
    // a crash between them would otherwise lose a signal that was consumed, or apply it twice.
    private Task<bool> CommitOneAsync(WaitPointCommit commit, CancellationToken cancellationToken) =>
        InTransactionAsync(async (session, ct) =>
        {
            var writes = new WaitPointWrites();
            writes.Add(commit, NowMs(), Now().UtcDateTime);
            switch (await WriteAsync(session, writes, ct).ConfigureAwait(false))
            {
                case WriteRejection.StaleInstance:
                    throw new ConcurrencyConflictException(commit.Instance.Id);
                case WriteRejection.LeaseLost:
                    throw new LeaseLostException(await FindLostLeaseAsync(session, writes, ct).ConfigureAwait(false));
                default:
                    return true;
            }
        }, cancellationToken);

    // Transaction boundary: several wait points of different callers (group commit), for the same reason as one, all
    // together: either every one of them is written, or none (GroupNotAppliedException, and each is then committed alone).
    private async Task<bool> CommitGroupAsync(IReadOnlyList<WaitPointCommit> commits, CancellationToken cancellationToken)
    {
        try
        {
            return await InTransactionAsync(async (session, ct) =>
            {
                var writes = new WaitPointWrites();
                var nowMs = NowMs();
                var handledAt = Now().UtcDateTime;
                foreach (var commit in commits)
                {
                    writes.Add(commit, nowMs, handledAt);
                }

                try
                {
                    if (await WriteAsync(session, writes, ct).ConfigureAwait(false) is { } rejected)
                    {
                        throw new GroupNotAppliedException($"a wait point of the group would not commit ({rejected})");
                    }
                }
                catch (Exception e) when (e is not GroupNotAppliedException and not OperationCanceledException && !IsUnavailable(e))
                {
                    // Something one wait point brought (a key another instance holds, a document too large): that wait
                    // point alone will meet it. The store being out of reach is everyone's, and a transient conflict is
                    // the transaction loop's to run again.
                    throw new GroupNotAppliedException("a wait point of the group would not commit", e);
                }

                return true;
            }, cancellationToken).ConfigureAwait(false);
        }
        catch (MongoException e) when (e.HasErrorLabel("TransientTransactionError"))
        {
            // Still conflicting after the transaction's retries (the label says nothing of it was committed): a large group
            // meets more concurrent writers than each of its wait points would alone, so each is committed alone.
            throw new GroupNotAppliedException("the group's transaction kept conflicting with other writers", e);
        }
    }

    /// <summary>Why a wait point's writes stopped short (its transaction is then aborted, nothing of it written).</summary>
    private enum WriteRejection
    {
        /// <summary>The instance moved on since it was read (another writer committed first).</summary>
        StaleInstance,

        /// <summary>A consumed signal's lease is no longer this claim's.</summary>
        LeaseLost,
    }

    /// <summary>
    /// Runs <paramref name="writes"/> in the session's transaction, one round trip per kind of write whatever the number of
    /// wait points; stops at the first check that fails. A repeated unique key of a new instance throws the driver's error.
    /// </summary>
    private async Task<WriteRejection?> WriteAsync(IClientSessionHandle session, WaitPointWrites writes, CancellationToken cancellationToken)
    {
        var ordered = new BulkWriteOptions { IsOrdered = true };
        if (writes.NewInstances.Count > 0)
        {
            await _instances.InsertManyAsync(session, writes.NewInstances, cancellationToken: cancellationToken).ConfigureAwait(false);
        }

        if (writes.Replacements.Count > 0
            && (await _instances.BulkWriteAsync(session, writes.Replacements, ordered, cancellationToken).ConfigureAwait(false)).MatchedCount
            != writes.Replacements.Count)
        {
            return WriteRejection.StaleInstance;
        }

        try
        {
            if (writes.History.Count > 0)
            {
                await _history.InsertManyAsync(session, writes.History, cancellationToken: cancellationToken).ConfigureAwait(false);
            }
        }
        catch (MongoException e) when (IsDuplicateKey(e) && writes.Replacements.Count > 0)
        {
            // Two writers from the same version append history with the same sequence numbers: the loser read a stale
            // instance. (A new instance's history cannot repeat one: its start fails on its own keys first.)
            return WriteRejection.StaleInstance;
        }

        if (writes.NewSignals.Count > 0)
        {
            await _signals.InsertManyAsync(session, writes.NewSignals, cancellationToken: cancellationToken).ConfigureAwait(false);
        }

        if (writes.NewTasks.Count > 0)
        {
            await _tasks.InsertManyAsync(session, writes.NewTasks, cancellationToken: cancellationToken).ConfigureAwait(false);
        }

        if (writes.NewDeliveries.Count > 0)
        {
            await _deliveries.InsertManyAsync(session, writes.NewDeliveries, cancellationToken: cancellationToken).ConfigureAwait(false);
        }

        if (writes.LeasedSettlements.Count > 0
            && (await _signals.BulkWriteAsync(session, writes.LeasedSettlements, ordered, cancellationToken).ConfigureAwait(false)).MatchedCount
            != writes.LeasedSettlements.Count)
        {
            return WriteRejection.LeaseLost;
        }

        if (writes.SignalUpdates.Count > 0)
        {
            await _signals.BulkWriteAsync(session, writes.SignalUpdates, ordered, cancellationToken).ConfigureAwait(false);
        }

        if (writes.TaskUpdates.Count > 0)
        {
            await _tasks.BulkWriteAsync(session, writes.TaskUpdates, ordered, cancellationToken).ConfigureAwait(false);
        }

        return null;
    }

    /// <summary>The first consumed signal whose lease is no longer the one the wait point holds (read in the same transaction).</summary>
    private async Task<Guid> FindLostLeaseAsync(IClientSessionHandle session, WaitPointWrites writes, CancellationToken cancellationToken)
    {
        foreach (var (signalId, leaseToken) in writes.Leases)
        {
            var held = await _signals.Find(session, SignalFilter.Eq(s => s.Id, signalId) & SignalFilter.Eq(s => s.LeaseToken, leaseToken))
                .AnyAsync(cancellationToken).ConfigureAwait(false);
            if (!held)
            {
                return signalId;
            }
        }

        return writes.Leases[0].SignalId;
    }

    public async Task<WorkflowInstance?> GetInstanceAsync(string tenant, Guid id, CancellationToken cancellationToken)
    {
        var found = await _instances.Find(i => i.Id == id && i.Tenant == tenant).FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
        return found?.ToModel();
    }

    public async Task<WorkflowInstance?> GetInstanceForEngineAsync(Guid id, CancellationToken cancellationToken)
    {
        var found = await _instances.Find(i => i.Id == id).FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
        return found?.ToModel();
    }

    public async Task<IReadOnlyList<WorkflowInstance>> GetInstancesAsync(IReadOnlyCollection<Guid> ids, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(ids);
        if (ids.Count == 0)
        {
            return [];
        }

        var found = await _instances.Find(Builders<InstanceDocument>.Filter.In(i => i.Id, ids)).ToListAsync(cancellationToken).ConfigureAwait(false);
        return found.ConvertAll(i => i.ToModel());
    }

    public async Task<Guid?> FindNewestInstanceIdAsync(string tenant, string definitionName, string businessKey, CancellationToken cancellationToken)
    {
        // The tenant_definition_businessKeys index holds every instance with a key; the few with this one are sorted here.
        var newest = await _instances.Find(InstanceFilter.Eq(i => i.Tenant, tenant) & InstanceFilter.Eq(i => i.DefinitionName, definitionName)
                & InstanceFilter.Eq(i => i.BusinessKey, businessKey) & InstanceFilter.Type(i => i.BusinessKey, BsonType.String))
            .SortByDescending(i => i.CreatedAt).Limit(1).FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
        return newest?.Id;
    }

    public async Task<WorkflowInstance?> FindInstanceAsync(string tenant, string? idempotencyKey, string definitionName, string? businessKey,
        CancellationToken cancellationToken)
    {
        // Each key's index is partial (instances without the key are not in it): the filter names the key's type as well,
        // which the query planner needs to prove that the index holds every match (an equality alone does not tell it).
        if (idempotencyKey is not null)
        {
            var byKey = await _instances.Find(InstanceFilter.Eq(i => i.Tenant, tenant) & InstanceFilter.Eq(i => i.IdempotencyKey, idempotencyKey)
                    & InstanceFilter.Type(i => i.IdempotencyKey, BsonType.String))
                .FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
            if (byKey is not null)
            {
                return byKey.ToModel();
            }
        }

        if (businessKey is not null)
        {
            var byBusinessKey = await _instances.Find(InstanceFilter.Eq(i => i.Tenant, tenant) & InstanceFilter.Eq(i => i.DefinitionName, definitionName)
                    & InstanceFilter.Eq(i => i.OpenBusinessKey, businessKey) & InstanceFilter.Type(i => i.OpenBusinessKey, BsonType.String))
                .FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
            return byBusinessKey?.ToModel();
        }

        return null;
    }

    public async Task<IReadOnlyList<HistoryEvent>> GetHistoryAsync(WorkflowInstance instance, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(instance);
        var instanceId = instance.Id;
        var events = await _history.Find(h => h.InstanceId == instanceId).SortBy(h => h.Sequence)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        return events.ConvertAll(h => h.ToModel());
    }

    public async Task<KeysetPage<HistoryEvent>> GetHistoryAsync(WorkflowInstance instance, int? afterSequence, int limit, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(instance);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        var total = instance.HistoryLength;
        // One document per event: the (instanceId, sequence) index seeks to the position and reads the page in order.
        var filter = Builders<HistoryDocument>.Filter.Eq(h => h.InstanceId, instance.Id);
        if (afterSequence is { } after)
        {
            filter &= Builders<HistoryDocument>.Filter.Gt(h => h.Sequence, after);
        }

        var events = await _history.Find(filter).SortBy(h => h.Sequence).Limit(limit + 1).ToListAsync(cancellationToken).ConfigureAwait(false);
        return Keyset(events.ConvertAll(h => h.ToModel()), total, limit);
    }
}
