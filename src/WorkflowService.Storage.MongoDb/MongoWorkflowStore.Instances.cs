using MongoDB.Bson;
using MongoDB.Driver;
using WorkflowService.Engine.Persistence;

namespace WorkflowService.Storage.MongoDb;

/// <summary>Instances, their wait-point commits and history (<see cref="IInstanceStore"/>).</summary>
public sealed partial class MongoWorkflowStore : IInstanceStore
{
    private static readonly string[] OpenSignalStatuses = [nameof(SignalStatus.Pending), nameof(SignalStatus.Parked)];
    private static readonly string[] OpenTaskStatuses = [nameof(HumanTaskStatus.Open), nameof(HumanTaskStatus.Claimed)];

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

    // Transaction boundary: one wait point. The instance (checked against the version read before the run), its history,
    // the signals and tasks the run created and the fate of the signals it consumed are written together or not at all:
    // a crash between them would otherwise lose a signal that was consumed, or apply it twice.
    public Task CommitAsync(WaitPointCommit commit, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(commit);
        return InTransactionAsync(async (session, ct) =>
        {
            await WriteOnceAsync(session, commit, ct).ConfigureAwait(false);
            return true;
        }, cancellationToken);
    }

    private async Task WriteOnceAsync(IClientSessionHandle session, WaitPointCommit commit, CancellationToken cancellationToken)
    {
        var instance = commit.Instance;
        instance.Version = commit.IsNew ? 1 : commit.ExpectedVersion + 1;
        var nowMs = NowMs();
        var handledAt = Now().UtcDateTime;
        var document = InstanceDocument.From(instance);

        if (commit.IsNew)
        {
            // A repeated idempotency or business key fails here on its unique index (DuplicateInstanceException above).
            await _instances.InsertOneAsync(session, document, cancellationToken: cancellationToken).ConfigureAwait(false);
        }
        else
        {
            // The optimistic check: the document is replaced only while it is still at the version read before the run.
            var replaced = await _instances.ReplaceOneAsync(session,
                Builders<InstanceDocument>.Filter.Eq(i => i.Id, instance.Id) & Builders<InstanceDocument>.Filter.Eq(i => i.Version, commit.ExpectedVersion),
                document, cancellationToken: cancellationToken).ConfigureAwait(false);
            if (replaced.MatchedCount != 1)
            {
                throw new ConcurrencyConflictException(instance.Id);
            }
        }

        try
        {
            if (commit.History.Count > 0)
            {
                await _history.InsertManyAsync(session, commit.History.Select(HistoryDocument.From), cancellationToken: cancellationToken).ConfigureAwait(false);
            }
        }
        catch (MongoException e) when (!commit.IsNew && IsDuplicateKey(e))
        {
            // Two writers from the same version append history with the same sequence numbers: the loser read a stale instance.
            throw new ConcurrencyConflictException(instance.Id);
        }

        if (commit.NewSignals.Count > 0)
        {
            await _signals.InsertManyAsync(session, commit.NewSignals.Select(SignalDocument.From), cancellationToken: cancellationToken).ConfigureAwait(false);
        }

        if (commit.NewTasks.Count > 0)
        {
            await _tasks.InsertManyAsync(session, commit.NewTasks.Select(TaskDocument.From), cancellationToken: cancellationToken).ConfigureAwait(false);
        }

        var signals = Builders<SignalDocument>.Filter;
        foreach (var transition in commit.SignalTransitions)
        {
            if (transition.LeaseToken is { } token)
            {
                // A claimed signal: settled only while our lease token is still the document's. The lease owner stays: it
                // tells which node handled it.
                var update = Builders<SignalDocument>.Update
                    .Set(s => s.Status, transition.Status.ToString())
                    .Set(s => s.LeaseUntilMs, null)
                    .Set(s => s.HandledAt, handledAt);
                if (transition.Error is { } error)
                {
                    update = update.Set(s => s.LastError, error);
                }

                var settled = await _signals.UpdateOneAsync(session,
                    signals.Eq(s => s.Id, transition.SignalId) & signals.Eq(s => s.LeaseToken, token),
                    update, cancellationToken: cancellationToken).ConfigureAwait(false);
                if (settled.MatchedCount != 1)
                {
                    throw new LeaseLostException(transition.SignalId);
                }
            }
            else
            {
                // Parked signals consumed by this run, and timers that lost their purpose; never touch a handled one.
                var from = transition.Status == SignalStatus.Cancelled ? SignalStatus.Pending : SignalStatus.Parked;
                var update = Builders<SignalDocument>.Update.Set(s => s.Status, transition.Status.ToString()).Set(s => s.HandledAt, handledAt);
                if (transition.Error is { } error)
                {
                    update = update.Set(s => s.LastError, error);
                }

                await _signals.UpdateOneAsync(session,
                    signals.Eq(s => s.Id, transition.SignalId) & signals.In(s => s.Status, new[] { from.ToString(), nameof(SignalStatus.Parked) }),
                    update, cancellationToken: cancellationToken).ConfigureAwait(false);
            }
        }

        if (commit.RequeueParked)
        {
            // Every parked signal is due again now (or at its own time when that is earlier), unleased.
            await _signals.UpdateManyAsync(session,
                signals.Eq(s => s.InstanceId, instance.Id) & signals.Eq(s => s.Status, nameof(SignalStatus.Parked)),
                Builders<SignalDocument>.Update
                    .Set(s => s.Status, nameof(SignalStatus.Pending))
                    .Min(s => s.DueAtMs, nowMs)
                    .Set(s => s.LeaseOwner, null)
                    .Set(s => s.LeaseUntilMs, null),
                cancellationToken: cancellationToken).ConfigureAwait(false);
        }

        if (commit.CloseOpenWork)
        {
            // The instance ended: its open signals that no live claim holds are closed, the engine's own ("$…") as
            // Cancelled, the others as Unmatched. Two updates, since the status depends on the name.
            var open = signals.Eq(s => s.InstanceId, instance.Id)
                       & signals.In(s => s.Status, OpenSignalStatuses)
                       & (signals.Eq(s => s.LeaseUntilMs, null) | signals.Lt(s => s.LeaseUntilMs, nowMs));
            var system = signals.Regex(s => s.Name, new BsonRegularExpression("^\\" + SignalMessage.SystemPrefix));
            await _signals.UpdateManyAsync(session, open & system,
                Builders<SignalDocument>.Update.Set(s => s.Status, nameof(SignalStatus.Cancelled)).Set(s => s.HandledAt, handledAt),
                cancellationToken: cancellationToken).ConfigureAwait(false);
            await _signals.UpdateManyAsync(session, open & signals.Not(system),
                Builders<SignalDocument>.Update.Set(s => s.Status, nameof(SignalStatus.Unmatched)).Set(s => s.HandledAt, handledAt),
                cancellationToken: cancellationToken).ConfigureAwait(false);
            if (commit.ClosedTasks.Count > 0)
            {
                await _tasks.UpdateManyAsync(session,
                    Builders<TaskDocument>.Filter.In(t => t.Id, commit.ClosedTasks) & Builders<TaskDocument>.Filter.In(t => t.Status, OpenTaskStatuses),
                    Builders<TaskDocument>.Update.Set(t => t.Status, nameof(HumanTaskStatus.Cancelled)),
                    cancellationToken: cancellationToken).ConfigureAwait(false);
            }
        }
    }

    public async Task<WorkflowInstance?> GetInstanceAsync(Guid id, CancellationToken cancellationToken)
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
                    & InstanceFilter.Eq(i => i.BusinessKey, businessKey) & InstanceFilter.Type(i => i.BusinessKey, BsonType.String))
                .FirstOrDefaultAsync(cancellationToken).ConfigureAwait(false);
            return byBusinessKey?.ToModel();
        }

        return null;
    }

    public async Task<IReadOnlyList<HistoryEvent>> GetHistoryAsync(Guid instanceId, CancellationToken cancellationToken)
    {
        var events = await _history.Find(h => h.InstanceId == instanceId).SortBy(h => h.Sequence)
            .ToListAsync(cancellationToken).ConfigureAwait(false);
        return events.ConvertAll(h => h.ToModel());
    }
}
